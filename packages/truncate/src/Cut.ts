/**
 * Pure cutting of text to a line and byte budget. Cuts fall on line boundaries; a single line
 * longer than the whole budget is cut inside, but never inside a UTF-8 sequence.
 */

/** Which end of a long output the model sees. */
export type Direction = "head" | "tail" | "head_tail"

export interface CutOptions {
  readonly direction: Direction
  readonly maxLines: number
  readonly maxBytes: number
}

export interface CutResult {
  /** The kept text with `…N lines truncated…` markers where text was dropped. */
  readonly text: string
  readonly truncated: boolean
  readonly droppedLines: number
  readonly totalLines: number
  readonly totalBytes: number
}

export const byteLength = (s: string) => Buffer.byteLength(s, "utf8")

/** Lines of a text: a trailing newline does not start another line; "" has none. */
export const countLines = (text: string) => {
  if (text.length === 0) return 0
  let n = 0
  let i = -1
  while ((i = text.indexOf("\n", i + 1)) !== -1) n++
  return text.endsWith("\n") ? n : n + 1
}

const splitLines = (text: string) => {
  const lines = text.split("\n")
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop()
  return lines
}

/** Whether a text fits both limits as it is. */
export const fits = (text: string, maxLines: number, maxBytes: number) => byteLength(text) <= maxBytes && countLines(text) <= maxLines

/** The longest prefix of `line` within `bytes`, ending on a character boundary. */
export const prefixBytes = (line: string, bytes: number) => {
  const buf = Buffer.from(line, "utf8")
  if (buf.length <= bytes) return line
  let end = Math.max(0, bytes)
  while (end > 0 && (buf[end]! & 0xc0) === 0x80) end--
  return buf.subarray(0, end).toString("utf8")
}

/** The longest suffix of `line` within `bytes`, starting on a character boundary. */
export const suffixBytes = (line: string, bytes: number) => {
  const buf = Buffer.from(line, "utf8")
  if (buf.length <= bytes) return line
  let start = buf.length - Math.max(0, bytes)
  while (start < buf.length && (buf[start]! & 0xc0) === 0x80) start++
  return buf.subarray(start).toString("utf8")
}

export const marker = (droppedLines: number) => `…${droppedLines} lines truncated…`

/** Whole lines from one end within the budget (each line costs its bytes plus a newline). */
const takeLines = (lines: ReadonlyArray<string>, fromEnd: boolean, maxLines: number, maxBytes: number, stopAt: number) => {
  const kept: Array<string> = []
  let bytes = 0
  const n = Math.min(lines.length, stopAt)
  for (let k = 0; k < n; k++) {
    const line = lines[fromEnd ? lines.length - 1 - k : k]!
    const size = byteLength(line) + 1
    if (kept.length >= maxLines || bytes + size > maxBytes) break
    kept.push(line)
    bytes += size
  }
  if (fromEnd) kept.reverse()
  return kept
}

/**
 * Cuts `text` to `maxLines` lines and `maxBytes` bytes. Text within both limits is returned as
 * it is. The markers are counted in the budget, so the result always fits.
 */
export const cut = (text: string, options: CutOptions): CutResult => {
  const totalBytes = byteLength(text)
  const totalLines = countLines(text)
  if (totalBytes <= options.maxBytes && totalLines <= options.maxLines) {
    return { text, truncated: false, droppedLines: 0, totalLines, totalBytes }
  }
  const lines = splitLines(text)
  // room for the marker line
  const maxLines = Math.max(1, options.maxLines - 1)
  const maxBytes = Math.max(0, options.maxBytes - byteLength(marker(totalLines)) - 1)
  const join = (head: ReadonlyArray<string>, tail: ReadonlyArray<string>) => {
    const dropped = lines.length - head.length - tail.length
    return {
      text: [...head, marker(dropped), ...tail].join("\n"),
      truncated: true,
      droppedLines: dropped,
      totalLines,
      totalBytes
    }
  }
  if (options.direction === "head_tail") {
    const headLines = Math.max(1, Math.floor(maxLines / 4))
    const headBytes = Math.floor(maxBytes / 4)
    const head = takeLines(lines, false, headLines, headBytes, lines.length)
    const usedBytes = head.reduce((n, l) => n + byteLength(l) + 1, 0)
    const tail = takeLines(lines, true, maxLines - head.length, maxBytes - usedBytes, lines.length - head.length)
    if (head.length + tail.length > 0) return join(head, tail)
  } else {
    const fromEnd = options.direction === "tail"
    const kept = takeLines(lines, fromEnd, maxLines, maxBytes, lines.length)
    if (kept.length > 0) return fromEnd ? join([], kept) : join(kept, [])
  }
  // Not even one whole line fits: keep part of the first (or last) line.
  const fromEnd = options.direction === "tail"
  const line = fromEnd ? lines[lines.length - 1]! : lines[0]!
  const partMarker = `…line of ${byteLength(line)} bytes cut…`
  const room = Math.max(0, maxBytes - byteLength(partMarker) - 1)
  const part = fromEnd ? suffixBytes(line, room) : prefixBytes(line, room)
  const dropped = lines.length - 1
  const pieces = fromEnd ? [...(dropped > 0 ? [marker(dropped)] : []), partMarker, part] : [part, partMarker, ...(dropped > 0 ? [marker(dropped)] : [])]
  return { text: pieces.join("\n"), truncated: true, droppedLines: dropped, totalLines, totalBytes }
}

/** Whole lines from one end of `text` within the budget (part of one line if none fits). */
export const edge = (text: string, fromEnd: boolean, maxLines: number, maxBytes: number) => {
  const lines = splitLines(text)
  if (text.length === 0) return ""
  const kept = takeLines(lines, fromEnd, maxLines, maxBytes, lines.length)
  if (kept.length > 0) return kept.join("\n")
  return fromEnd ? suffixBytes(lines[lines.length - 1]!, maxBytes) : prefixBytes(lines[0]!, maxBytes)
}

/**
 * A view of an output too large to hold: whole lines from its head (a quarter of the budget)
 * and its tail (the rest), with a marker counting the lines between.
 */
export const joinEnds = (head: string, tail: string, totalLines: number, maxLines: number, maxBytes: number) => {
  const budget = Math.max(0, maxBytes - byteLength(marker(totalLines)) - 2)
  const headText = edge(head, false, Math.max(1, Math.floor((maxLines - 1) / 4)), Math.floor(budget / 4))
  const headLines = countLines(headText)
  const tailText = edge(tail, true, Math.max(1, maxLines - 1 - headLines), budget - byteLength(headText))
  const dropped = Math.max(0, totalLines - headLines - countLines(tailText))
  return [headText, marker(dropped), tailText].filter((s) => s.length > 0).join("\n")
}
