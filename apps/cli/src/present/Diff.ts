import { type DiffStat, diffStat } from "@reins/tool"
import { plain, type Style } from "./Style.ts"
import { visible } from "./Terminal.ts"

// Counting is @reins/tool's (the module that makes the diffs); this module only shows them.
export { type DiffStat, diffStat }

/** One line of a unified diff, classified. */
export interface DiffLine {
  readonly kind: "file" | "hunk" | "add" | "remove" | "context" | "note"
  readonly text: string
}

const HUNK = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/

/**
 * Classifies the lines of a unified diff (one file or several joined, as apply_patch's metadata has
 * them). Hunk headers give each hunk's line counts, so a removed line reading `-- x` or an added
 * `++ x` is never taken for a `---`/`+++` file header.
 */
export const parseDiff = (diff: string): ReadonlyArray<DiffLine> => {
  if (diff === "") return []
  const lines: Array<DiffLine> = []
  let oldLeft = 0
  let newLeft = 0
  for (const text of diff.split("\n")) {
    const inHunk = oldLeft > 0 || newLeft > 0
    const hunk = HUNK.exec(text)
    if (!inHunk && hunk) {
      oldLeft = hunk[1] === undefined ? 1 : Number(hunk[1])
      newLeft = hunk[2] === undefined ? 1 : Number(hunk[2])
      lines.push({ kind: "hunk", text })
    } else if (inHunk && text.startsWith("+")) {
      newLeft--
      lines.push({ kind: "add", text })
    } else if (inHunk && text.startsWith("-")) {
      oldLeft--
      lines.push({ kind: "remove", text })
    } else if (inHunk && (text.startsWith(" ") || text === "")) {
      oldLeft--
      newLeft--
      lines.push({ kind: "context", text })
    } else if (text.startsWith("\\")) {
      lines.push({ kind: "note", text })
    } else {
      lines.push({ kind: text.startsWith("--- ") || text.startsWith("+++ ") || text.startsWith("diff ") ? "file" : "note", text })
    }
  }
  return lines
}

/** `+12 −3` (green and red when coloured); a side with nothing is still shown, so the shape is stable. */
export const formatStat = (stat: DiffStat, style: Style = plain): string =>
  `${style.green(`+${stat.added}`)} ${style.red(`${style.glyphs.minus}${stat.removed}`)}`

/** The diff a tool's metadata carries (edit, write, apply_patch), if any. */
export const diffOf = (metadata: Readonly<Record<string, unknown>> | undefined): string | undefined => {
  const diff = metadata?.diff
  return typeof diff === "string" && diff !== "" ? diff : undefined
}

/**
 * A unified diff as lines to print: file headers bold, hunk headers cyan, additions green, removals red.
 * `maxLines` cuts a long diff and ends it with a line saying how many lines were left out.
 */
export const renderDiff = (diff: string, style: Style = plain, maxLines = Number.POSITIVE_INFINITY): ReadonlyArray<string> => {
  const parsed = parseDiff(diff)
  const shown = parsed.slice(0, maxLines).map((line) => {
    switch (line.kind) {
      case "file":
        return style.bold(line.text)
      case "hunk":
        return style.cyan(line.text)
      case "add":
        return style.green(line.text)
      case "remove":
        return style.red(line.text)
      case "note":
        return style.dim(line.text)
      default:
        return line.text
    }
  })
  const hidden = parsed.length - shown.length
  return hidden > 0 ? [...shown, style.dim(`${style.glyphs.ellipsis} ${hidden} more diff line${hidden === 1 ? "" : "s"}`)] : shown
}

/** One file an edit asks to change, as a permission question carries it. */
export interface ChangePreviewLike {
  readonly path: string
  readonly diff: string
  readonly created?: boolean
}

/**
 * What a permission question asks to change, as lines: each file's diff, coloured, within `maxLines`
 * in all. The diff comes from the model and the files: its control characters are shown, never sent.
 */
export const previewLines = (diffs: ReadonlyArray<ChangePreviewLike>, style: Style = plain, maxLines = 40): ReadonlyArray<string> => {
  const lines: Array<string> = []
  for (const [i, preview] of diffs.entries()) {
    const left = maxLines - lines.length
    if (left <= 1) {
      if (left === 1)
        lines.push(
          style.dim(
            `${style.glyphs.ellipsis} and ${diffs.length - i} more file${diffs.length - i === 1 ? "" : "s"}: ${visible(preview.path)}${diffs.length - i > 1 ? ", …" : ""}`
          )
        )
      break
    }
    if (preview.diff === "") {
      lines.push(style.dim(`${visible(preview.path)}${preview.created ? " (new file)" : ""}: no diff to show (binary, too large, or no change)`))
      continue
    }
    lines.push(...renderDiff(visible(preview.diff), style, left - 1))
  }
  return lines
}
