/** Line helpers shared by the reducers. */

/** Removes ANSI colour and cursor sequences. */
export const stripAnsi = (s: string) => s.replace(/\x1b\[[0-9;?]*[ -/]*[@-~]/g, "").replace(/\x1b\][^\x07]*\x07/g, "")

/** Lines without their terminators (CRLF and LF), colour removed; no empty last line. */
export const toLines = (text: string): Array<string> => {
  const lines = stripAnsi(text).split(/\r?\n/)
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop()
  return lines
}

/** A `file:line` or `file:line:col` location, e.g. `src/a.ts:12:5` or `lib.rs:3`. */
export const LOCATION = /(?:[A-Za-z]:)?[\w.@~+\-/\\]*[\w@~+-]\.[A-Za-z0-9]{1,10}[:(]\d+(?:[:,]\d+)?\)?/

export const hasLocation = (line: string) => LOCATION.test(line)

/** Keeps the first `head` and last `tail` lines with a marker between. */
export const cutMiddle = (lines: ReadonlyArray<string>, head: number, tail: number): Array<string> =>
  lines.length <= head + tail + 1
    ? [...lines]
    : [...lines.slice(0, head), `…${lines.length - head - tail} lines truncated…`, ...lines.slice(lines.length - tail)]

/** Whether the command runs a given program, e.g. `runs(cmd, /go\s+test/)` even after `cd x &&`. */
export const runs = (command: string | undefined, program: RegExp) =>
  command !== undefined && new RegExp(`(?:^|[;&|(]\\s*|\\b(?:sudo|env|time|npx|bunx|pnpm|yarn|npm exec)\\s+)${program.source}`, "m").test(command)

/** Whether any of the first `n` lines matches. */
export const sniff = (text: string, pattern: RegExp, n = 200) => {
  let start = 0
  for (let i = 0; i < n && start < text.length; i++) {
    const end = text.indexOf("\n", start)
    const line = text.slice(start, end === -1 ? text.length : end)
    if (pattern.test(stripAnsi(line))) return true
    if (end === -1) break
    start = end + 1
  }
  return false
}
