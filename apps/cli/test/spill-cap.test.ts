import { beforeAll, describe, expect, test } from "bun:test"
import * as fs from "node:fs"
import { ensureBuilt, events, lastToolResult, projects, reins } from "./support.ts"

beforeAll(() => ensureBuilt())

const setup = projects()

describe("the spill file's cap (tool_output.spill_max_bytes)", () => {
  test("a bash output past the cap keeps its start and end on disk, and the model is told what was dropped", async () => {
    const cap = 256 * 1024
    // 18 MB of numbered lines: more than the cap, and more than what is read back for reducers
    const p = await setup([{ toolCalls: [{ name: "bash", arguments: { command: "seq 1 2500000" } }] }, { text: "done" }], {
      tool_output: { spill_max_bytes: cap }
    })
    const r = await reins(["run", "--yolo", "--format", "json", "count"], p)
    expect(r.code).toBe(0)
    const completed = events(r.stdout).find((e) => e.type === "part.updated" && e.part.type === "tool" && e.part.state.status === "completed")
    const file = completed!.part.state.metadata.outputPath as string
    const saved = fs.readFileSync(file, "utf8")
    const lines = saved.split("\n")
    const marker = lines.find((l) => l.startsWith("[reins:"))!
    expect(Buffer.byteLength(saved) - Buffer.byteLength(marker) - 1).toBeLessThanOrEqual(cap)
    expect(lines[0]).toBe("1")
    expect(lines.at(-2)).toBe("2500000")
    const [, bytes, dropped] = marker.match(/^\[reins: (\d+) bytes \((\d+) lines\) of the output were dropped here/)!.map(Number)
    // every line but the marker is one of seq's, the dropped ones are exactly the gap
    const numbers = lines.filter((l) => l !== "" && l !== marker).map(Number)
    expect(numbers.length + dropped!).toBe(2_500_000)
    const gap = numbers.findIndex((x, i) => i > 0 && x !== numbers[i - 1]! + 1)
    expect(numbers[gap]! - numbers[gap - 1]! - 1).toBe(dropped!)
    expect(bytes! + Buffer.byteLength(saved) - Buffer.byteLength(marker) - 1).toBe(18_888_896)
    const seen = lastToolResult(p.server.requests)
    expect(seen).toContain(`The output (2500000 lines, 18888896 bytes) was too large to keep whole: ${file} holds its start and its end`)
    expect(seen).toContain(`${bytes} bytes (${dropped} lines) in the middle were dropped`)
    expect(seen).toContain("2500000")
  })

  test("an output within the cap is saved whole, with the usual notice", async () => {
    const p = await setup([{ toolCalls: [{ name: "bash", arguments: { command: "seq 1 300000" } }] }, { text: "done" }], {
      tool_output: { spill_max_bytes: 4 * 1024 * 1024 }
    })
    const r = await reins(["run", "--yolo", "--format", "json", "count"], p)
    expect(r.code).toBe(0)
    const completed = events(r.stdout).find((e) => e.type === "part.updated" && e.part.type === "tool" && e.part.state.status === "completed")
    const file = completed!.part.state.metadata.outputPath as string
    expect(fs.statSync(file).size).toBe(1_988_895)
    expect(lastToolResult(p.server.requests)).toContain(`The full output (300000 lines, 1988895 bytes) is saved in ${file}`)
  })

  test("a cap below 64 KiB is a config error naming the field", async () => {
    const p = await setup([{ text: "never" }], { tool_output: { spill_max_bytes: 1000 } })
    const r = await reins(["run", "--format", "json", "hi"], p)
    expect(r.code).toBe(2)
    expect(r.stderr).toContain("spill_max_bytes")
  })
})
