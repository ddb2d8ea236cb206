/**
 * Terminal text as lines that fit a width, escapes kept (Bun's ANSI-aware wrap and slice). The
 * transcript is built as such lines rather than as Ink boxes: a resumed session of hundreds of
 * messages is a few strings, not thousands of layout nodes.
 */

/**
 * Lines of `text` wrapped to `width` columns at spaces, long words broken; a style open at a break
 * is closed and opened again, so each line stands alone. `keepSpace` keeps leading and trailing
 * spaces (code); prose drops them at the breaks.
 */
export const wrap = (text: string, width: number, keepSpace = false): Array<string> => {
  if (width <= 0) return text.split("\n")
  const out: Array<string> = []
  for (const line of text.split("\n")) {
    if (Bun.stringWidth(line) <= width) out.push(line)
    else out.push(...Bun.wrapAnsi(line, width, { hard: true, trim: !keepSpace }).split("\n"))
  }
  return out
}

/** A paint applied to each line of a text on its own (a style must not span a line break). */
export const paintLines = (paint: (s: string) => string, text: string): string => text.split("\n").map(paint).join("\n")

/** One line cut to `width` columns, ending in `ellipsis` when cut. */
export const truncate = (line: string, width: number, ellipsis = "…"): string =>
  width <= 0 || Bun.stringWidth(line) <= width ? line : Bun.sliceAnsi(line, 0, width, ellipsis)

/** `body` wrapped beside a prefix: `first` before its first line, `rest` (same width) before the others. */
export const hang = (first: string, rest: string, body: string, width: number, keepSpace = false): Array<string> => {
  const lines = wrap(body, Math.max(1, width - Bun.stringWidth(rest)), keepSpace)
  return lines.map((line, i) => `${i === 0 ? first : rest}${line}`)
}

/** Lines already laid out, each given a prefix (the first may differ). */
export const indent = (lines: ReadonlyArray<string>, first: string, rest: string = " ".repeat(Bun.stringWidth(first))): Array<string> =>
  lines.map((line, i) => `${i === 0 ? first : rest}${line}`)
