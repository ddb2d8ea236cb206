import { beforeAll, describe, expect, test } from "bun:test"
import { execSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { ensureBuilt, events, lastToolResult, projects, reins } from "./support.ts"

beforeAll(() => ensureBuilt())

const setup = projects()

describe("tool output in a session", () => {
  test("a large bash output reaches the model reduced, with evidence in the event, the store and the notice", async () => {
    const p = await setup([{ toolCalls: [{ name: "bash", arguments: { command: "seq 1 30000" } }] }, { text: "done" }])
    const r = await reins(["run", "--yolo", "--format", "json", "count"], p)
    expect(r.code).toBe(0)
    const completed = events(r.stdout).find((e) => e.type === "part.updated" && e.part.type === "tool" && e.part.state.status === "completed")
    const evidence = completed!.part.state.metadata.reduction
    expect(evidence).toMatchObject({ reducer: "head_tail", originalBytes: 168_894, reasons: ["middle_dropped"] })
    const seen = lastToolResult(p.server.requests)
    expect(seen).toContain("[reduced by head_tail: 168894")
    expect(seen).toContain("(exit code 0)")
    const file = completed!.part.state.metadata.outputPath as string
    expect(file.startsWith(path.join(p.dataDir, "tool-output"))).toBe(true)
    expect(seen).toContain(file)
    expect(fs.readFileSync(file, "utf8")).toBe(execSync("seq 1 30000", { encoding: "utf8" }))
    expect(Buffer.byteLength(seen)).toBeLessThan(51_200)
  })

  test("a long command reports progress on the running part", async () => {
    const p = await setup([{ toolCalls: [{ name: "bash", arguments: { command: "for i in 1 2 3; do echo tick$i; sleep 0.7; done" } }] }, { text: "done" }])
    const r = await reins(["run", "--yolo", "--format", "json", "tick"], p)
    expect(r.code).toBe(0)
    const progress = events(r.stdout).filter(
      (e) => e.type === "part.updated" && e.part.type === "tool" && e.part.state.status === "running" && e.part.state.metadata
    )
    expect(progress.length).toBeGreaterThan(0)
    // the first report, at once, records the command's process group (for a later reins to stop it if this one dies)
    expect(progress[0]!.part.state.metadata.process).toMatchObject({ pgid: expect.any(Number), start: expect.any(Number) })
    expect(progress.some((e) => e.part.state.metadata.tail.includes("tick1"))).toBe(true)
    expect(progress.at(-1)!.part.state.metadata.outputBytes).toBeGreaterThanOrEqual(12)
  })

  test("text mode announces a call once, however often it reports progress, and says how its output was reduced", async () => {
    const p = await setup([{ toolCalls: [{ name: "bash", arguments: { command: "seq 1 20000; sleep 1.2; seq 1 20000" } }] }, { text: "done" }])
    const r = await reins(["run", "--yolo", "count twice"], p)
    expect(r.code).toBe(0)
    expect(r.stderr.match(/✓ bash/g)).toHaveLength(1)
    expect(r.stderr).toMatch(/↳ reduced by head_tail: 212\.7 KiB → [\d.]+ KiB \(middle_dropped\); full output in \S+tool-output\S+\.txt/)
    expect(r.stdout.trim()).toBe("done")
  })

  test("tool_output limits from reins.json apply, per tool over global", async () => {
    const p = await setup([{ toolCalls: [{ name: "bash", arguments: { command: "seq 1 3000" } }] }, { text: "done" }], {
      tool_output: { max_lines: 1000, reducers: false, tools: { bash: { max_lines: 40 } } }
    })
    const r = await reins(["run", "--yolo", "count"], p)
    expect(r.code).toBe(0)
    const seen = lastToolResult(p.server.requests)
    expect(seen.split("\n").length).toBeLessThanOrEqual(40)
    expect(seen).toContain("\n3000\n")
    expect(seen).toContain("the last part is shown")
  })

  test("a bad tool_output value is a config error naming the field, exit 2", async () => {
    const p = await setup([{ text: "never" }], { tool_output: { max_lines: -5 } })
    const r = await reins(["run", "hi"], p)
    expect(r.code).toBe(2)
    expect(r.stderr).toContain("tool_output.max_lines")
    expect(p.server.requests).toHaveLength(0)
  })
})

describe("reins debug", () => {
  const fixture = path.resolve(import.meta.dir, "..", "..", "..", "packages", "reduce", "fixtures")
  test("debug truncate cuts stdin to the given limits and direction", async () => {
    const p = await setup([])
    const r = await reins(["debug", "truncate", "--max-lines", "5", "--direction", "head"], p, execSync("seq 1 100", { encoding: "utf8" }))
    expect(r.code).toBe(0)
    expect(r.stdout).toBe("1\n2\n3\n4\n…96 lines truncated…\n")
    expect(r.stderr).toContain("kept 4 of 100 lines")
    const json = await reins(["debug", "truncate", "--format", "json", "--max-bytes", "10", "-"], p, "aaaa\nbbbb\ncccc\n")
    expect(JSON.parse(json.stdout)).toMatchObject({ truncated: true, totalLines: 3, totalBytes: 15 })
  })

  test("debug reduce prints the reduced text and the evidence", async () => {
    const p = await setup([])
    const file = path.join(p.cwd, "out.txt")
    fs.writeFileSync(file, execSync("seq 1 50000", { encoding: "utf8" }))
    const r = await reins(["debug", "reduce", "--command", "seq 1 50000", "--max-lines", "100", file], p)
    expect(r.code).toBe(0)
    expect(r.stdout.startsWith("1\n2\n")).toBe(true)
    expect(r.stdout.trimEnd().endsWith("49999\n50000")).toBe(true)
    expect(r.stderr).toMatch(/\[reduced by head_tail: 288894 → \d+ bytes; middle_dropped\]/)
    const json = JSON.parse((await reins(["debug", "reduce", "--format", "json", "--max-lines", "100", file], p)).stdout)
    expect(json.reduced).toBe(true)
    expect(json.evidence).toMatchObject({ reducer: "head_tail", originalBytes: 288_894 })
    expect(json.evidence.compactedBytes).toBe(Buffer.byteLength(json.text))
  })

  test("debug reduce on a real fixture names the reducer", async () => {
    const manifests = fs
      .readdirSync(fixture, { recursive: true, encoding: "utf8" })
      .filter((f) => f.endsWith(".json") && !f.includes("projects") && fs.existsSync(path.join(fixture, f.replace(/\.json$/, ".txt"))))
    if (manifests.length === 0) return
    const p = await setup([])
    const m = JSON.parse(fs.readFileSync(path.join(fixture, manifests[0]!), "utf8"))
    const r = await reins(["debug", "reduce", "--format", "json", "--command", m.command, path.join(fixture, manifests[0]!.replace(/\.json$/, ".txt"))], p)
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout).evidence.reducer).toBe(m.reducer)
  })

  test("bad input: a missing file and a bad limit exit 2 with a message", async () => {
    const p = await setup([])
    const missing = await reins(["debug", "reduce", "/no/such/file"], p)
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain("no such file")
    const bad = await reins(["debug", "truncate", "--max-bytes", "0", "-"], p, "x")
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain("--max-bytes must be a positive number")
  })
})
