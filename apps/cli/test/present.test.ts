import { describe, expect, test } from "bun:test"
import type { ToolPart } from "@reins/domain"
import { diffOf, diffStat, formatStat, parseDiff, renderDiff } from "../src/present/Diff.ts"
import { spinnerFrame, spinnerLine } from "../src/present/Spinner.ts"
import { colorEnabled, liveEnabled, makeStyle, plain, stripAnsi, unicodeEnabled } from "../src/present/Style.ts"
import { toolLine, toolOutcome, toolSubject } from "../src/present/ToolSummary.ts"
import { cost, count, duration, elapsed, firstLine, tokens } from "../src/present/Units.ts"
import { addStep, cacheHitRate, emptyTotals, sumUsage, usageLine } from "../src/present/Usage.ts"

const color = makeStyle({ color: true })
const ascii = makeStyle({ color: false, unicode: false })

describe("colorEnabled", () => {
  test.each([
    ["a terminal", true, {}, true],
    ["a pipe", false, {}, false],
    ["NO_COLOR on a terminal", true, { NO_COLOR: "1" }, false],
    ["NO_COLOR of any non-empty value", true, { NO_COLOR: "false" }, false],
    ["an empty NO_COLOR is unset", true, { NO_COLOR: "" }, true],
    ["FORCE_COLOR on a pipe", false, { FORCE_COLOR: "1" }, true],
    ["FORCE_COLOR empty still forces", false, { FORCE_COLOR: "" }, true],
    ["FORCE_COLOR=0 turns it off on a terminal", true, { FORCE_COLOR: "0" }, false],
    ["FORCE_COLOR=false turns it off", true, { FORCE_COLOR: "false" }, false],
    ["FORCE_COLOR wins over NO_COLOR", false, { FORCE_COLOR: "1", NO_COLOR: "1" }, true],
    ["TERM=dumb", true, { TERM: "dumb" }, false]
  ] as const)("%s", (_name, isTTY, env, expected) => {
    expect(colorEnabled(isTTY, env)).toBe(expected)
  })

  test("a live line needs a terminal that is not dumb", () => {
    expect(liveEnabled(true, {})).toBe(true)
    expect(liveEnabled(false, { FORCE_COLOR: "1" })).toBe(false)
    expect(liveEnabled(true, { TERM: "dumb" })).toBe(false)
  })

  test.each([
    [{}, true],
    [{ LANG: "en_US.UTF-8" }, true],
    [{ LANG: "C.utf8" }, true],
    [{ LANG: "C" }, false],
    [{ LANG: "en_US.UTF-8", LC_ALL: "POSIX" }, false],
    [{ LC_CTYPE: "de_DE.ISO-8859-1" }, false]
  ] as const)("unicode for %o: %p", (env, expected) => {
    expect(unicodeEnabled(env)).toBe(expected)
  })

  test("colour wraps in SGR codes and plain does not", () => {
    expect(color.red("x")).toBe("\x1b[31mx\x1b[39m")
    expect(plain.red("x")).toBe("x")
    expect(stripAnsi(color.bold(color.green("ok")))).toBe("ok")
  })
})

const DIFF = ["--- a.ts", "+++ a.ts", "@@ -1,4 +1,3 @@", " keep", "-old", "--- looks like a header", "+new", " tail"].join("\n")

describe("Diff", () => {
  test("counts added and removed lines, a removed `-- x` line is not a header", () => {
    expect(diffStat(DIFF)).toEqual({ added: 1, removed: 2 })
    expect(parseDiff(DIFF).map((l) => l.kind)).toEqual(["file", "file", "hunk", "context", "remove", "remove", "add", "context"])
  })

  test("several files joined (apply_patch) and a new file", () => {
    const created = ["--- b.ts", "+++ b.ts", "@@ -0,0 +1,2 @@", "++++ plus", "+two"].join("\n")
    expect(diffStat(`${DIFF}\n${created}`)).toEqual({ added: 3, removed: 2 })
    expect(diffStat("")).toEqual({ added: 0, removed: 0 })
  })

  test("formats the stat and colours the lines", () => {
    expect(formatStat({ added: 3, removed: 1 })).toBe("+3 −1")
    expect(formatStat({ added: 3, removed: 1 }, ascii)).toBe("+3 -1")
    expect(formatStat({ added: 3, removed: 1 }, color)).toBe("\x1b[32m+3\x1b[39m \x1b[31m−1\x1b[39m")
    const lines = renderDiff(DIFF, color)
    expect(lines[4]).toBe("\x1b[31m-old\x1b[39m")
    expect(lines[6]).toBe("\x1b[32m+new\x1b[39m")
    expect(lines.map(stripAnsi)).toEqual(DIFF.split("\n"))
  })

  test("a long diff is cut with a count of what was left out", () => {
    expect(renderDiff(DIFF, plain, 3)).toEqual(["--- a.ts", "+++ a.ts", "@@ -1,4 +1,3 @@", "… 5 more diff lines"])
    expect(diffOf({ diff: "" })).toBeUndefined()
    expect(diffOf({ diff: DIFF })).toBe(DIFF)
  })
})

const tool = (toolName: string, state: ToolPart["state"]): ToolPart => ({
  id: "prt_1",
  sessionID: "ses_1",
  messageID: "msg_1",
  type: "tool",
  callID: "call_1",
  tool: toolName,
  state
})
const done = (name: string, input: Record<string, unknown>, metadata: Record<string, unknown>, ms = 1200) =>
  tool(name, { status: "completed", input, output: "", title: "", metadata, time: { start: 1000, end: 1000 + ms } })

describe("toolLine", () => {
  test.each([
    ["bash ok", done("bash", { command: "npm test" }, { exitCode: 0, timedOut: false }), "✓ bash npm test · exit 0 · 1.2s"],
    ["bash failing", done("bash", { command: "false" }, { exitCode: 1, timedOut: false }, 30), "✗ bash false · exit 1 · 30ms"],
    ["bash timed out", done("bash", { command: "sleep 9" }, { exitCode: null, timedOut: true }, 2000), "✗ bash sleep 9 · timed out (killed) · 2.0s"],
    ["edit", done("edit", { filePath: "/p/src/a.ts" }, { diff: DIFF }, 12), "✓ edit src/a.ts · +1 −2 · 12ms"],
    ["write without a diff", done("write", { filePath: "/p/n.txt" }, { exists: false }, 5), "✓ write n.txt · created · 5ms"],
    [
      "apply_patch of two files",
      done("apply_patch", { patchText: "*** Begin Patch\n*** Add File: x.ts\n+a\n*** Delete File: y.ts\n*** End Patch" }, { files: [{}, {}], diff: DIFF }, 7),
      "✓ apply_patch 2 files · 2 files · +1 −2 · 7ms"
    ],
    ["grep", done("grep", { pattern: "TODO", path: "/p/src" }, { matches: 12, files: 3 }, 40), "✓ grep TODO in src · 12 matches in 3 files · 40ms"],
    ["grep nothing", done("grep", { pattern: "zzz" }, { matches: 0, files: 0 }, 40), "✓ grep zzz · no matches · 40ms"],
    ["glob", done("glob", { pattern: "**/*.ts" }, { count: 1 }, 3), "✓ glob **/*.ts · 1 file · 3ms"],
    ["list", done("list", { path: "/p" }, { count: 4 }, 3), "✓ list /p · 4 entries · 3ms"],
    [
      "webfetch",
      done("webfetch", { url: "https://docs.example.com/guide" }, { status: 200, contentType: "text/html", bytes: 12_800 }, 90),
      "✓ webfetch https://docs.example.com/guide · text/html, 12.5 KiB · 90ms"
    ],
    ["read partly", done("read", { filePath: "/p/big.ts" }, { lines: 2000, totalLines: 5000 }, 3), "✓ read big.ts · 2,000 lines of 5000 · 3ms"],
    [
      "an error, first line",
      tool("read", { status: "error", input: { filePath: "/p/x.ts" }, error: "File not found: /p/x.ts\nDid you mean y.ts?", time: { start: 0, end: 4 } }),
      "✗ read x.ts · File not found: /p/x.ts · 4ms"
    ],
    [
      "interrupted",
      tool("bash", { status: "error", input: { command: "sleep 60" }, error: "interrupted", interrupted: true, time: { start: 0, end: 3100 } }),
      "✗ bash sleep 60 · interrupted after 3.1s"
    ],
    ["running", tool("bash", { status: "running", input: { command: "make" }, time: { start: 0 } }), "• bash make · 12s"]
  ] as const)("%s", (_name, part, expected) => {
    expect(toolLine(part, plain, { cwd: "/p", now: 12_500 })).toBe(expected)
  })

  test("outcomes and colour", () => {
    expect(toolOutcome(done("bash", { command: "x" }, { exitCode: 2 }))).toBe("failed")
    expect(toolOutcome(done("bash", { command: "x" }, { exitCode: 0 }))).toBe("ok")
    const line = toolLine(done("bash", { command: "false" }, { exitCode: 1 }), color)
    expect(line).toContain("\x1b[31m✗\x1b[39m")
    expect(line).toContain("\x1b[31mexit 1\x1b[39m")
    expect(stripAnsi(line)).toBe("✗ bash false · exit 1 · 1.2s")
  })

  test("a multi-line command is shown by its first line", () => {
    expect(toolSubject(done("bash", { command: "cd x\nmake all" }, {}))).toBe("cd x")
  })
})

describe("Usage", () => {
  const step = { input: 1000, output: 200, reasoning: 0, cacheRead: 0, cacheWrite: 0 }

  test("sums steps; cache rate only when the provider reported cache tokens", () => {
    const t = addStep(addStep(emptyTotals, step, 0.01), { ...step, input: 400, cacheRead: 3600 }, 0.002)
    expect(t).toEqual({ steps: 2, input: 1400, output: 400, reasoning: 0, cacheRead: 3600, cacheWrite: 0, cost: 0.012 })
    expect(cacheHitRate(t)).toBeCloseTo(0.72)
    expect(cacheHitRate(addStep(emptyTotals, step, 0))).toBeUndefined()
    expect(
      sumUsage([
        { usage: step, cost: 0.5 },
        { usage: step, cost: 0.25 }
      ]).cost
    ).toBe(0.75)
  })

  test("the closing line", () => {
    const t = addStep(addStep(emptyTotals, step, 0.01), { ...step, input: 400, cacheRead: 11_000 }, 0.0023)
    expect(usageLine(t, plain, 5234)).toBe("2 steps · 12k in / 400 out · $0.01 · cache 89% · 5.2s")
    expect(usageLine(addStep(emptyTotals, step, 0), plain)).toBe("1 step · 1k in / 200 out · $0.00")
  })

  test("units", () => {
    expect([tokens(830), tokens(1234), tokens(12_400), tokens(1_250_000)]).toEqual(["830", "1.2k", "12k", "1.3M"])
    expect([duration(320), duration(4210), duration(125_000), duration(3_720_000)]).toEqual(["320ms", "4.2s", "2m 05s", "1h 02m"])
    expect([cost(0), cost(0.0012), cost(1.234)]).toEqual(["$0.00", "$0.0012", "$1.23"])
    expect([elapsed(999), elapsed(12_300), elapsed(61_000)]).toEqual(["0s", "12s", "1m 01s"])
    expect(firstLine("abcdef\nx", 4)).toBe("abc…")
  })

  test("spinner frames advance with time and fall back to ASCII", () => {
    expect(spinnerFrame(plain, 0)).toBe("⠋")
    expect(spinnerFrame(plain, 80)).toBe("⠙")
    expect(spinnerFrame(ascii, 80)).toBe("/")
    expect(spinnerLine(plain, "thinking", 4200)).toBe("⠙ thinking · 4s".replace("⠙", spinnerFrame(plain, 4200)))
  })
})

describe("count", () => {
  test("groups thousands with commas, rounds, keeps the sign", () => {
    expect([0, 7, 999, 1000, 14_200, 1_234_567.6, -1234, -0.4].map(count)).toEqual(["0", "7", "999", "1,000", "14,200", "1,234,568", "-1,234", "0"])
  })
})
