/**
 * git status, long and short/porcelain (v1 and v2): branch and ahead/behind kept, counts per
 * state, every conflicted path, and a bounded sample of the paths in each other state.
 */
import type { Reducer } from "../../Reducer.ts"
import { runs, sniff, toLines } from "../../Text.ts"
import { GIT } from "./shared.ts"

/** Paths shown per state before "… and N more". */
export const PATHS_PER_STATE = 10

const SECTION = /^(Changes to be committed|Changes not staged for commit|Unmerged paths|Untracked files|Ignored files):$/
const HINT = /^\s*\((?:use|fix|all conflicts|commit or discard|create\/copy|run|see|and)\b.*\)$/
const ENTRY =
  /^\t(?:(both modified|both added|both deleted|added by us|added by them|deleted by us|deleted by them|new file|modified|deleted|renamed|copied|typechange|unmerged):\s+)?(\S.*)$/
const UNMERGED_STATE = /^(?:both |added by |deleted by |unmerged)/
const SHORT = /^([ MTADRCU?!])([ MTADRCU?!]) (\S.*)$/
const V2 = /^(?:([12u]) ([.MTADRCU]{2}) \S|([?!]) \S)/
const UNMERGED_CODE = /^(?:DD|AU|UD|UA|DU|AA|UU)$/

interface Bucket {
  readonly name: string
  readonly lines: Array<string>
  readonly all: boolean
}

const bucket = (buckets: Map<string, Bucket>, name: string, all: boolean) => {
  let b = buckets.get(name)
  if (!b) {
    b = { name, lines: [], all }
    buckets.set(name, b)
  }
  return b
}

/** The lines of a bucket: all of them when `all`, else a sample and a count of the rest. */
const emit = (out: Array<string>, b: Bucket, indent: string): boolean => {
  if (b.all || b.lines.length <= PATHS_PER_STATE + 1) {
    out.push(...b.lines)
    return false
  }
  out.push(...b.lines.slice(0, PATHS_PER_STATE), `${indent}… and ${b.lines.length - PATHS_PER_STATE} more ${b.name}`)
  return true
}

const counts = (buckets: Iterable<Bucket>) => [...buckets].map((b) => `${b.name} ${b.lines.length}`).join(", ")

const reduceLong = (lines: ReadonlyArray<string>) => {
  const out: Array<string> = []
  let sampled = false
  let hints = 0
  let section: { title: string; buckets: Map<string, Bucket> } | undefined
  const flush = () => {
    if (!section) return
    const total = [...section.buckets.values()].reduce((n, b) => n + b.lines.length, 0)
    out.push(`${section.title}: ${total} (${counts(section.buckets.values())})`)
    for (const b of section.buckets.values()) sampled = emit(out, b, "\t") || sampled
    section = undefined
  }
  for (const line of lines) {
    if (HINT.test(line)) {
      hints++
      continue
    }
    const s = SECTION.exec(line)
    if (s) {
      flush()
      section = { title: s[1]!, buckets: new Map() }
      continue
    }
    const e = section && ENTRY.exec(line)
    if (section && e) {
      const state = e[1] ?? (section.title.startsWith("Ignored") ? "ignored" : "untracked")
      const unmerged = section.title === "Unmerged paths" || UNMERGED_STATE.test(state)
      bucket(section.buckets, state, unmerged).lines.push(line)
      continue
    }
    flush()
    if (line === "" && out[out.length - 1] === "") continue
    out.push(line)
  }
  flush()
  return { out, sampled, hints }
}

/** Short (`-s`, `--porcelain`) and porcelain v2 lines grouped by their XY code. */
const reduceShort = (lines: ReadonlyArray<string>) => {
  const head: Array<string> = []
  const buckets = new Map<string, Bucket>()
  const tally = { conflicted: 0, staged: 0, modified: 0, deleted: 0, renamed: 0, untracked: 0, ignored: 0 }
  const other: Array<string> = []
  for (const line of lines) {
    let xy: string | undefined
    const v2 = V2.exec(line)
    if (v2) xy = v2[3] ? v2[3].repeat(2) : v2[1] === "u" ? v2[2]! : v2[2]!.replace(/\./g, " ")
    else {
      const m = SHORT.exec(line)
      if (m) xy = m[1]! + m[2]!
    }
    if (xy === undefined) {
      if (line.startsWith("#")) head.push(line)
      else other.push(line)
      continue
    }
    const [x, y] = [xy[0]!, xy[1]!]
    if (UNMERGED_CODE.test(xy)) tally.conflicted++
    else if (xy === "??") tally.untracked++
    else if (xy === "!!") tally.ignored++
    else {
      if (x !== " ") tally.staged++
      if (y === "M" || y === "T") tally.modified++
      if (x === "D" || y === "D") tally.deleted++
      if (x === "R" || y === "R") tally.renamed++
    }
    bucket(buckets, `"${xy}"`, UNMERGED_CODE.test(xy)).lines.push(line)
  }
  const out = [...head]
  out.push(
    `[${Object.entries(tally)
      .filter(([, n]) => n > 0)
      .map(([k, n]) => `${n} ${k}`)
      .join(", ")}]`
  )
  let sampled = false
  const ordered = [...buckets.values()].sort((a, b) => Number(b.all) - Number(a.all))
  for (const b of ordered) sampled = emit(out, b, "") || sampled
  out.push(...other)
  return { out, sampled, hints: 0 }
}

const LONG_SNIFF =
  /^(?:On branch \S|HEAD detached (?:at|from) \S|Not currently on any branch\.|(?:Changes to be committed|Changes not staged for commit|Unmerged paths|Untracked files):$)/

/** Whether the first lines are porcelain v1 or v2 entries (at least five, nearly all of them). */
const looksPorcelain = (text: string) => {
  const lines = toLines(text.slice(0, 8192)).slice(0, 50)
  const hits = lines.filter((l) => SHORT.test(l) || V2.test(l) || l.startsWith("## ") || l.startsWith("# branch.")).length
  return lines.length >= 5 && hits >= lines.length - 1
}

export const gitStatus: Reducer = {
  name: "git_status",
  matches: (input) => runs(input.command, new RegExp(`${GIT}status\\b`)) || sniff(input.text, LONG_SNIFF, 12) || looksPorcelain(input.text),
  reduce: (input) => {
    const lines = toLines(input.text)
    const long = lines.some((l) => LONG_SNIFF.test(l))
    const { out, sampled, hints } = long ? reduceLong(lines) : reduceShort(lines)
    if (!sampled && hints === 0) return undefined
    while (out.length > 0 && out[out.length - 1] === "") out.pop()
    return { text: `${out.join("\n")}\n`, reasons: sampled ? (hints > 0 ? ["paths_sampled", "noise_dropped"] : ["paths_sampled"]) : ["noise_dropped"] }
  }
}
