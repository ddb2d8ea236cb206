import { type Haystack, searchLines } from "./Haystack.ts"
import { plainPunctuation } from "./Punctuation.ts"
import { unescapeLiterals } from "./Replacers.ts"

/** Lines of context shown around the nearest region. */
const CONTEXT = 3
/** Longest search compared line by line; the rest of a longer oldString is not described. */
const MAX_ALIGNED = 200
/** A line occurring more often than this says nothing about where the text is. */
const MAX_OCCURRENCES = 500

/**
 * The 0-based first line of the region most like `search` (its lines trimmed): the start that the
 * most (and the rarest) identical lines agree on, or failing that the line sharing the most words.
 */
export const nearestStart = (file: Haystack, search: ReadonlyArray<string>): number | undefined =>
  vote(file, search, (count) => count <= MAX_OCCURRENCES, Infinity) ??
  // Only common lines are shared: let the first few of them place the region.
  vote(file, search, () => true, 3) ??
  nearestByWords(file, search)

/** The start most (and the rarest) identical lines agree on, counting lines that pass `use`. */
const vote = (file: Haystack, search: ReadonlyArray<string>, use: (count: number) => boolean, maxLines: number) => {
  const votes = new Map<number, number>()
  let used = 0
  search.forEach((line, k) => {
    if (line === "" || used >= maxLines) return
    const found = file.linesTrimmedTo(line)
    if (found.length === 0 || !use(found.length)) return
    used++
    const weight = 1 / Math.sqrt(found.length)
    for (const i of found) votes.set(i - k, (votes.get(i - k) ?? 0) + weight)
  })
  let best: number | undefined
  let bestScore = 0
  for (const [start, score] of votes) {
    if (score > bestScore || (score === bestScore && best !== undefined && start < best)) {
      best = start
      bestScore = score
    }
  }
  return best
}

const words = (text: string) => new Set(text.match(/[A-Za-z0-9_$]{2,}/g) ?? [])

/** No line is identical: the file line sharing the most words with one search line, aligned to it. */
const nearestByWords = (file: Haystack, search: ReadonlyArray<string>): number | undefined => {
  const wanted = words(search.join("\n"))
  if (wanted.size === 0) return undefined
  const credit = new Map<number, Set<string>>()
  for (const match of file.content.matchAll(/[A-Za-z0-9_$]{2,}/g)) {
    if (!wanted.has(match[0])) continue
    const line = file.lineOf(match.index) - 1
    const set = credit.get(line)
    if (set) set.add(match[0])
    else credit.set(line, new Set([match[0]]))
  }
  let line: number | undefined
  let most = 0
  for (const [index, found] of credit) {
    if (found.size > most) {
      line = index
      most = found.size
    }
  }
  if (line === undefined) return undefined
  const lineWords = credit.get(line)!
  let offset = 0
  let shared = -1
  search.forEach((text, k) => {
    const count = [...words(text)].filter((w) => lineWords.has(w)).length
    if (count > shared) {
      shared = count
      offset = k
    }
  })
  return line - offset
}

type Op =
  | { readonly kind: "same"; readonly k: number; readonly i: number }
  | { readonly kind: "old"; readonly k: number }
  | { readonly kind: "file"; readonly i: number }

/** Aligns search lines with file lines (both trimmed) by their longest common subsequence. */
const align = (search: ReadonlyArray<string>, region: ReadonlyArray<string>, first: number): Array<Op> => {
  const n = search.length
  const m = region.length
  const width = m + 1
  const table = new Uint16Array((n + 1) * width)
  for (let k = n - 1; k >= 0; k--) {
    for (let i = m - 1; i >= 0; i--) {
      table[k * width + i] = search[k] === region[i] ? table[(k + 1) * width + i + 1]! + 1 : Math.max(table[(k + 1) * width + i]!, table[k * width + i + 1]!)
    }
  }
  const ops: Array<Op> = []
  let k = 0
  let i = 0
  while (k < n && i < m) {
    if (search[k] === region[i]) ops.push({ kind: "same", k: k++, i: first + i++ })
    else if (table[(k + 1) * width + i]! >= table[k * width + i + 1]!) ops.push({ kind: "old", k: k++ })
    else ops.push({ kind: "file", i: first + i++ })
  }
  while (k < n) ops.push({ kind: "old", k: k++ })
  while (i < m) ops.push({ kind: "file", i: first + i++ })
  return ops
}

/** How a line the model wrote differs from the file's line. */
const difference = (wrote: string, has: string) => {
  if (wrote.trim() === has.trim()) return "differs only in indentation or trailing spaces"
  if (wrote.replace(/\s+/g, "") === has.replace(/\s+/g, "")) return "differs in spacing"
  if (unescapeLiterals(wrote) === has) return 'has escape sequences (\\n, \\t, \\") where the file has the characters'
  if (plainPunctuation(wrote) === plainPunctuation(has)) return "differs in quote, dash or space characters"
  return "differs"
}

const quote = (text: string) => {
  const shown = text.length > 120 ? `${text.slice(0, 117)}...` : text
  return JSON.stringify(shown)
}

const numbered = (file: Haystack, from: number, to: number) =>
  file.lines
    .slice(from, to + 1)
    .map((line, j) => `${String(from + j + 1).padStart(5, "0")}| ${line}`)
    .join("\n")

/**
 * The "could not find" message: where the nearest text is, how it differs from oldString, the
 * region with line numbers, and which range to re-read.
 */
export const notFoundMessage = (file: Haystack, oldString: string, name: string): string => {
  const written = searchLines(oldString).lines
  // A search written with literal escapes is located by what it means.
  const lines = !oldString.includes("\n") && oldString !== unescapeLiterals(oldString) ? searchLines(unescapeLiterals(oldString)).lines : written
  const search = lines.slice(0, MAX_ALIGNED)
  const trimmed = search.map((line) => line.trim())
  const guess = nearestStart(file, trimmed)
  const head = `Could not find oldString in ${name}.`
  const advice = "Re-read the file with the read tool and copy the exact text, including whitespace."
  if (guess === undefined || file.lines.length === 0) return `${head} No part of the file resembles it. ${advice}`
  const slack = Math.max(2, Math.floor(search.length * 0.25))
  const first = Math.min(Math.max(0, guess), file.lines.length - 1)
  const last = Math.min(file.lines.length - 1, Math.max(first, guess + search.length - 1 + slack))
  const ops = align(trimmed, file.trimmed.slice(first, last + 1), first)
  const matched = ops.filter((op) => op.kind === "same")
  const regionStart = matched.length > 0 ? Math.min(first, ...matched.map((op) => op.i)) : first
  const regionEnd = matched.length > 0 ? Math.max(...matched.map((op) => op.i)) : Math.min(file.lines.length - 1, first + search.length - 1)
  const notes: Array<string> = []
  // Pair what the model wrote with what the file has, gap by gap between aligned lines.
  let pendingOld: Array<number> = []
  let pendingFile: Array<number> = []
  const flush = () => {
    const pairs = Math.min(pendingOld.length, pendingFile.length)
    for (let p = 0; p < pairs; p++) {
      const k = pendingOld[p]!
      const i = pendingFile[p]!
      notes.push(`line ${i + 1} ${difference(search[k]!, file.lines[i]!)}: you wrote ${quote(search[k]!.trim())}, the file has ${quote(file.lines[i]!.trim())}`)
    }
    for (const k of pendingOld.slice(pairs)) notes.push(`your line ${quote(search[k]!.trim())} is not in the file there`)
    for (const i of pendingFile.slice(pairs)) if (i <= regionEnd) notes.push(`the file has an extra line ${i + 1}: ${quote(file.lines[i]!.trim())}`)
    pendingOld = []
    pendingFile = []
  }
  for (const op of ops) {
    if (op.kind === "old") pendingOld.push(op.k)
    else if (op.kind === "file") pendingFile.push(op.i)
    else {
      flush()
      if (search[op.k] !== file.lines[op.i]) notes.push(`line ${op.i + 1} ${difference(search[op.k]!, file.lines[op.i]!)}`)
    }
  }
  flush()
  const regionLines = `${regionStart + 1}-${regionEnd + 1}`
  const summary = `The nearest text is at lines ${regionLines}, where ${matched.length} of ${written.length} lines of oldString match`
  const shownNotes = notes.slice(0, 5).join("; ") + (notes.length > 5 ? `; and ${notes.length - 5} more differences` : "")
  const from = Math.max(0, regionStart - CONTEXT)
  const to = Math.min(file.lines.length - 1, regionEnd + CONTEXT)
  const escapes = lines !== written ? " oldString has escape sequences such as \\n written literally; use real newlines and tabs." : ""
  return (
    `${head} ${summary}${notes.length > 0 ? `: ${shownNotes}.` : "."}${escapes}\n` +
    `${numbered(file, from, to)}\n` +
    `Re-read lines ${from + 1}-${to + 1} with the read tool (offset ${from + 1}, limit ${to - from + 1}) and copy oldString exactly from it, including whitespace.`
  )
}
