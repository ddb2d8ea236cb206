import { describe, expect, test } from "bun:test"
import { guardStreams } from "../src/Framing.ts"

/** Feeds `chunks` through the guard (limit `max`); the lines the SDK would see, what was answered, what was refused. */
const feed = (chunks: ReadonlyArray<string>, max: number) =>
  feedBytes(
    chunks.map((c) => new TextEncoder().encode(c)),
    max
  )

const feedBytes = async (chunks: ReadonlyArray<Uint8Array>, max: number) => {
  const written: Array<string> = []
  const refused: Array<[number, string | undefined]> = []
  const input = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const c of chunks) controller.enqueue(c)
      controller.close()
    }
  })
  const output = new WritableStream<Uint8Array>({ write: (b) => void written.push(new TextDecoder().decode(b)) })
  const guarded = guardStreams(input, output, (bytes, method) => refused.push([bytes, method]), max)
  let passed = ""
  const reader = guarded.input.getReader()
  for (;;) {
    const { value, done } = await reader.read()
    if (done) break
    passed += new TextDecoder().decode(value)
  }
  await guarded.output.getWriter().close()
  return { passed, written: written.join(""), refused }
}

describe("the ACP input guard", () => {
  test("an editor's answer over the limit (a huge file read for us) becomes an error answer to our request, never sent to the editor", async () => {
    const response = `{"jsonrpc":"2.0","id":12,"result":{"content":"${"z".repeat(300)}"}}\n`
    const out = await feed([response], 200)
    expect(out.written).toBe("")
    const [line] = out.passed.split("\n")
    expect(JSON.parse(line!)).toMatchObject({ id: 12, error: { code: -32600, message: expect.stringContaining("over the") } })
  })

  test("a multi-byte character split between chunks in the first bytes: still refused with its id and method", async () => {
    const message = `{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{"t":"é${"x".repeat(300)}"}}\n`
    const bytes = new TextEncoder().encode(message)
    const at = bytes.indexOf(0xc3) + 1
    const out = await feedBytes([bytes.subarray(0, at), bytes.subarray(at)], 200)
    expect(out.refused).toEqual([[bytes.length, "session/prompt"]])
    expect(JSON.parse(out.written.trim()).id).toBe(5)
  })

  const small = '{"jsonrpc":"2.0","id":1,"method":"a"}\n'
  const big = (id: string, n: number) => `{"jsonrpc":"2.0","id":${id},"method":"session/prompt","params":{"t":"${"x".repeat(n)}"}}\n`
  const cases: ReadonlyArray<[string, ReadonlyArray<string>, string, ReadonlyArray<string>]> = [
    ["lines under the limit pass whole, split anywhere", [small.slice(0, 5), small.slice(5) + small.slice(0, 10), small.slice(10)], small + small, []],
    ["a line over the limit is dropped and answered for its number id", [small, big("7", 300), small], small + small, ["7"]],
    ["a string id is answered too", [big('"abc"', 300)], "", ['"abc"']],
    ["a line over the limit cut across chunks", [big("9", 300).slice(0, 50), big("9", 300).slice(50, 200), big("9", 300).slice(200) + small], small, ["9"]],
    ["a notification over the limit (no id) is refused unanswered", [`{"jsonrpc":"2.0","method":"n","params":{"t":"${"y".repeat(300)}"}}\n`, small], small, []],
    ["a last line over the limit without a newline is refused", [small, big("3", 300).trimEnd()], small, ["3"]],
    ["a last small line without a newline passes", [small, small.trimEnd()], small + small.trimEnd(), []]
  ]
  for (const [name, chunks, passed, answered] of cases)
    test(name, async () => {
      const out = await feed(chunks, 200)
      expect(out.passed).toBe(passed)
      const ids = out.written
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => JSON.stringify(JSON.parse(l).id))
      expect(ids).toEqual([...answered])
      if (answered.length > 0) expect(out.written).toContain("over the 0.0 MiB reins acp takes")
      expect(out.refused.length).toBeGreaterThanOrEqual(answered.length)
    })
})
