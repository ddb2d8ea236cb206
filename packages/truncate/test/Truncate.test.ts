import { describe, expect, test } from "bun:test"
import { Effect, Layer } from "effect"
import { DataDir } from "@reins/domain"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { byteLength, countLines, limitsFor, settingsFromConfig, Truncate, TruncateSettings } from "../src/index.ts"

const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join("\n")
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "reins-trunc-"))
const layer = Truncate.layer.pipe(Layer.provide(Layer.succeed(DataDir, dir)))
const run = <A, E>(e: Effect.Effect<A, E, Truncate>) => Effect.runPromise(Effect.provide(e, layer))
const apply = (text: string, options: Parameters<Truncate["Service"]["apply"]>[1]) =>
  run(
    Effect.gen(function* () {
      return yield* (yield* Truncate).apply(text, options)
    })
  )

describe("Truncate.apply", () => {
  test("short output passes untouched and writes nothing", async () => {
    const r = await apply("hello\nworld", { direction: "tail", sessionID: "ses_a", callID: "c0" })
    expect(r).toEqual({ content: "hello\nworld", truncated: false, totalLines: 2, totalBytes: 11 })
    expect(fs.existsSync(path.join(dir, "tool-output", "ses_a", "c0.txt"))).toBe(false)
  })

  test("a cut output is spilled whole; the notice names the file, the totals and what to do", async () => {
    const text = lines(3000)
    const r = await apply(text, { direction: "tail", sessionID: "ses_1", callID: "call/1" })
    expect(r.truncated).toBe(true)
    expect(r.outputPath).toBe(path.join(dir, "tool-output", "ses_1", "call_1.txt"))
    expect(fs.readFileSync(r.outputPath!, "utf8")).toBe(text)
    expect(r.content).toContain(r.outputPath!)
    expect(r.content).toContain(`3000 lines, ${byteLength(text)} bytes`)
    expect(r.content).toContain("Use the read tool with offset/limit, or grep, on that file")
    expect(r.content).toMatch(/…\d+ lines truncated…/)
    expect(r.content.endsWith("line 3000")).toBe(true)
    // the notice is inside the limits too
    expect(countLines(r.content)).toBeLessThanOrEqual(2000)
    expect(byteLength(r.content)).toBeLessThanOrEqual(51_200)
  })

  test("per-call limits override the settings; head keeps the start", async () => {
    const r = await apply(lines(10), { direction: "head", sessionID: "s", callID: "c", maxLines: 5 })
    expect(r.content.startsWith("line 1\nline 2\n")).toBe(true)
    expect(r.content).not.toContain("line 10")
    expect(r.totalLines).toBe(10)
  })

  test("a reduced output spills the original and shows the header first", async () => {
    const original = lines(500)
    const r = await apply("summary: 500 lines", { direction: "tail", sessionID: "s", callID: "red", original, header: "[reduced by x]" })
    expect(r.truncated).toBe(true)
    expect(r.content.split("\n")[0]).toBe("[reduced by x]")
    expect(r.content).toContain("summary: 500 lines")
    expect(r.content).toContain("a reduced view is shown")
    expect(fs.readFileSync(r.outputPath!, "utf8")).toBe(original)
  })

  test("a full disk is a clear error, not a crash", async () => {
    const spill = path.join(dir, "tool-output", "s")
    fs.mkdirSync(spill, { recursive: true })
    fs.symlinkSync("/dev/full", path.join(spill, "full.txt"))
    const exit = await Effect.runPromiseExit(
      Effect.provide(
        Effect.gen(function* () {
          return yield* (yield* Truncate).apply(lines(5000), { direction: "tail", sessionID: "s", callID: "full" })
        }),
        layer
      )
    )
    expect(exit._tag).toBe("Failure")
    expect(String(exit._tag === "Failure" ? exit.cause : "")).toContain("The disk is full")
  })

  test("settings come from config; the per-tool section wins over the global one", async () => {
    const settings = settingsFromConfig({ max_lines: 100, tools: { bash: { max_bytes: 2_000, direction: "head_tail" } } })
    expect(limitsFor(settings, "bash", { direction: "tail" })).toEqual({ maxLines: 100, maxBytes: 2_000, direction: "head_tail", reducers: true })
    expect(limitsFor(settings, "read", { direction: "head", maxLines: 7 })).toEqual({ maxLines: 7, maxBytes: 51_200, direction: "head", reducers: true })
    const configured = Truncate.layer.pipe(Layer.provide(Layer.mergeAll(Layer.succeed(DataDir, dir), Layer.succeed(TruncateSettings, settings))))
    const r = await Effect.runPromise(
      Effect.provide(
        Effect.gen(function* () {
          return yield* (yield* Truncate).apply(lines(150), { direction: "head", sessionID: "s", callID: "cfg" })
        }),
        configured
      )
    )
    expect(r.truncated).toBe(true)
    expect(countLines(r.content)).toBeLessThanOrEqual(100)
  })
})
