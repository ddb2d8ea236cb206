import { commonIndent, Haystack, searchLines, type Span } from "./Haystack.ts"
import { similarityAtLeast } from "./Similarity.ts"

export { Haystack, type Span }

/** One way of finding `oldString` in a file; the ladder tries them in order until one is usable. */
export interface Replacer {
  readonly name: string
  /** Only tried when every occurrence is to be replaced. */
  readonly replaceAllOnly?: boolean
  /** Every match in file order; matches may overlap (they then count as several, and replaceAll keeps the first). */
  find(file: Haystack, oldString: string): Array<Span>
  /** The replacement text for this replacer's matches, when it differs from `newString`. */
  adjust?(oldString: string, newString: string): string
}

/** Block-anchor: the middle lines' similarity needed, and the line-count drift allowed. */
export const BLOCK_ANCHOR_SIMILARITY = 0.65
export const blockAnchorDrift = (lines: number) => Math.max(1, Math.floor(lines * 0.25))
/** Edit-distance cells block-anchor may spend on one search (about 0.2 s) before giving up. */
export const BLOCK_ANCHOR_WORK = 40_000_000

/** Keeps spans that do not overlap one already kept, in file order. */
export const disjoint = (spans: ReadonlyArray<Span>): Array<Span> => {
  const sorted = [...spans].sort((a, b) => a.start - b.start || b.end - a.end)
  const kept: Array<Span> = []
  for (const span of sorted) {
    const last = kept[kept.length - 1]
    if (last === undefined || span.start >= last.end) kept.push(span)
  }
  return kept
}

/** Every occurrence of `text`, overlapping ones included (`aa` occurs twice in `aaa`). */
const indexAll = (content: string, text: string): Array<Span> => {
  const spans: Array<Span> = []
  if (text === "") return spans
  let index = content.indexOf(text)
  while (index !== -1) {
    spans.push({ start: index, end: index + text.length })
    index = content.indexOf(text, index + 1)
  }
  return spans
}

const WORD = /[A-Za-z0-9_$]/

/**
 * A loose match must not start or end inside a word: `count` is not found in `counter`.
 * Only checked where the searched text itself begins or ends with a word character.
 */
const atWordBoundaries = (content: string, span: Span) => {
  const first = content[span.start]!
  const last = content[span.end - 1]!
  if (WORD.test(first) && span.start > 0 && WORD.test(content[span.start - 1]!)) return false
  if (WORD.test(last) && span.end < content.length && WORD.test(content[span.end]!)) return false
  return true
}

/**
 * For matchers that leave oldString's surrounding whitespace out of the span: the same leading and
 * trailing whitespace is taken off newString, so the file's own indentation and newlines stay.
 */
const withoutOuterWhitespace = (oldString: string, newString: string) => {
  const lead = oldString.slice(0, oldString.length - oldString.trimStart().length)
  const trail = oldString.slice(oldString.trimEnd().length)
  let out = newString
  if (lead !== "" && out.startsWith(lead)) out = out.slice(lead.length)
  if (trail !== "" && out.endsWith(trail)) out = out.slice(0, out.length - trail.length)
  return out
}

/**
 * The first line each candidate block of `count` lines could start at: blocks whose line `offset`
 * has the trimmed text `key` (the first non-blank line of the search).
 */
const candidateStarts = (file: Haystack, trimmedSearch: ReadonlyArray<string>, count: number) => {
  const offset = trimmedSearch.findIndex((line) => line !== "")
  if (offset === -1) return []
  return file
    .linesTrimmedTo(trimmedSearch[offset]!)
    .map((line) => line - offset)
    .filter((start) => start >= 0 && start + count <= file.lineCount)
}

/** Whole-line blocks accepted by `accept(start)`, as non-overlapping spans. */
const lineBlocks = (file: Haystack, oldString: string, accept: (start: number, count: number) => boolean) => {
  const { lines, endsWithNewline } = searchLines(oldString)
  const trimmed = lines.map((line) => line.trim())
  const spans: Array<Span> = []
  for (const start of candidateStarts(file, trimmed, lines.length)) {
    if (accept(start, lines.length)) spans.push(file.block(start, start + lines.length - 1, endsWithNewline))
  }
  return spans
}

/** The text exactly as given. */
export const exact: Replacer = {
  name: "exact",
  find: (file, oldString) => indexAll(file.content, oldString)
}

/** Whole lines equal after trimming each: forgives indentation and trailing spaces. */
export const lineTrimmed: Replacer = {
  name: "line-trimmed",
  find: (file, oldString) => {
    const wanted = searchLines(oldString).lines.map((line) => line.trim())
    return lineBlocks(file, oldString, (start) => wanted.every((line, j) => file.trimmed[start + j] === line))
  }
}

/**
 * At least 3 lines whose first and last lines match (trimmed) and whose middle is similar enough
 * (≥ 0.65 by edit distance), allowing the block to have a few lines more or fewer.
 */
export const blockAnchor: Replacer = {
  name: "block-anchor",
  find: (file, oldString) => {
    const { lines, endsWithNewline } = searchLines(oldString)
    const n = lines.length
    if (n < 3) return []
    const first = lines[0]!.trim()
    const last = lines[n - 1]!.trim()
    if (first === "" || last === "") return []
    const middle = lines
      .slice(1, -1)
      .map((line) => line.trim())
      .join("\n")
    const drift = blockAnchorDrift(n)
    const spans: Array<Span> = []
    // Common anchors (`}`) make many candidates: past this much edit-distance work the anchors
    // cannot single out a block, and the rung gives up rather than stall the edit.
    let work = 0
    for (const start of file.linesTrimmedTo(first)) {
      let best: { end: number; score: number } | undefined
      for (let size = Math.max(3, n - drift); size <= n + drift; size++) {
        const end = start + size - 1
        if (end >= file.lineCount) break
        if (file.trimmed[end] !== last) continue
        const candidate = file.trimmed.slice(start + 1, end).join("\n")
        work += Math.max(middle.length, candidate.length) * (1 + 2 * Math.ceil((1 - BLOCK_ANCHOR_SIMILARITY) * Math.max(middle.length, candidate.length)))
        if (work > BLOCK_ANCHOR_WORK) return []
        const score = similarityAtLeast(middle, candidate, BLOCK_ANCHOR_SIMILARITY)
        if (score >= BLOCK_ANCHOR_SIMILARITY && (best === undefined || score > best.score)) best = { end, score }
      }
      if (best) spans.push(file.block(start, best.end, endsWithNewline))
    }
    return spans
  }
}

const isSpace = (code: number) => code === 32 || code === 10 || code === 9 || code === 13 || code === 12 || code === 11 || code === 0xa0

/**
 * Where a match of `wanted` (whitespace collapsed to single spaces, trimmed) starting at `from`
 * ends, when every space in it stands for a run of whitespace in `content`; -1 when it does not match.
 */
const matchCollapsed = (content: string, from: number, wanted: string) => {
  let i = from
  for (let j = 0; j < wanted.length; j++) {
    if (wanted.charCodeAt(j) === 32) {
      if (i >= content.length || !isSpace(content.charCodeAt(i))) return -1
      while (i < content.length && isSpace(content.charCodeAt(i))) i++
    } else if (content.charCodeAt(i) === wanted.charCodeAt(j)) i++
    else return -1
  }
  return i
}

/** The text with every run of whitespace (newlines included) treated as one space. */
export const whitespaceNormalized: Replacer = {
  name: "whitespace-normalized",
  find: (file, oldString) => {
    const wanted = oldString.trim().replace(/\s+/g, " ")
    if (wanted === "") return []
    // Each match starts with the first word, so only its occurrences are tried.
    const word = wanted.split(" ", 1)[0]!
    const spans: Array<Span> = []
    let at = file.content.indexOf(word)
    while (at !== -1) {
      const end = matchCollapsed(file.content, at, wanted)
      if (end !== -1 && atWordBoundaries(file.content, { start: at, end })) spans.push({ start: at, end })
      at = file.content.indexOf(word, at + 1)
    }
    return spans
  },
  adjust: withoutOuterWhitespace
}

/** Lines with their shared indentation removed and trailing spaces dropped. */
const dedent = (lines: ReadonlyArray<string>) => {
  const indent = commonIndent(lines) ?? ""
  return lines.map((line) => (line.trim() === "" ? "" : line.slice(indent.length).trimEnd()))
}

/** Whole lines equal once each side's common indentation is removed: keeps the relative indentation. */
export const indentationFlexible: Replacer = {
  name: "indentation-flexible",
  find: (file, oldString) => {
    const wanted = dedent(searchLines(oldString).lines)
    return lineBlocks(file, oldString, (start, count) => {
      const block = dedent(file.lines.slice(start, start + count))
      return block.every((line, j) => line === wanted[j])
    })
  }
}

const ESCAPES: Record<string, string> = { n: "\n", t: "\t", r: "\r", "'": "'", '"': '"', "`": "`", "\\": "\\", $: "$" }

/** Turns escape sequences written literally (`\n`, `\t`, `\"` …) into the characters they stand for. */
export const unescapeLiterals = (text: string) => text.replace(/\\([ntr'"`\\$])/g, (_, c: string) => ESCAPES[c]!)

/** The text with literally written escapes (`\n`, `\t`, `\"`) read as the characters they name. */
export const escapeNormalized: Replacer = {
  name: "escape-normalized",
  find: (file, oldString) => {
    const wanted = unescapeLiterals(oldString)
    if (wanted === oldString) return []
    const spans = exact.find(file, wanted)
    return spans.length > 0 ? spans : lineTrimmed.find(file, wanted)
  },
  // The model escaped oldString once too often, so newString was written the same way.
  adjust: (_oldString, newString) => unescapeLiterals(newString)
}

/** The text without its leading and trailing whitespace, matched exactly. */
export const trimmedBoundary: Replacer = {
  name: "trimmed-boundary",
  find: (file, oldString) => {
    const trimmed = oldString.trim()
    return trimmed === oldString ? [] : exact.find(file, trimmed).filter((span) => atWordBoundaries(file.content, span))
  },
  adjust: withoutOuterWhitespace
}

/**
 * At least 3 lines, the same number in the file, first and last lines matching (trimmed) and at
 * least half of the middle lines equal after trimming.
 */
export const contextAware: Replacer = {
  name: "context-aware",
  find: (file, oldString) => {
    const { lines } = searchLines(oldString)
    const n = lines.length
    if (n < 3) return []
    const trimmed = lines.map((line) => line.trim())
    if (trimmed[0] === "" || trimmed[n - 1] === "") return []
    return lineBlocks(file, oldString, (start) => {
      if (file.trimmed[start + n - 1] !== trimmed[n - 1]) return false
      let same = 0
      for (let j = 1; j < n - 1; j++) if (file.trimmed[start + j] === trimmed[j]) same++
      return same * 2 >= n - 2
    })
  }
}

/**
 * For replaceAll: every occurrence, each of which may differ from `oldString` in its own way
 * (exactly, or in indentation and trailing spaces). A rung above stops at the first kind it finds;
 * this one gathers all of them.
 */
export const multiOccurrence: Replacer = {
  name: "multi-occurrence",
  replaceAllOnly: true,
  find: (file, oldString) => {
    const spans: Array<Span> = []
    // Only whole-line matchers widen: the loose substring ones would reach into unrelated code.
    for (const replacer of [exact, lineTrimmed, indentationFlexible]) {
      for (const span of replacer.find(file, oldString)) {
        if (!spans.some((kept) => span.start < kept.end && kept.start < span.end)) spans.push(span)
      }
    }
    return spans.sort((a, b) => a.start - b.start)
  }
}

/** The replacers `edit` tries, in order. */
export const replacers: ReadonlyArray<Replacer> = [
  exact,
  lineTrimmed,
  blockAnchor,
  whitespaceNormalized,
  indentationFlexible,
  escapeNormalized,
  trimmedBoundary,
  contextAware,
  multiOccurrence
]

/** Replaces the given spans (in file order, non-overlapping) with their replacements. */
export const applySpans = (content: string, spans: ReadonlyArray<Span>, replacement: string | ((span: Span) => string)) => {
  let out = ""
  let cursor = 0
  for (const span of spans) {
    out += content.slice(cursor, span.start) + (typeof replacement === "string" ? replacement : replacement(span))
    cursor = span.end
  }
  return out + content.slice(cursor)
}
