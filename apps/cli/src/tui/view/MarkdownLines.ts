import type { Token, Tokens } from "marked"
import { highlight } from "./Highlight.ts"
import { hang, indent, truncate, wrap } from "./Lines.ts"
import type { Theme } from "./Theme.ts"

/**
 * Markdown as terminal lines: marked's lexer (no HTML renderer), each block laid out to the width,
 * inline text painted by present's Style (so NO_COLOR leaves no escape). marked is loaded on first
 * use, off the path to the first prompt; until then `markdownLines` has nothing to give.
 */

let lex: ((text: string) => ReadonlyArray<Token>) | undefined
let loading: Promise<void> | undefined

/** Loads the markdown lexer (once). */
export const loadMarkdown = (): Promise<void> =>
  (loading ??= import("marked").then((m) => {
    lex = (text) => m.lexer(text)
  }))

/** Whether the lexer is loaded. */
export const markdownLoaded = (): boolean => lex !== undefined

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', "#39": "'" }
const decode = (s: string) => s.replace(/&(amp|lt|gt|quot|#39);/g, (all, e: string) => ENTITIES[e] ?? all)

/** Inline tokens as one painted string. */
export const inline = (tokens: ReadonlyArray<Token> | undefined, theme: Theme): string => {
  if (tokens === undefined) return ""
  const s = theme.style
  let out = ""
  for (const token of tokens) {
    switch (token.type) {
      case "strong":
        out += s.bold(inline((token as Tokens.Strong).tokens, theme))
        break
      case "em":
        out += s.italic(inline((token as Tokens.Em).tokens, theme))
        break
      case "del":
        out += s.dim(inline((token as Tokens.Del).tokens, theme))
        break
      case "codespan": {
        const text = decode((token as Tokens.Codespan).text)
        out += s.color ? s.cyan(text) : `\`${text}\``
        break
      }
      case "link": {
        const link = token as Tokens.Link
        const text = inline(link.tokens, theme)
        out += link.text === link.href || link.href === `mailto:${link.text}` ? s.blue(text) : `${s.blue(text)} ${s.dim(`(${link.href})`)}`
        break
      }
      case "image": {
        const image = token as Tokens.Image
        out += s.dim(`[image: ${image.text || image.href}]`)
        break
      }
      case "br":
        out += "\n"
        break
      case "text": {
        const text = token as Tokens.Text
        out += text.tokens ? inline(text.tokens, theme) : decode(text.text)
        break
      }
      case "escape":
        out += decode((token as Tokens.Escape).text)
        break
      default:
        out += "text" in token && typeof token.text === "string" ? token.text : token.raw
    }
  }
  return out
}

const codeLines = (token: Tokens.Code, theme: Theme, width: number): Array<string> => {
  const bar = `${theme.style.dim(theme.glyphs.quote)} `
  const lines = highlight(token.text, token.lang, theme.style).flatMap((line) => hang(bar, bar, line, width, true))
  return token.lang ? [theme.style.dim(token.lang), ...lines] : lines
}

const pad = (s: string, width: number, align: "center" | "left" | "right" | null) => {
  const gap = Math.max(0, width - Bun.stringWidth(s))
  if (align === "right") return " ".repeat(gap) + s
  if (align === "center") return " ".repeat(Math.floor(gap / 2)) + s + " ".repeat(gap - Math.floor(gap / 2))
  return s + " ".repeat(gap)
}

const tableLines = (token: Tokens.Table, theme: Theme, width: number): Array<string> => {
  const header = token.header.map((c) => theme.style.bold(inline(c.tokens, theme)))
  const rows = token.rows.map((row) => row.map((c) => inline(c.tokens, theme)))
  const widths = header.map((h, i) => Math.max(Bun.stringWidth(h), ...rows.map((r) => Bun.stringWidth(r[i] ?? ""))))
  const sep = ` ${theme.style.dim(theme.glyphs.quote)} `
  const line = (cells: ReadonlyArray<string>) => truncate(cells.map((c, i) => pad(c, widths[i] ?? 0, token.align[i] ?? null)).join(sep), width)
  const rule = theme.style.dim(widths.map((w) => theme.glyphs.rule.repeat(w)).join(theme.glyphs.rule.repeat(3)))
  return [line(header), truncate(rule, width), ...rows.map(line)]
}

const listLines = (token: Tokens.List, theme: Theme, width: number, depth: number): Array<string> => {
  const start = typeof token.start === "number" ? token.start : 1
  const markers = token.items.map((item, i) => (token.ordered ? `${start + i}.` : item.task ? (item.checked ? "[x]" : "[ ]") : theme.glyphs.bullet))
  const markerWidth = Math.max(...markers.map((m) => m.length)) + 1
  return token.items.flatMap((item, i) => {
    const body = blockLines(
      item.tokens.filter((t) => t.type !== "checkbox"),
      theme,
      width - markerWidth,
      depth + 1,
      item.loose
    )
    const marker = theme.style.dim(markers[i]!) + " ".repeat(markerWidth - markers[i]!.length)
    const lines = indent(body.length === 0 ? [""] : body, marker, " ".repeat(markerWidth))
    return item.loose && i > 0 ? ["", ...lines] : lines
  })
}

/** Block tokens as lines; blocks are parted by a blank line, a tight list item's text is not. */
const blockLines = (tokens: ReadonlyArray<Token>, theme: Theme, width: number, depth: number, loose = true): Array<string> => {
  const s = theme.style
  const out: Array<string> = []
  const push = (lines: ReadonlyArray<string>, spaced = loose) => {
    if (spaced && out.length > 0) out.push("")
    out.push(...lines)
  }
  for (const token of tokens) {
    switch (token.type) {
      case "space":
      case "def":
        break
      case "heading": {
        const heading = token as Tokens.Heading
        const text = (s.color ? "" : `${"#".repeat(heading.depth)} `) + inline(heading.tokens, theme)
        const painted = heading.depth === 1 ? s.bold(s.magenta(text)) : heading.depth === 2 ? s.bold(s.cyan(text)) : s.bold(text)
        push(wrap(painted, width))
        break
      }
      case "paragraph":
        push(wrap(inline((token as Tokens.Paragraph).tokens, theme), width))
        break
      case "text": {
        const text = token as Tokens.Text
        push(wrap(text.tokens ? inline(text.tokens, theme) : decode(text.text), width))
        break
      }
      case "code":
        push(codeLines(token as Tokens.Code, theme, width), true)
        break
      case "list":
        push(listLines(token as Tokens.List, theme, width, depth), depth === 0 || loose)
        break
      case "blockquote": {
        const bar = `${s.dim(theme.glyphs.quote)} `
        push(indent(blockLines((token as Tokens.Blockquote).tokens, theme, width - 2, depth + 1), bar, bar), true)
        break
      }
      case "hr":
        push([s.dim(theme.glyphs.rule.repeat(Math.min(width, 40)))], true)
        break
      case "table":
        push(tableLines(token as Tokens.Table, theme, width), true)
        break
      default:
        push(wrap((token.raw ?? "").trimEnd(), width), true)
    }
  }
  return out
}

/** Markdown text as lines of at most `width` columns, or undefined while the lexer is not loaded. */
export const markdownLines = (text: string, theme: Theme, width: number): Array<string> | undefined =>
  lex === undefined ? undefined : blockLines(lex(text), theme, width, 0)
