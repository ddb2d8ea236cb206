/**
 * git log without patches: the newest commits with their hash, author, date and subject, long
 * bodies cut, and a count of the commits left out (naming the oldest).
 */
import type { Reducer } from "../../Reducer.ts"
import { runs, sniff, toLines } from "../../Text.ts"
import { COMMIT, compactCommit, describeCommit, GIT } from "./shared.ts"

/** Commits shown in full-format logs. */
export const LOG_COMMITS = 30
/** Lines shown of a one-line-per-commit log (`--oneline`, `--format=…`). */
export const ONELINE_COMMITS = 100

const ONELINE = /^[*|\\/ ]*[0-9a-f]{7,64}\b/

export const gitLog: Reducer = {
  name: "git_log",
  matches: (input) =>
    runs(input.command, new RegExp(`${GIT}(?:log|reflog|whatchanged)\\b`)) || (sniff(input.text, COMMIT, 3) && sniff(input.text, /^[*|\\/ ]*Author: /, 6)),
  reduce: (input) => {
    const lines = toLines(input.text)
    const starts: Array<number> = []
    for (let i = 0; i < lines.length; i++) if (COMMIT.test(lines[i]!)) starts.push(i)

    if (starts.length === 0) {
      // one line per commit: keep the newest
      const commits = lines.filter((l) => ONELINE.test(l)).length
      if (lines.length <= ONELINE_COMMITS + 1 || commits === 0) return undefined
      const shown = lines.slice(0, ONELINE_COMMITS)
      const more = commits - shown.filter((l) => ONELINE.test(l)).length
      const text = [...shown, `… ${more} more commits (${lines.length - ONELINE_COMMITS} lines) not shown; oldest: ${lines[lines.length - 1]!.trim()}`]
      return { text: `${text.join("\n")}\n`, reasons: ["commits_cut"] }
    }

    const out = lines.slice(0, starts[0])
    let cut = 0
    const shown = Math.min(LOG_COMMITS, starts.length)
    for (let c = 0; c < shown; c++) {
      const block = lines.slice(starts[c], c + 1 < starts.length ? starts[c + 1] : lines.length)
      const r = compactCommit(block)
      out.push(...r.lines)
      cut += r.cut
    }
    const more = starts.length - shown
    if (more > 0) {
      const oldest = describeCommit(lines.slice(starts[starts.length - 1]))
      out.push(`… ${more} more commits not shown; oldest: ${oldest}`)
    }
    if (cut === 0 && more === 0) return undefined
    while (out.length > 0 && out[out.length - 1] === "") out.pop()
    return { text: `${out.join("\n")}\n`, reasons: ["commits_cut"] }
  }
}
