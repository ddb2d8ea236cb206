import { Box, Text } from "ink"
import type { Token, Tokens } from "marked"
import { memo, useEffect, useState, type ReactNode } from "react"
import type { Theme } from "./Theme.ts"
import { useTheme } from "./Theme.ts"
import { highlight } from "./Highlight.ts"

// marked is loaded on first use, off the path to the first prompt; until then text shows as written
let lex: ((text: string) => ReadonlyArray<Token>) | undefined
let loading: Promise<void> | undefined

/** Loads the markdown lexer (once); the transcript waits for it before printing an answer for good. */
export const loadMarkdown = (): Promise<void> =>
  (loading ??= import("marked").then((m) => {
    lex = (text) => m.lexer(text)
  }))

/** Whether markdown renders yet; re-renders the caller once it does. */
export const useMarkdownReady = (): boolean => {
  const [ready, setReady] = useState(lex !== undefined)
  useEffect(() => {
    if (ready) return
    let live = true
    void loadMarkdown().then(() => live && setReady(true))
    return () => {
      live = false
    }
  }, [ready])
  return ready
}

/**
 * Markdown as the terminal shows it: marked's lexer (no HTML renderer), each block an Ink box, the
 * inline text of a block one string painted by present's Style (so NO_COLOR leaves no escape).
 */

const decode = (s: string) =>
  s.replace(/&(amp|lt|gt|quot|#39);/g, (_, e: string) => ({ amp: "&", lt: "<", gt: ">", quot: '"', "#39": "'" })[e] ?? _)

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
        const plainText = link.text
        out += plainText === link.href || link.href === `mailto:${plainText}` ? s.blue(text) : `${s.blue(text)} ${s.dim(`(${link.href})`)}`
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
      case "html":
        out += (token as Tokens.HTML).text
        break
      default:
        out += "raw" in token ? String(token.raw) : ""
    }
  }
  return out
}

const Code = ({ token, theme }: { token: Tokens.Code; theme: Theme }) => {
  const lines = highlight(token.text, token.lang, theme.style)
  const bar = theme.style.dim(theme.glyphs.quote)
  return (
    <Box flexDirection="column">
      {token.lang ? <Text>{theme.style.dim(token.lang)}</Text> : null}
      {lines.map((line, i) => (
        <Text key={i} wrap="wrap">
          {bar} {line}
        </Text>
      ))}
    </Box>
  )
}

const cellWidth = (s: string) => Bun.stringWidth(s)

const pad = (s: string, width: number, align: "center" | "left" | "right" | null) => {
  const gap = Math.max(0, width - cellWidth(s))
  if (align === "right") return " ".repeat(gap) + s
  if (align === "center") return " ".repeat(Math.floor(gap / 2)) + s + " ".repeat(gap - Math.floor(gap / 2))
  return s + " ".repeat(gap)
}

const Table = ({ token, theme }: { token: Tokens.Table; theme: Theme }) => {
  const header = token.header.map((c) => theme.style.bold(inline(c.tokens, theme)))
  const rows = token.rows.map((row) => row.map((c) => inline(c.tokens, theme)))
  const widths = header.map((h, i) => Math.max(cellWidth(h), ...rows.map((r) => cellWidth(r[i] ?? ""))))
  const sep = ` ${theme.style.dim(theme.glyphs.quote)} `
  const line = (cells: ReadonlyArray<string>) => cells.map((c, i) => pad(c, widths[i] ?? 0, token.align[i] ?? null)).join(sep)
  return (
    <Box flexDirection="column">
      <Text wrap="truncate-end">{line(header)}</Text>
      <Text wrap="truncate-end">{theme.style.dim(widths.map((w) => theme.glyphs.rule.repeat(w)).join(`${theme.glyphs.rule}${theme.glyphs.rule}${theme.glyphs.rule}`))}</Text>
      {rows.map((r, i) => (
        <Text key={i} wrap="truncate-end">
          {line(r)}
        </Text>
      ))}
    </Box>
  )
}

const List = ({ token, theme, depth }: { token: Tokens.List; theme: Theme; depth: number }) => {
  const start = typeof token.start === "number" ? token.start : 1
  return (
    <Box flexDirection="column">
      {token.items.map((item, i) => {
        const marker = token.ordered ? `${start + i}.` : item.task ? (item.checked ? "[x]" : "[ ]") : theme.glyphs.bullet
        return (
          <Box key={i} flexDirection="row">
            <Text>{theme.style.dim(marker)} </Text>
            <Box flexDirection="column" flexGrow={1} flexShrink={1}>
              {blocks(item.tokens.filter((t) => t.type !== "checkbox"), theme, depth + 1, item.loose)}
            </Box>
          </Box>
        )
      })}
    </Box>
  )
}

/** Block tokens as Ink elements; `tight` lists keep their items' text without blank lines between. */
const blocks = (tokens: ReadonlyArray<Token>, theme: Theme, depth: number, loose = true): Array<ReactNode> => {
  const s = theme.style
  const out: Array<ReactNode> = []
  const gap = (key: string) => {
    if (loose && out.length > 0) out.push(<Text key={`gap-${key}`}> </Text>)
  }
  tokens.forEach((token, i) => {
    const key = String(i)
    switch (token.type) {
      case "space":
      case "def":
        return
      case "heading": {
        const heading = token as Tokens.Heading
        const text = inline(heading.tokens, theme)
        gap(key)
        const prefix = s.color ? "" : `${"#".repeat(heading.depth)} `
        out.push(
          <Text key={key} wrap="wrap">
            {heading.depth === 1 ? s.bold(s.magenta(prefix + text)) : heading.depth === 2 ? s.bold(s.cyan(prefix + text)) : s.bold(prefix + text)}
          </Text>
        )
        return
      }
      case "paragraph":
        gap(key)
        out.push(
          <Text key={key} wrap="wrap">
            {inline((token as Tokens.Paragraph).tokens, theme)}
          </Text>
        )
        return
      case "text": {
        // the text of a tight list item
        const text = token as Tokens.Text
        if (loose) gap(key)
        out.push(
          <Text key={key} wrap="wrap">
            {text.tokens ? inline(text.tokens, theme) : decode(text.text)}
          </Text>
        )
        return
      }
      case "code":
        gap(key)
        out.push(<Code key={key} token={token as Tokens.Code} theme={theme} />)
        return
      case "list":
        if (depth === 0 || loose) gap(key)
        out.push(<List key={key} token={token as Tokens.List} theme={theme} depth={depth} />)
        return
      case "blockquote":
        gap(key)
        out.push(
          <Box key={key} flexDirection="row">
            <Text>{s.dim(theme.glyphs.quote)} </Text>
            <Box flexDirection="column" flexGrow={1} flexShrink={1}>
              {blocks((token as Tokens.Blockquote).tokens, theme, depth + 1)}
            </Box>
          </Box>
        )
        return
      case "hr":
        gap(key)
        out.push(<Text key={key}>{s.dim(theme.glyphs.rule.repeat(20))}</Text>)
        return
      case "table":
        gap(key)
        out.push(<Table key={key} token={token as Tokens.Table} theme={theme} />)
        return
      case "html":
        gap(key)
        out.push(
          <Text key={key} wrap="wrap">
            {(token as Tokens.HTML).text.trimEnd()}
          </Text>
        )
        return
      default:
        gap(key)
        out.push(
          <Text key={key} wrap="wrap">
            {token.raw.trimEnd()}
          </Text>
        )
    }
  })
  return out
}

/** Markdown text rendered for the terminal. Memoised on its text: a finished block is lexed once. */
export const Markdown = memo(({ text }: { text: string }) => {
  const theme = useTheme()
  const ready = useMarkdownReady()
  if (!ready || lex === undefined) return <Text wrap="wrap">{text.trimEnd()}</Text>
  return <Box flexDirection="column">{blocks(lex(text), theme, 0)}</Box>
})
