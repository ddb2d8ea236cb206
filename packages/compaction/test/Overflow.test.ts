import { describe, expect, test } from "bun:test"
import { emptyUsage } from "@reins/domain"
import {
  estimateMessage,
  estimateText,
  inputLimit,
  isOverflow,
  maxOutputTokens,
  reserveProblem,
  reservedTokens,
  tokenCount,
  usableTokens
} from "../src/index.ts"
import { history } from "./fixtures.ts"

const usage = (u: Partial<typeof emptyUsage> & { total?: number }) => ({ ...emptyUsage, ...u })

describe("overflow (T7)", () => {
  test("SPEC examples", () => {
    expect(isOverflow(usage({ input: 75_000, output: 5_000 }), { context: 100_000, output: 32_000 }, {})).toBe(true)
    expect(isOverflow(usage({ input: 110_000 }), { context: 200_000, output: 32_000 }, {})).toBe(false)
    expect(isOverflow(usage({ input: 60_000, output: 10_000, cacheRead: 10_000 }), { context: 100_000, output: 32_000 }, {})).toBe(true)
  })
  test("the count adds cache reads and writes; a provider's total only when the parts are missing", () => {
    expect(tokenCount(usage({ input: 1, output: 2, cacheRead: 3, cacheWrite: 4 }))).toBe(10)
    expect(tokenCount(usage({ input: 1, output: 2, cacheRead: 3, cacheWrite: 4, total: 10 }))).toBe(10)
    expect(tokenCount(usage({ total: 70_000 }))).toBe(70_000)
    expect(isOverflow(usage({ total: 70_000 }), { context: 100_000, output: 32_000 })).toBe(true)
  })
  test("NaN, negative or conflicting usage falls back to the sum of the parts that are numbers", () => {
    const cases: ReadonlyArray<[Partial<typeof emptyUsage> & { total?: number }, number]> = [
      [{ input: 1_000, output: 200, total: 50 }, 1_200], // a total below the sum
      [{ input: 1_000, output: 200, total: 90_000 }, 1_200], // a total above the sum
      [{ input: 1_000, output: 200, total: Number.NaN }, 1_200],
      [{ input: Number.NaN, output: 200, cacheRead: 300 }, 500],
      [{ input: 1_000, output: Number.NaN, total: Number.NaN }, 1_000],
      [{ input: 1_000, output: -5 }, 1_000],
      [{ input: Number.POSITIVE_INFINITY, output: 7 }, 7],
      [{ input: Number.NaN, output: Number.NaN, total: Number.NaN }, 0],
      [{ input: undefined as unknown as number, output: 3 }, 3]
    ]
    for (const [u, expected] of cases) expect(tokenCount(usage(u))).toBe(expected)
    // A NaN count never overflows by accident nor hides an overflow.
    expect(isOverflow(usage({ input: Number.NaN, output: 70_000 }), { context: 100_000, output: 32_000 })).toBe(true)
    expect(isOverflow(usage({ input: Number.NaN, total: Number.NaN }), { context: 100_000, output: 32_000 })).toBe(false)
  })
  test("exactly at the usable limit overflows; one below does not", () => {
    expect(isOverflow(usage({ input: 68_000 }), { context: 100_000, output: 32_000 })).toBe(true)
    expect(isOverflow(usage({ input: 67_999 }), { context: 100_000, output: 32_000 })).toBe(false)
  })
  test("auto: false and an unknown (0) context never overflow", () => {
    expect(isOverflow(usage({ input: 99_000 }), { context: 100_000, output: 32_000 }, { auto: false })).toBe(false)
    expect(isOverflow(usage({ input: 99_000 }), { context: 0, output: 32_000 })).toBe(false)
  })
  test("a separate input limit leaves the reserve: min(20_000, output) or config.reserved", () => {
    const limits = { context: 400_000, input: 272_000, output: 128_000 }
    expect(reservedTokens(limits)).toBe(20_000)
    expect(reservedTokens({ context: 100_000, output: 8_000 })).toBe(8_000)
    expect(usableTokens(limits)).toBe(252_000)
    expect(isOverflow(usage({ input: 252_000 }), limits)).toBe(true)
    expect(isOverflow(usage({ input: 251_000 }), limits)).toBe(false)
    expect(usableTokens(limits, { reserved: 50_000 })).toBe(222_000)
    expect(isOverflow(usage({ input: 230_000 }), limits, { reserved: 50_000 })).toBe(true)
    expect(isOverflow(usage({ input: 230_000 }), limits)).toBe(false)
  })
  test("without an input limit the usable part is the context minus min(output, a third of it), or minus config.reserved", () => {
    expect(usableTokens({ context: 100_000, output: 32_000 })).toBe(68_000)
    expect(usableTokens({ context: 200_000, output: 64_000 })).toBe(136_000)
    expect(usableTokens({ context: 100_000, output: 32_000 }, { reserved: 1 })).toBe(99_999)
  })
  test("a small window keeps room for the conversation even when output is as large as the context or larger", () => {
    // 4k context with an 8k "output": the reserve is a third of the window, not 8k
    expect(reservedTokens({ context: 4_096, output: 8_192 })).toBe(1_365)
    expect(usableTokens({ context: 4_096, output: 8_192 })).toBe(2_731)
    expect(usableTokens({ context: 8_192, output: 8_192 })).toBe(5_462)
    expect(usableTokens({ context: 8_192, output: 1_024 })).toBe(7_168)
    expect(isOverflow(usage({ input: 2_000 }), { context: 4_096, output: 8_192 })).toBe(false)
    expect(isOverflow(usage({ input: 2_731 }), { context: 4_096, output: 8_192 })).toBe(true)
    // a separate input limit smaller than the output
    expect(usableTokens({ context: 8_000, input: 6_000, output: 8_000 })).toBe(4_000)
    expect(inputLimit({ context: 8_000, input: 6_000, output: 8_000 })).toBe(6_000)
  })
  test("a request asks for at most the reserve when the answer shares the context; the model's own limit with a separate input limit", () => {
    const cases: ReadonlyArray<[{ context: number; output: number; input?: number }, { reserved?: number }, number]> = [
      [{ context: 4_096, output: 8_192 }, {}, 1_365], // a third of a small window
      [{ context: 8_192, output: 8_192 }, {}, 2_730],
      [{ context: 32_000, output: 4_000 }, {}, 4_000], // the model's output fits: unchanged
      [{ context: 200_000, output: 64_000 }, {}, 64_000],
      [{ context: 8_192, output: 4_096 }, { reserved: 1_000 }, 1_000], // a configured reserve
      [{ context: 8_192, output: 512 }, { reserved: 1_000 }, 512], // never above the model's limit
      [{ context: 400_000, input: 272_000, output: 128_000 }, {}, 128_000], // output has its own room
      [{ context: 400_000, input: 272_000, output: 128_000 }, { reserved: 10_000 }, 128_000]
    ]
    for (const [limits, config, expected] of cases) expect(maxOutputTokens(limits, config)).toBe(expected)
  })
  test("a configured reserve as large as the input limit is a config problem, said in one line", () => {
    const limits = { context: 4_096, output: 8_192 }
    expect(reserveProblem(limits, { reserved: 4_096 }, "local/small")).toBe(
      '"compaction.reserved" is 4096 tokens but local/small takes at most 4096 input tokens, so nothing would be left for the conversation: ' +
        'set "compaction.reserved" in reins.json below 4096 (or remove it: the default keeps min(output, a third of the window) free).'
    )
    expect(reserveProblem(limits, { reserved: 9_000 }, "local/small")).toContain("below 4096")
    expect(reserveProblem({ context: 400_000, input: 272_000, output: 128_000 }, { reserved: 272_000 }, "openai/gpt-5")).toContain(
      "at most 272000 input tokens"
    )
    expect(reserveProblem(limits, { reserved: 4_095 }, "local/small")).toBeUndefined()
    expect(reserveProblem(limits, {}, "local/small")).toBeUndefined()
    expect(reserveProblem({ context: 0, output: 0 }, { reserved: 10 }, "local/unknown")).toBeUndefined()
  })
})

describe("estimate", () => {
  test("a text costs ceil(chars / 4)", () => {
    expect(estimateText("")).toBe(0)
    expect(estimateText("abcd")).toBe(1)
    expect(estimateText("abcde")).toBe(2)
  })
  test("a pruned output counts as its pruned text, not its stored output", () => {
    const h = history()
    h.assistant({ tools: [{ tool: "bash", output: "x".repeat(40_000), input: {} }] })
    const full = estimateMessage(h.messages[0]!)
    expect(full).toBeGreaterThan(10_000)
    const h2 = history()
    h2.assistant({ tools: [{ tool: "bash", output: "x".repeat(40_000), input: {}, compacted: 5, pruned: "[cleared]" }] })
    expect(estimateMessage(h2.messages[0]!)).toBeLessThan(20)
    const h3 = history()
    h3.assistant({ tools: [{ tool: "bash", output: "x".repeat(40_000), input: {}, compacted: 5 }] })
    expect(estimateMessage(h3.messages[0]!)).toBeLessThan(30)
  })
})
