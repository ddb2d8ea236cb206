import { commonIndent, indentOf, Haystack, type Span } from "./Haystack.ts"
import { notFoundMessage } from "./NotFound.ts"
import { applySpans, disjoint, multiOccurrence, replacers, type Replacer } from "./Replacers.ts"
import { keepFinalNewline, type TextFile } from "./TextFile.ts"

/** What the ladder made of one edit. */
export type ReplaceResult =
  | {
      readonly ok: true
      readonly text: string
      /** The replacer whose matches were used. */
      readonly replacer: string
      readonly replacements: number
      /** 1-based line of each replaced match in the original text. */
      readonly lines: ReadonlyArray<number>
    }
  | { readonly ok: false; readonly reason: "not-found" | "multiple" | "identical" | "too-large" | "unchanged"; readonly message: string }

export interface ReplaceOptions {
  readonly replaceAll?: boolean
  /** How the file is named in messages. */
  readonly file: string
}

const lineCount = (text: string) => text.split("\n").length

/**
 * A match far larger than what was asked for is a wrong match: at least max(old + 3, 2 × old)
 * lines, or for multi-line text more than max(len + 500, 4 × len) characters.
 */
export const tooLarge = (oldString: string, matched: string) => {
  const oldLines = lineCount(oldString.replace(/\n$/, ""))
  const lines = lineCount(matched.replace(/\n$/, ""))
  if (lines >= Math.max(oldLines + 3, 2 * oldLines)) return true
  return oldLines > 1 && matched.length > Math.max(oldString.length + 500, 4 * oldString.length)
}

/**
 * One level of indentation among `indents`: a tab where they use tabs, else the smallest depth past the shallowest of
 * 2 spaces or more (a JSDoc ` * ` or an aligned continuation is an offset, not a level).
 */
const unitOf = (indents: ReadonlyArray<string>): string | undefined => {
  if (indents.some((i) => i.includes("\t"))) return "\t"
  const widths = indents.map((i) => i.length)
  const base = Math.min(...widths)
  // the smallest depth past the shallowest that is a level, not an offset
  const depths = widths.map((w) => w - base).filter((d) => d >= 2)
  return depths.length === 0 ? undefined : " ".repeat(Math.min(...depths))
}

/**
 * `newString` in the file's indentation, when the model wrote `oldString` in another (spaces for the file's tabs, 4
 * for its 2): each indentation of `oldString` is mapped to that of the line it matched (when they match line for
 * line), and a line of `newString` at another depth goes by levels — a level as the model wrote it becomes a level as
 * the file has it, so nested lines keep their depth; what is past a whole level (an offset) is kept. Unchanged when
 * the indentations already agree.
 */
const reindent = (oldString: string, newString: string, matched: string) => {
  const oldLines = oldString.split("\n")
  const fileLines = matched.split("\n")
  const map = new Map<string, string>()
  if (oldLines.length === fileLines.length) {
    for (const [i, line] of oldLines.entries()) {
      const fileLine = fileLines[i]!
      if (line.trim() === "" || fileLine.trim() === "") continue
      if (!map.has(indentOf(line))) map.set(indentOf(line), indentOf(fileLine))
    }
  } else {
    // the lines do not pair (a block matched with lines missing or added): only the base indentation is known
    const modelBase = commonIndent(oldLines)
    const fileBase = commonIndent(fileLines)
    if (modelBase !== undefined && fileBase !== undefined) map.set(modelBase, fileBase)
  }
  if (map.size === 0 || [...map].every(([model, file]) => model === file)) return newString
  const newIndents = newString.split("\n").flatMap((line) => (line.trim() === "" ? [] : [indentOf(line)]))
  // newString written in the file's indentation already (every line at one of the file's, none at one of the model's)
  const fileIndents = new Set(map.values())
  if (newIndents.every((i) => fileIndents.has(i) && !map.has(i))) return newString
  const [modelBase, fileBase] = [...map].sort((a, b) => a[0].length - b[0].length)[0]!
  const modelUnit = unitOf([...map.keys(), ...newIndents])
  const fileUnit = unitOf([...map.values(), ...fileLines.filter((l) => l.trim() !== "").map(indentOf)]) ?? (fileBase.includes("\t") ? "\t" : modelUnit)
  const byLevel = (indent: string): string | undefined => {
    if (modelUnit === undefined || fileUnit === undefined || !indent.startsWith(modelBase.slice(0, Math.min(modelBase.length, indent.length)))) return undefined
    const depth = indent.length - modelBase.length
    const levels = Math.floor(depth / modelUnit.length)
    const offset = " ".repeat(depth - levels * modelUnit.length)
    if (levels >= 0) return fileBase + fileUnit.repeat(levels) + offset
    return fileBase.length >= -levels * fileUnit.length ? fileBase.slice(0, fileBase.length + levels * fileUnit.length) + offset : undefined
  }
  return newString
    .split("\n")
    .map((line) => {
      if (line.trim() === "") return line
      const indent = indentOf(line)
      const mapped = map.get(indent) ?? byLevel(indent)
      if (mapped !== undefined) return mapped + line.slice(indent.length)
      // an indentation that fits no level: the base swapped, the rest kept
      return line.startsWith(modelBase) ? fileBase + line.slice(modelBase.length) : line
    })
    .join("\n")
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`

const multipleMessage = (file: Haystack, spans: ReadonlyArray<Span>, replacer: string, name: string) => {
  const perLine = new Map<number, number>()
  for (const span of spans) perLine.set(file.lineOf(span.start), (perLine.get(file.lineOf(span.start)) ?? 0) + 1)
  const where = [...perLine].map(([line, n]) => (n === 1 ? `${line}` : `${line} (${n} matches)`))
  const shown = where.slice(0, 12).join(", ") + (where.length > 12 ? `, … (${where.length - 12} more lines)` : "")
  return (
    `Found multiple matches for oldString in ${name}: ${spans.length} matches (${replacer} matcher), at line${where.length === 1 ? "" : "s"} ${shown}. ` +
    "Add more surrounding context to oldString to make the match unique, or set replaceAll to change every occurrence."
  )
}

/** The rungs a replaceAll widens with `multi-occurrence`: the whole-line ones that only forgive whitespace. */
const WIDENED = new Set(["exact", "line-trimmed", "indentation-flexible"])

/**
 * Runs the replacer ladder on `content` (LF line endings): the first replacer with a usable match
 * wins. Usable means unique without replaceAll, at least one with it, and not far larger than
 * `oldString`. Pure: the caller reads and writes the file.
 */
export const replaceText = (content: string, oldString: string, newString: string, options: ReplaceOptions): ReplaceResult => {
  if (oldString === newString) {
    return { ok: false, reason: "identical", message: "oldString and newString are identical, so there is nothing to change. Give the new text as newString." }
  }
  const file = new Haystack(content)
  const replaceAll = options.replaceAll === true
  let multiple: { spans: ReadonlyArray<Span>; replacer: string } | undefined
  let refused: { replacer: string; lines: number } | undefined
  for (const replacer of replacers) {
    if (replacer.replaceAllOnly && !replaceAll) continue
    const found = replacer.find(file, oldString)
    const spans = found.filter((span) => !tooLarge(oldString, content.slice(span.start, span.end)))
    if (spans.length < found.length && refused === undefined) {
      const big = found.find((span) => !spans.includes(span))!
      refused = { replacer: replacer.name, lines: lineCount(content.slice(big.start, big.end)) }
    }
    if (spans.length === 0) continue
    if (spans.length > 1 && !replaceAll) {
      multiple ??= { spans, replacer: replacer.name }
      continue
    }
    let used: Replacer = replacer
    let chosen = disjoint(spans)
    if (replaceAll && WIDENED.has(replacer.name)) {
      const wider = multiOccurrence.find(file, oldString).filter((span) => !tooLarge(oldString, content.slice(span.start, span.end)))
      if (wider.length > chosen.length) {
        used = multiOccurrence
        chosen = wider
      }
    }
    const base = used.adjust?.(oldString, newString) ?? newString
    const text = applySpans(content, chosen, (span) => (span.lines ? reindent(oldString, base, content.slice(span.start, span.end)) : base))
    if (text === content) {
      return {
        ok: false,
        reason: "unchanged",
        message: `The edit would leave ${options.file} unchanged: the matched text already equals newString. Re-read the file to check its current content.`
      }
    }
    return { ok: true, text, replacer: used.name, replacements: chosen.length, lines: chosen.map((span) => file.lineOf(span.start)) }
  }
  if (multiple) return { ok: false, reason: "multiple", message: multipleMessage(file, multiple.spans, multiple.replacer, options.file) }
  if (refused) {
    return {
      ok: false,
      reason: "too-large",
      message:
        `Could not find oldString in ${options.file}. The closest match (${refused.replacer} matcher) spans ${plural(refused.lines, "line")}, far more than oldString's ` +
        `${plural(lineCount(oldString), "line")}, so it was refused. Re-read the file and copy the exact text you want to replace.`
    }
  }
  return { ok: false, reason: "not-found", message: notFoundMessage(file, oldString, options.file) }
}

const lf = (text: string) => text.replace(/\r\n/g, "\n")

/**
 * The edit of a decoded file: the strings' line endings made LF to match its text, and the file's
 * final-newline state kept. The caller writes `text` back with `encodeText`.
 */
export const editDecoded = (file: TextFile, oldString: string, newString: string, options: ReplaceOptions): ReplaceResult => {
  const result = replaceText(file.text, lf(oldString), lf(newString), options)
  return result.ok ? { ...result, text: keepFinalNewline(file.text, result.text) } : result
}
