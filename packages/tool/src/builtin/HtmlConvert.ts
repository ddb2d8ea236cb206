// A fetched page as the model reads it: HTML to Markdown (turndown, over its own pure-JS DOM parser) or to
// plain text (the same parse, every tag dropped but its text, blocks on lines of their own). What a page runs
// or styles with (scripts, styles, embedded objects, forms' hidden templates) is dropped either way.
import { Effect } from "effect"
import type TurndownService from "turndown"

/** Elements whose content is never text for a reader. */
const DROPPED = ["script", "style", "noscript", "template", "iframe", "object", "embed", "svg", "canvas", "head", "title", "meta", "link"] as const

/** Elements that stand on lines of their own in plain text. */
const BLOCKS = new Set([
  "ADDRESS",
  "ARTICLE",
  "ASIDE",
  "BLOCKQUOTE",
  "BODY",
  "DD",
  "DETAILS",
  "DIV",
  "DL",
  "DT",
  "FIELDSET",
  "FIGCAPTION",
  "FIGURE",
  "FOOTER",
  "FORM",
  "H1",
  "H2",
  "H3",
  "H4",
  "H5",
  "H6",
  "HEADER",
  "HR",
  "LI",
  "MAIN",
  "NAV",
  "OL",
  "P",
  "PRE",
  "SECTION",
  "SUMMARY",
  "TABLE",
  "TR",
  "UL"
])

type Turndown = typeof TurndownService

/** The little of turndown's DOM (domino's) these rules read: typed here, as reins compiles without the DOM library. */
interface DomNode {
  readonly nodeName: string
  readonly parentNode: DomNode | null
  readonly nextSibling: DomNode | null
  readonly children: ArrayLike<DomNode>
  getAttribute(name: string): string | null
}
const dom = (node: unknown) => node as DomNode

// each list's items numbered once (not an indexOf over its children per item, which grows with the square of the list)
const positions = new WeakMap<DomNode, Map<DomNode, number>>()
const indexIn = (parent: DomNode | null, node: DomNode) => {
  if (parent === null) return 0
  let known = positions.get(parent)
  if (known === undefined) {
    known = new Map(Array.from(parent.children, (child, i) => [child, i] as const))
    positions.set(parent, known)
  }
  return known.get(node) ?? 0
}
// loaded at the first page converted: a run that fetches nothing does not load the parser
let loaded: Turndown | undefined
const turndown = Effect.promise(async () => {
  loaded ??= (await import("turndown")).default
  return loaded
})

/** Past these a page is not parsed (domino's parse grows faster than the page, and deep nesting overflows its stack). */
const MAX_ELEMENTS = 10_000
const MAX_DEPTH = 256
const VOID = new Set([
  "area",
  "base",
  "br",
  "col",
  "embed",
  "hr",
  "img",
  "input",
  "link",
  "meta",
  "source",
  "track",
  "wbr",
  "p",
  "li",
  "td",
  "tr",
  "th",
  "option"
])

/** Whether the page has more elements or deeper nesting than a parse is allowed (one linear scan of its tags). */
export const tooComplex = (html: string) => {
  let depth = 0
  let count = 0
  for (const m of html.matchAll(/<(\/?)([a-zA-Z][\w-]*)[^>]*?(\/?)>/g)) {
    if (++count > MAX_ELEMENTS) return true
    // elements whose end tag pages leave out (p, li, td) are not counted as nesting
    if (m[1] === "/") depth = Math.max(0, depth - 1)
    else if (m[3] !== "/" && !VOID.has(m[2]!.toLowerCase()) && ++depth > MAX_DEPTH) return true
  }
  return false
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " " }

/** A page too complex to parse, as text by a linear strip of its tags: what it runs or styles dropped, blocks on lines of their own. */
const stripTags = (html: string) =>
  tidy(
    `(the page is too large or too deeply nested to convert: its text follows)\n\n${html
      .replace(/<(script|style|noscript|template|svg)\b[^>]*>[^<]*(?:<(?!\/\1)[^<]*)*<\/\1\s*>/gi, "")
      .replace(/<br\s*\/?>|<\/(?:p|div|li|h[1-6]|tr|pre|blockquote|section|article)\s*>/gi, "\n")
      .replace(/<[^>]*>/g, "")
      .replace(/&(#\d+|#x[\da-f]+|[a-z]+);/gi, (whole, name: string) =>
        name.startsWith("#x") || name.startsWith("#X")
          ? String.fromCodePoint(Number.parseInt(name.slice(2), 16) || 32)
          : name.startsWith("#")
            ? String.fromCodePoint(Number(name.slice(1)) || 32)
            : (ENTITIES[name.toLowerCase()] ?? whole)
      )}`
  )

/** Runs of blank lines made one, trailing spaces gone. */
const tidy = (text: string) =>
  text
    .replace(/[ \t]+$/gm, "")
    .replace(/\n{3,}/g, "\n\n")
    .trim()

/** HTML as Markdown: ATX headings, fenced code, `-` lists; scripts and styles dropped. */
export const htmlToMarkdown = (html: string) => (tooComplex(html) ? Effect.succeed(stripTags(html)) : markdownOf(html))

const markdownOf = (html: string) =>
  Effect.map(turndown, (Service) => {
    const service = new Service({ headingStyle: "atx", codeBlockStyle: "fenced", bulletListMarker: "-", emDelimiter: "*", hr: "---" })
    service.remove([...DROPPED])
    // `- item`, not turndown's `-   item`: the same Markdown in fewer tokens
    service.addRule("listItem", {
      filter: "li",
      replacement: (content, element, options) => {
        const node = dom(element)
        const parent = node.parentNode
        const ordered = parent?.nodeName === "OL"
        const start = parent !== null && ordered ? Number(parent.getAttribute("start") ?? 1) : 1
        const marker = ordered ? `${start + indexIn(parent, node)}. ` : `${options.bulletListMarker} `
        const body = content
          .replace(/^\n+/, "")
          .replace(/\n+$/, "\n")
          .replace(/\n/g, `\n${" ".repeat(marker.length)}`)
        return marker + body + (node.nextSibling && !body.endsWith("\n") ? "\n" : "")
      }
    })
    return tidy(service.turndown(html))
  })

/** HTML as plain text: the text of every element, blocks and line breaks on lines of their own, entities decoded. */
export const htmlToText = (html: string) => (tooComplex(html) ? Effect.succeed(stripTags(html)) : textOf(html))

const textOf = (html: string) =>
  Effect.map(turndown, (Service) => {
    const service = new Service()
    service.remove([...DROPPED])
    // a rule for every other element: its text only (added rules win over Markdown's own; removed ones match none)
    service.addRule("text", {
      filter: (node) => !(DROPPED as ReadonlyArray<string>).includes(dom(node).nodeName.toLowerCase()),
      replacement: (content, node) => {
        const name = dom(node).nodeName
        return name === "BR" ? "\n" : BLOCKS.has(name) ? `\n\n${content.trim()}\n\n` : content
      }
    })
    service.escape = (text: string) => text
    return tidy(service.turndown(html))
  })
