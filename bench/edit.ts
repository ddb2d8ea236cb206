// Benchmark: the edit tool on files of 1k, 10k and 100k lines, for an exact hit, a block-anchor
// hit (a changed and a missing middle line) and a miss whose anchors occur in every function, so
// the whole ladder and the nearest-region search run. Baselines from the same run: a bare
// indexOf + slice (the floor), and a block-anchor done the usual way (every candidate's middle by
// full Levenshtein). Usage: bun bench/edit.ts
import { Effect, Layer } from "effect"
import { Bus, DataDir, Ids } from "@reins/domain"
import { Permission, PermissionSettings, defaultRules } from "@reins/permission"
import { edit, replaceText } from "@reins/tool"
import { Truncate, TruncateSettings, defaultSettings } from "@reins/truncate"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { machine, median, table } from "./support.ts"

const fn = (i: number) => [
  `export function fn${i}(input: number): number {`,
  `  const scaled = input * ${i}`,
  `  if (scaled > 1000) {`,
  `    return scaled - ${i}`,
  `  }`,
  `  return scaled + ${i}`,
  `}`,
  ``
]

const source = (lines: number) => {
  const out: Array<string> = []
  for (let i = 0; out.length < lines; i++) out.push(...fn(i))
  return `${out.slice(0, lines).join("\n")}\n`
}

const cases = (lines: number) => {
  const k = Math.floor(lines / 16)
  return [
    { name: "exact hit", expect: "exact", old: fn(k).slice(1, 4).join("\n") },
    {
      name: "block-anchor hit",
      expect: "block-anchor",
      old: [fn(k)[0], `  const scaled = input * ${k} // scale`, `  if (scaled > 1000) {`, `    return scaled - ${k}`, `  return scaled + ${k}`, `}`].join("\n")
    },
    {
      // `}` starts and ends every function: block-anchor has a candidate at every one
      name: "miss, anchors everywhere",
      expect: "not-found",
      old: ["}", "", ...Array.from({ length: 30 }, (_, i) => `  const other${i} = lookup(table, ${i}) ?? fallback`), "}"].join("\n")
    },
    {
      name: "miss (whole ladder)",
      expect: "not-found",
      old: [`  if (scaled > 1000) {`, `    console.log("overflow", scaled)`, `    throw new RangeError("too large")`, `  }`].join("\n")
    }
  ]
}

/** The usual block-anchor: each line of each candidate's middle compared by full Levenshtein. */
const levenshtein = (a: string, b: string) => {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const cur = [i]
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    prev = cur
  }
  return prev[b.length]!
}
const naiveBlockAnchor = (content: string, old: string) => {
  const lines = content.split("\n")
  const search = old.split("\n")
  if (search.length < 3) return undefined
  const first = search[0]!.trim()
  const last = search[search.length - 1]!.trim()
  const found: Array<number> = []
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() !== first) continue
    for (let j = i + 2; j < lines.length; j++) {
      if (lines[j]!.trim() !== last) continue
      let similarity = 0
      const middle = Math.min(search.length - 2, j - i - 1)
      for (let m = 1; m <= middle; m++) {
        const a = lines[i + m]!.trim()
        const b = search[m]!.trim()
        const longer = Math.max(a.length, b.length)
        similarity += longer === 0 ? 1 : 1 - levenshtein(a, b) / longer
      }
      if (middle === 0 || similarity / middle >= 0.65) found.push(i)
      break
    }
  }
  return found
}

const layer = Layer.mergeAll(Permission.layer, Truncate.layer).pipe(
  Layer.provideMerge(Layer.mergeAll(Bus.layer, Ids.layer)),
  Layer.provide(Layer.succeed(DataDir, fs.mkdtempSync(path.join(os.tmpdir(), "reins-bench-edit-data-")))),
  Layer.provide(
    Layer.succeed(PermissionSettings, {
      rules: [...defaultRules, { permission: "edit", pattern: "*", action: "allow" as const }],
      nonInteractive: "deny" as const
    })
  ),
  Layer.provide(Layer.succeed(TruncateSettings, defaultSettings))
)
const tool = await Effect.runPromise(edit.pipe(Effect.provide(layer)) as Effect.Effect<any>)
const cwd = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-bench-edit-")))
const ctx = { sessionID: "ses_bench", messageID: "msg_bench", callID: "call_bench", cwd }
const runEdit = (args: object) => Effect.runPromise(Effect.result(tool.execute(args, ctx)).pipe(Effect.provide(layer)) as Effect.Effect<any>)

const time = async (runs: number, f: () => unknown) => {
  await f()
  const xs: Array<number> = []
  for (let i = 0; i < runs; i++) {
    const t = performance.now()
    await f()
    xs.push(performance.now() - t)
  }
  return median(xs)
}

const rows: Array<Array<string>> = []
const worst = new Map<number, number>()
for (const lines of [1_000, 10_000, 100_000]) {
  const content = source(lines)
  const file = path.join(cwd, `f${lines}.ts`)
  const runs = lines >= 100_000 ? 5 : 9
  for (const c of cases(lines)) {
    const result = replaceText(content, c.old, "REPLACED", { file })
    const got = result.ok ? result.replacer : result.reason
    if (got !== c.expect) throw new Error(`${lines} lines, ${c.name}: expected ${c.expect}, got ${got}`)
    const ladder = await time(runs, () => replaceText(content, c.old, "REPLACED", { file }))
    const whole = await time(runs, async () => {
      fs.writeFileSync(file, content)
      const r = await runEdit({ filePath: file, oldString: c.old, newString: "REPLACED" })
      if ((r._tag === "Success") !== (c.expect !== "not-found")) throw new Error(`edit tool: unexpected ${r._tag}`)
    })
    const floor = await time(runs, () => {
      const at = content.indexOf(c.old)
      return at === -1 ? content : `${content.slice(0, at)}REPLACED${content.slice(at + c.old.length)}`
    })
    const naive = c.expect === "exact" ? undefined : await time(lines >= 100_000 ? 3 : runs, () => naiveBlockAnchor(content, c.old))
    worst.set(lines, Math.max(worst.get(lines) ?? 0, whole))
    rows.push([
      `${lines.toLocaleString("en")}`,
      c.name,
      got,
      ladder.toFixed(2),
      whole.toFixed(2),
      floor.toFixed(3),
      naive === undefined ? "-" : naive.toFixed(2)
    ])
  }
}
fs.rmSync(cwd, { recursive: true, force: true })

console.log("\nedit — replacer ladder on large files (median ms; targets: 10k lines ≤ 50 ms, 100k lines ≤ 500 ms in every case)")
console.log(`machine: ${machine()}\n`)
console.log(
  table(["lines", "case", "matched by", "ladder", "edit tool (read+match+write)", "baseline: indexOf", "baseline: full-Levenshtein block-anchor"], rows)
)
const verdict = (lines: number, target: number) =>
  `${lines.toLocaleString("en")} lines worst ${worst.get(lines)!.toFixed(1)} ms ${worst.get(lines)! <= target ? "≤" : ">"} ${target} ms`
console.log(`\n${verdict(10_000, 50)}; ${verdict(100_000, 500)}`)
