import { duration } from "../../present/Units.ts"
import { hang, indent, paintLines, truncate, wrap } from "./Lines.ts"
import { markdownLines } from "./MarkdownLines.ts"
import type { ReasoningItem, SummaryItem, TranscriptItem } from "./State.ts"
import { toAscii } from "./Theme.ts"
import { toolLines, type ToolLineOptions } from "./ToolLines.ts"

/** How an item is drawn: as a tool call is (the theme, the width, expanded or not, the time now, …). */
export type ItemOptions = ToolLineOptions

const firstLine = (text: string) => text.trim().split("\n")[0] ?? ""
const lastLine = (text: string) => text.trimEnd().split("\n").at(-1) ?? ""

const reasoningLines = (item: ReasoningItem, o: ItemOptions): Array<string> => {
  const { style, glyphs } = o.theme
  if (item.text.trim() === "" && item.done) return []
  const took = item.start !== undefined && item.end !== undefined ? ` ${style.glyphs.dot} ${duration(item.end - item.start)}` : ""
  const label = item.done ? `thought${took}` : `thinking${style.glyphs.ellipsis}`
  if (!o.expanded) {
    const peek = item.done ? firstLine(item.text) : lastLine(item.text)
    return [truncate(style.dim(`${glyphs.collapsed} ${glyphs.think} ${label}${peek ? ` ${style.glyphs.dot} ${peek}` : ""}`), o.width, style.glyphs.ellipsis)]
  }
  return [
    style.dim(`${glyphs.expanded} ${glyphs.think} ${label}`),
    ...indent(
      wrap(
        paintLines((l) => style.dim(style.italic(l)), item.text.trim()),
        o.width - 2
      ),
      "  "
    )
  ]
}

const summaryLines = (item: SummaryItem, o: ItemOptions): Array<string> => {
  const { style, glyphs } = o.theme
  const count = item.text.trim().split("\n").length
  if (!o.expanded) return [style.dim(`${glyphs.collapsed} context summary (${count} line${count === 1 ? "" : "s"})`)]
  const body = markdownLines(item.text, o.theme, o.width - 2) ?? wrap(item.text, o.width - 2)
  return [style.dim(`${glyphs.expanded} context summary`), ...indent(body, "  ")]
}

/**
 * One item of the transcript as lines of at most `width` columns, after the blank line that parts
 * it from the one before. Undefined for an answer while the
 * markdown lexer is not loaded yet.
 */
export const itemLines = (item: TranscriptItem, o: ItemOptions): Array<string> | undefined => {
  const { style, glyphs } = o.theme
  switch (item.kind) {
    case "user":
      return [
        "",
        ...hang(`${style.bold(style.cyan(glyphs.user))} `, "  ", paintLines(style.bold, item.text) + (item.queued ? style.dim(" (queued)") : ""), o.width)
      ]
    case "file":
      return [truncate(style.dim(`  [file] ${item.name}`), o.width)]
    case "text": {
      const lines = markdownLines(item.text, o.theme, o.width)
      if (lines === undefined) return undefined
      // chunks are cut at blank lines, so each starts a block of its own
      return ["", ...lines]
    }
    case "reasoning": {
      const lines = reasoningLines(item, o)
      return lines.length === 0 ? [] : ["", ...lines]
    }
    case "tool":
      return ["", ...toolLines(item.part, o)]
    case "summary":
      return ["", ...summaryLines(item, o)]
    case "notice": {
      const paint = item.tone === "error" ? style.red : item.tone === "warn" ? style.yellow : style.dim
      const mark = item.tone === "error" ? `${style.glyphs.fail} ` : item.tone === "warn" ? `${glyphs.warn} ` : ""
      const text = o.theme.unicode ? item.text : toAscii(item.text)
      return ["", ...wrap(`${mark}${text}`, o.width).map(paint)]
    }
  }
}
