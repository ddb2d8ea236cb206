import { describe, expect, test } from "bun:test"
import { emptyUsage } from "@reins/domain"
import { estimateMessage, estimateText, isOverflow, reservedTokens, tokenCount, usableTokens } from "../src/index.ts"
import { history } from "./fixtures.ts"

const usage = (u: Partial<typeof emptyUsage> & { total?: number }) => ({ ...emptyUsage, ...u })

describe("overflow (T7)", () => {
  test("SPEC examples", () => {
    expect(isOverflow(usage({ input: 75_000, output: 5_000 }), { context: 100_000, output: 32_000 }, {})).toBe(true)
    expect(isOverflow(usage({ input: 110_000 }), { context: 200_000, output: 32_000 }, {})).toBe(false)
    expect(isOverflow(usage({ input: 60_000, output: 10_000, cacheRead: 10_000 }), { context: 100_000, output: 32_000 }, {})).toBe(true)
  })
  test("the count adds cache reads and writes, or takes the provider's total", () => {
    expect(tokenCount(usage({ input: 1, output: 2, cacheRead: 3, cacheWrite: 4 }))).toBe(10)
    expect(tokenCount(usage({ input: 1, output: 2, total: 50 }))).toBe(50)
    expect(isOverflow(usage({ input: 10, total: 70_000 }), { context: 100_000, output: 32_000 })).toBe(true)
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
  test("without an input limit the usable part is context minus output", () => {
    expect(usableTokens({ context: 100_000, output: 32_000 }, { reserved: 1 })).toBe(68_000)
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
