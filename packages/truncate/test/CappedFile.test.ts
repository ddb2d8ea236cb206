import { describe, expect, test } from "bun:test"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { MemoryGuard, Sink, droppedMarker, type Capture, type SinkOptions } from "../src/index.ts"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "reins-capped-"))
let n = 0
const fileFor = () => path.join(dir, `out-${n++}.txt`)

/** Runs a real command, streaming its output into a sink as bash does. */
const capture = (command: string, options: SinkOptions) =>
  new Promise<{ capture: Capture; file: string }>((resolve, reject) => {
    const file = fileFor()
    const sink = new Sink(file, options)
    const child = spawn("/bin/sh", ["-c", command], { stdio: ["ignore", "pipe", "inherit"] })
    child.stdout.on("data", (b: Buffer) => sink.write(b))
    child.on("error", reject)
    child.on("close", () => resolve({ capture: sink.close(), file }))
  })

/**
 * What a capped file must hold, built from the whole output: the first half of the cap cut after
 * its last line break, the last half cut after its first, and the marker between.
 */
const expected = (whole: Buffer, cap: number) => {
  const headMax = Math.floor(cap / 2)
  const ringMax = cap - headMax
  const window = 64 * 1024 // how far the cut looks for a line end
  const head = whole.subarray(0, headMax)
  const found = head.subarray(Math.max(0, headMax - window)).lastIndexOf(0x0a)
  const lastBreak = found === -1 ? -1 : Math.max(0, headMax - window) + found
  const keptHead = lastBreak === -1 ? head : head.subarray(0, lastBreak + 1)
  const ring = whole.subarray(whole.length - ringMax)
  const firstBreak = ring.subarray(0, window).indexOf(0x0a)
  const keptTail = firstBreak === -1 || firstBreak === ring.length - 1 ? ring : ring.subarray(firstBreak + 1)
  const middle = whole.subarray(keptHead.length, whole.length - keptTail.length)
  const dropped = { bytes: middle.length, lines: middle.toString("latin1").split("\n").length - 1 }
  const marker = `${lastBreak === -1 ? "\n" : ""}${droppedMarker(dropped, cap)}`
  return { text: Buffer.concat([keptHead, Buffer.from(marker), keptTail]), dropped, keptHead, keptTail }
}

const small = { memoryBytes: 16 * 1024, keepBytes: 4 * 1024 }

describe("capped spill file", () => {
  test("seq past the cap: the file keeps the first and last lines, a marker says what was dropped", async () => {
    const cap = 256 * 1024
    const { capture: c, file } = await capture("seq 1 200000", { ...small, maxFileBytes: cap })
    const whole = Buffer.from(Array.from({ length: 200_000 }, (_, i) => `${i + 1}\n`).join(""))
    const want = expected(whole, cap)
    const got = fs.readFileSync(file)
    expect(c.totalBytes).toBe(whole.length)
    expect(c.totalLines).toBe(200_000)
    expect(got.length).toBeLessThanOrEqual(cap + 200)
    expect(got.equals(want.text)).toBe(true)
    expect(c.dropped).toEqual(want.dropped)
    const lines = got.toString().split("\n")
    expect(lines[0]).toBe("1")
    expect(lines.at(-2)).toBe("200000")
    const marker = lines.find((l) => l.startsWith("[reins:"))!
    expect(marker).toContain(`${want.dropped.bytes} bytes (${want.dropped.lines} lines) of the output were dropped here`)
    // every line but the marker is a line of seq, and none is missing between head and tail but the dropped ones
    const numbers = lines.filter((l) => l !== "" && !l.startsWith("[reins:")).map(Number)
    expect(numbers.length + want.dropped.lines).toBe(200_000)
    const gap = numbers.findIndex((x, i) => i > 0 && x !== numbers[i - 1]! + 1)
    expect(numbers[gap]! - numbers[gap - 1]! - 1).toBe(want.dropped.lines)
  })

  test("yes | head -c past a tiny cap: size within the cap plus the marker line", async () => {
    const cap = 64 * 1024
    const { capture: c, file } = await capture("yes | head -c 3000000", { ...small, maxFileBytes: cap })
    const want = expected(Buffer.from("y\n".repeat(1_500_000)), cap)
    const got = fs.readFileSync(file)
    expect(got.equals(want.text)).toBe(true)
    expect(got.length - Buffer.byteLength(droppedMarker(want.dropped, cap))).toBeLessThanOrEqual(cap)
    expect(c.dropped).toEqual({ bytes: 3_000_000 - want.keptHead.length - want.keptTail.length, lines: want.dropped.lines })
    expect(c.tail.endsWith("y\ny\n")).toBe(true)
  })

  test("output within the cap is the file, unmarked", async () => {
    const { capture: c, file } = await capture("seq 1 20000", { ...small, maxFileBytes: 256 * 1024 })
    expect(c.dropped).toBeUndefined()
    expect(fs.readFileSync(file, "utf8")).toBe(Array.from({ length: 20_000 }, (_, i) => `${i + 1}\n`).join(""))
  })

  test("any chunking, any wrap position, lines or none: the file is the head, the marker and the tail", () => {
    const cases: Array<[string, Buffer]> = [
      ["ring wraps exactly", Buffer.from("abcdefg\n".repeat((64 * 1024 * 3) / 2 / 8))],
      ["ring wraps twice and a bit", Buffer.from("0123456789abcdef\n".repeat(12_000))],
      ["one line, no line break", Buffer.alloc(300_000, "x")],
      ["no final line break", Buffer.from(`${"line\n".repeat(40_000)}end`)],
      ["long lines past the look-around", Buffer.from(`${"z".repeat(100_000)}\n${"w".repeat(100_000)}\n${"v".repeat(20_000)}\n`)]
    ]
    // a cap larger than the look-around: line ends too far from the cut are not looked for
    const far = Buffer.concat([Buffer.from("a\n"), Buffer.alloc(700_000, "b"), Buffer.from("\nc\n")])
    for (const [name, whole, cap] of [
      ...cases.map(([name, whole]) => [name, whole, 64 * 1024] as const),
      ["line ends far from the cut", far, 512 * 1024] as const
    ]) {
      for (const chunk of [1000, 4096, 65_536, 1_000_000]) {
        const file = fileFor()
        const sink = new Sink(file, { memoryBytes: 10_000, keepBytes: 2048, maxFileBytes: cap })
        for (let i = 0; i < whole.length; i += chunk) sink.write(whole.subarray(i, i + chunk))
        const c = sink.close()
        const want = expected(whole, cap)
        expect([name, chunk, fs.readFileSync(file).equals(want.text)]).toEqual([name, chunk, true])
        expect([name, chunk, c.dropped]).toEqual([name, chunk, want.dropped])
        expect(fs.existsSync(`${file}.tail`)).toBe(false)
      }
    }
  })
})

describe("memory guard", () => {
  const guarded = (collect: (set: (rss: number) => void) => void) => {
    const state = { rss: 100, collected: 0 }
    const guard = new MemoryGuard({
      budgetBytes: 30,
      checkEveryBytes: 10,
      rss: () => state.rss,
      collect: () => {
        state.collected++
        collect((rss) => (state.rss = rss))
      }
    })
    return { guard, state }
  }

  test("collects when the resident set grew past the budget, looking once every so many bytes", () => {
    const { guard, state } = guarded((set) => set(105)) // the dead buffers are gone
    state.rss = 140
    guard.streamed(9)
    expect(state.collected).toBe(0) // not looked yet
    guard.streamed(1)
    expect(state.collected).toBe(1)
    state.rss = 120
    guard.streamed(10)
    expect(state.collected).toBe(0 + 1) // within the budget
    state.rss = 131
    guard.streamed(10)
    expect(state.collected).toBe(2)
  })

  test("memory that stays after a collection becomes the base: no collecting on every look", () => {
    const { guard, state } = guarded((set) => set(200)) // live memory, not garbage
    state.rss = 200
    for (let i = 0; i < 10; i++) guard.streamed(10)
    expect(state.collected).toBe(1)
    state.rss = 240 // garbage again, past the new base
    guard.streamed(10)
    expect(state.collected).toBe(2)
  })
})
