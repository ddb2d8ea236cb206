/** Pieces shared by the git log and git diff reducers. */

/** `git` and its global options, before the subcommand (a RegExp source for `runs`). */
export const GIT = String.raw`git(?:\s+-[cC]\s+\S+|\s+--[\w-]+(?:=\S+)?|\s+-[pP])*\s+`

/** A commit header line, also under `--graph` (`* commit 1a2b…`). */
export const COMMIT = /^[*|\\/ ]*commit [0-9a-f]{7,64}\b/
const FIELD = /^[*|\\/ ]*(?:Merge|Author|AuthorDate|Commit|CommitDate|Date|Reflog|Reflog message):/
const MESSAGE = /^[*|\\/ ]*(?: {4}|$)/
const STAT_SUMMARY = /^[|\s]*\d+ files? changed/

/** Message lines kept per commit (subject, blank, first body lines). */
export const MESSAGE_KEEP = 4

/**
 * One commit's header and message (and whatever follows the message before its diff, e.g. a
 * --stat): header fields kept, the message cut to its first lines, a long stat cut to its head
 * and summary. `cut` counts the lines left out.
 */
export const compactCommit = (block: ReadonlyArray<string>): { readonly lines: Array<string>; readonly cut: number } => {
  const out: Array<string> = [block[0]!]
  let i = 1
  while (i < block.length && FIELD.test(block[i]!)) out.push(block[i++]!)
  let cut = 0
  // the message: blank and indented lines right after the header
  const message: Array<string> = []
  while (i < block.length && MESSAGE.test(block[i]!)) message.push(block[i++]!)
  let end = message.length
  while (end > 0 && message[end - 1]!.replace(/^[*|\\/ ]*/, "") === "") end--
  const lead = message[0] !== undefined && message[0].replace(/^[*|\\/ ]*/, "") === "" ? 1 : 0
  const text = message.slice(lead, end)
  if (lead) out.push(message[0]!)
  if (text.length > MESSAGE_KEEP + 1) {
    out.push(...text.slice(0, MESSAGE_KEEP), `    … ${text.length - MESSAGE_KEEP} more lines`)
    cut += text.length - MESSAGE_KEEP
  } else out.push(...text)
  out.push(...message.slice(end))
  // anything else (a --stat, notes): head and summary
  const rest = block.slice(i)
  if (rest.length > 8) {
    const summary = rest.findLastIndex((l) => STAT_SUMMARY.test(l))
    const tail = summary >= 5 ? rest.slice(summary) : rest.slice(-2)
    out.push(...rest.slice(0, 5), `… ${rest.length - 5 - tail.length} more lines`, ...tail)
    cut += rest.length - 5 - tail.length
  } else out.push(...rest)
  return { lines: out, cut }
}

/** `abc1234def0 "subject"` for a commit block, to name the oldest commit left out. */
export const describeCommit = (block: ReadonlyArray<string>) => {
  const hash = /commit ([0-9a-f]{7,64})/.exec(block[0] ?? "")?.[1]?.slice(0, 12) ?? "?"
  const subject = block.slice(1).find((l) => /^[*|\\/ ]* {4}\S/.test(l))
  return subject === undefined ? hash : `${hash} "${subject.trim()}"`
}

export const thousands = (n: number) => n.toLocaleString("en-US")
