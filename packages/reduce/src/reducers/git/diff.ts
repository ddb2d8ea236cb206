/**
 * git diff, git show and git log -p: every file header and hunk start kept, index and ---/+++
 * lines dropped, long hunks cut in the middle (their first and last lines kept), commit messages
 * cut as in git log, and a count of everything cut. A diff too wide for that (hundreds of files)
 * gives each hunk an equal share of the budget, its conflict markers and changed lines first.
 */
import { byteLength } from "@reins/truncate"
import type { ReasonCode, Reducer } from "../../Reducer.ts"
import { runs, sniff, toLines } from "../../Text.ts"
import { COMMIT, compactCommit, describeCommit, GIT, thousands } from "./shared.ts"

/** Commits shown by git log -p. */
export const PATCH_COMMITS = 20
/** Lines kept at the start and end of a long hunk, tried in order until the result fits the budget (past them: shares). */
export const HUNK_KEEP: ReadonlyArray<readonly [number, number]> = [
  [6, 4],
  [3, 2]
]

const FILE = /^diff --(?:git|cc|combined) /
const HUNK = /^(@{2,}) -\d/
const HEADER_NOISE = /^(?:index [0-9a-f]+[.,]|similarity index |dissimilarity index |--- |\+\+\+ )/
const BODY = /^[ +\-\\]/

interface Result {
  readonly lines: Array<string>
  readonly reasons: ReadonlyArray<ReasonCode>
}

/** A conflict marker inside a hunk (`<<<<<<<`, `=======`, `>>>>>>>`, `|||||||`), after the line's +/- columns. */
const isMarker = (line: string, columns: number) => /^(?:<{7}|={7}|>{7}|\|{7})(?:\s|$)/.test(line.slice(columns))

/**
 * The lines of a hunk body within `share` lines: its conflict markers, then its changed lines in order, then context
 * next to them; each run left out said in one line (how many, how many added and removed).
 */
const selectBody = (body: ReadonlyArray<string>, share: number, columns: number): { lines: Array<string>; cut: number } => {
  if (body.length <= share) return { lines: [...body], cut: 0 }
  const keep = new Set<number>()
  const changed = (i: number) => /[+-]/.test(body[i]!.slice(0, columns))
  for (let i = 0; i < body.length && keep.size < share; i++) if (isMarker(body[i]!, columns)) keep.add(i)
  for (let i = 0; i < body.length && keep.size < share; i++) if (changed(i)) keep.add(i)
  // context around every changed line, one line of distance more at a time, while the share lasts
  const anchors = [...keep]
  for (let distance = 1; keep.size < share && distance < body.length; distance++)
    for (const a of anchors) {
      if (keep.size >= share) break
      for (const i of [a - distance, a + distance]) if (i >= 0 && i < body.length && keep.size < share) keep.add(i)
    }
  const lines: Array<string> = []
  let cut = 0
  for (let i = 0; i < body.length; ) {
    if (keep.has(i)) {
      lines.push(body[i++]!)
      continue
    }
    let added = 0
    let removed = 0
    const start = i
    for (; i < body.length && !keep.has(i); i++) {
      const marks = body[i]!.slice(0, columns)
      if (marks.includes("+")) added++
      else if (marks.includes("-")) removed++
    }
    lines.push(`… ${i - start} lines cut (+${added} -${removed}) …`)
    cut += i - start
  }
  return { lines, cut }
}

const reduceDiff = (lines: ReadonlyArray<string>, head: number, tail: number, share?: number): Result => {
  const out: Array<string> = []
  let files = 0
  let hunks = 0
  let hunkLines = 0
  let cutLines = 0
  let cutHunks = 0
  let dropped = 0
  let messageCut = 0
  let commits = 0
  let skipped = 0
  let oldest: Array<string> = []
  let commit: Array<string> | undefined
  let body: Array<string> | undefined
  let columns = 1
  let inHeader = false

  const flushHunk = () => {
    if (!body) return
    hunkLines += body.length
    if (share !== undefined) {
      const selected = selectBody(body, share, columns)
      out.push(...selected.lines)
      if (selected.cut > 0) {
        cutLines += selected.cut
        cutHunks++
      }
    } else if (body.length > head + tail + 1) {
      const middle = body.slice(head, body.length - tail)
      let added = 0
      let removed = 0
      for (const l of middle) {
        const marks = l.slice(0, columns)
        if (marks.includes("+")) added++
        else if (marks.includes("-")) removed++
      }
      out.push(...body.slice(0, head), `… ${middle.length} lines cut (+${added} -${removed}) …`, ...body.slice(body.length - tail))
      cutLines += middle.length
      cutHunks++
    } else out.push(...body)
    body = undefined
  }
  const flushCommit = () => {
    if (!commit) return
    const r = compactCommit(commit)
    out.push(...r.lines)
    messageCut += r.cut
    commit = undefined
  }

  for (const line of lines) {
    if (COMMIT.test(line)) {
      flushHunk()
      flushCommit()
      inHeader = false
      commits++
      if (commits > PATCH_COMMITS) {
        skipped++
        oldest = [line]
      } else commit = [line]
      continue
    }
    if (commits > PATCH_COMMITS) {
      if (oldest.length < 12) oldest.push(line)
      continue
    }
    if (commit && !FILE.test(line)) {
      commit.push(line)
      continue
    }
    if (FILE.test(line)) {
      flushHunk()
      flushCommit()
      out.push(line)
      files++
      inHeader = true
      continue
    }
    const hunk = HUNK.exec(line)
    if (hunk) {
      flushHunk()
      out.push(line)
      hunks++
      columns = hunk[1]!.length - 1
      body = []
      inHeader = false
      continue
    }
    if (inHeader && HEADER_NOISE.test(line)) {
      dropped++
      continue
    }
    if (body && line !== "" && BODY.test(line)) {
      body.push(line)
      continue
    }
    flushHunk()
    out.push(line)
  }
  flushHunk()
  flushCommit()
  if (skipped > 0) out.push(`… ${skipped} more commits not shown; oldest: ${describeCommit(oldest)}`)

  const reasons: Array<ReasonCode> = []
  if (cutHunks > 0) reasons.push("hunks_cut")
  if (messageCut > 0 || skipped > 0) reasons.push("commits_cut")
  if (dropped > 0) reasons.push("noise_dropped")
  if (reasons.length > 0) {
    const parts = [`${thousands(files)} files`, `${thousands(hunks)} hunks`]
    if (cutHunks > 0) parts.push(`${thousands(cutLines)} of ${thousands(hunkLines)} hunk lines cut in ${thousands(cutHunks)} hunks`)
    if (dropped > 0) parts.push(`${thousands(dropped)} index/---/+++ lines dropped`)
    if (skipped > 0) parts.push(`${thousands(skipped)} commits not shown`)
    while (out.length > 0 && out[out.length - 1] === "") out.pop()
    out.push(`[diff: ${parts.join("; ")}]`)
  }
  return { lines: out, reasons }
}

/** How many changed lines (and conflict markers) a result kept. */
const changedKept = (r: Result) => r.lines.filter((l) => /^[+-]{1,2}(?![+-]{2})/.test(l)).length

export const gitDiff: Reducer = {
  name: "git_diff",
  matches: (input) =>
    runs(input.command, new RegExp(`${GIT}(?:diff|show|stash\\s+show|format-patch|log\\b[^|;&]*?\\s(?:-p|-u|--patch)\\b)`)) ||
    sniff(input.text, /^(?:diff --(?:git|cc|combined) |@@@? -\d)/, 300),
  reduce: (input) => {
    const lines = toLines(input.text)
    if (!lines.some((l) => FILE.test(l) || HUNK.test(l))) return undefined
    const fits = (r: Result) => r.lines.length <= input.maxLines && byteLength(`${r.lines.join("\n")}\n`) <= input.maxBytes
    // a wide diff: each hunk gets an equal share of what the headers leave, its changed lines and conflict markers
    // first — the largest share that fits (a diff that cut every body kept no changed line and half the budget unused)
    const shared = () => {
      let low = 0
      let high = lines.length
      let best = reduceDiff(lines, 0, 0, 0)
      while (low < high) {
        const share = Math.ceil((low + high) / 2)
        const tried = reduceDiff(lines, 0, 0, share)
        if (fits(tried)) {
          best = tried
          low = share
        } else high = share - 1
      }
      return best
    }
    let result: Result | undefined
    for (const [head, tail] of HUNK_KEEP) {
      const tried = reduceDiff(lines, head, tail)
      if (fits(tried)) {
        result = tried
        break
      }
    }
    // a middle cut that drops most of the changed lines the shares would keep is not the better answer
    if (result === undefined) result = shared()
    else if (result.reasons.includes("hunks_cut")) {
      const other = shared()
      if (changedKept(other) > 2 * changedKept(result)) result = other
    }
    if (result.reasons.length === 0) return undefined
    return { text: `${result.lines.join("\n")}\n`, reasons: result.reasons }
  }
}
