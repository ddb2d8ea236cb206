import { describe, expect, test } from "bun:test"
import { Effect, Layer } from "effect"
import { DataDir } from "@reins/domain"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { cut, Truncate } from "../src/Truncate.ts"

const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join("\n")

describe("cut", () => {
  test("keeps short output untouched", () => {
    const r = cut("a\nb", "head", 10, 100)
    expect(r).toMatchObject({ kept: "a\nb", truncated: false })
  })
  test("head keeps the first lines, tail the last", () => {
    expect(cut(lines(10), "head", 3, 10_000).kept).toBe("line 1\nline 2\nline 3")
    expect(cut(lines(10), "tail", 3, 10_000).kept).toBe("line 8\nline 9\nline 10")
  })
  test("the byte limit cuts on a line boundary", () => {
    const r = cut(lines(100), "head", 1000, 20)
    expect(r.kept).toBe("line 1\nline 2")
    expect(r.droppedLines).toBe(98)
  })
  test("multi-byte characters count as bytes", () => {
    const r = cut("ééééé\nabc", "head", 10, 8)
    expect(r.truncated).toBe(true)
    expect(r.kept).toBe("")
  })
})

describe("Truncate", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "reins-trunc-"))
  const layer = Truncate.layer.pipe(Layer.provide(Layer.succeed(DataDir, dir)))
  const run = <A, E>(e: Effect.Effect<A, E, Truncate>) => Effect.runPromise(Effect.provide(e, layer))

  test("spills the full output and names the file in the notice", async () => {
    const text = lines(3000)
    const r = await run(Effect.gen(function* () { return yield* (yield* Truncate).apply(text, { direction: "tail", sessionID: "ses_1", callID: "call_1" }) }))
    expect(r.truncated).toBe(true)
    expect(r.outputPath).toBeDefined()
    expect(fs.readFileSync(r.outputPath!, "utf8")).toBe(text)
    expect(r.content).toContain(r.outputPath!)
    expect(r.content).toContain("…1000 lines truncated…")
    expect(r.content.endsWith("line 3000")).toBe(true)
    expect(r.content).toContain("3000 lines")
  })
  test("respects per-call limits", async () => {
    const r = await run(Effect.gen(function* () { return yield* (yield* Truncate).apply(lines(10), { direction: "head", sessionID: "s", callID: "c", maxLines: 2 }) }))
    expect(r.content.startsWith("line 1\nline 2\n")).toBe(true)
    expect(r.totalLines).toBe(10)
  })
})
