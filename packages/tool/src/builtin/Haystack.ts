/** Where one match of `oldString` sits in the file: `content.slice(start, end)`. */
export interface Span {
  readonly start: number
  readonly end: number
  /** Set when the span covers whole lines: the replacement may be re-indented to fit them. */
  readonly lines?: boolean
}

/**
 * A file's text (LF line endings) with the line tables the replacers share, each built on first
 * use: line starts, trimmed lines, and the lines indexed by their trimmed text.
 */
export class Haystack {
  private _lines: Array<string> | undefined
  private _starts: Array<number> | undefined
  private _trimmed: Array<string> | undefined
  private _byTrimmed: Map<string, Array<number>> | undefined

  constructor(readonly content: string) {}

  get lines(): Array<string> {
    return (this._lines ??= this.content.split("\n"))
  }

  get starts(): Array<number> {
    if (this._starts === undefined) {
      const starts: Array<number> = []
      let offset = 0
      for (const line of this.lines) {
        starts.push(offset)
        offset += line.length + 1
      }
      this._starts = starts
    }
    return this._starts
  }

  /** Lines that hold text: the empty string after a final newline is not a line. */
  get lineCount(): number {
    const lines = this.lines
    return lines.length > 1 && lines[lines.length - 1] === "" ? lines.length - 1 : lines.length
  }

  get trimmed(): Array<string> {
    return (this._trimmed ??= this.lines.map((line) => line.trim()))
  }

  /** The indices of the lines whose trimmed text is `text`, in order. */
  linesTrimmedTo(text: string): ReadonlyArray<number> {
    if (this._byTrimmed === undefined) {
      const map = new Map<string, Array<number>>()
      this.trimmed.forEach((line, index) => {
        const list = map.get(line)
        if (list) list.push(index)
        else map.set(line, [index])
      })
      this._byTrimmed = map
    }
    return this._byTrimmed.get(text) ?? []
  }

  /** The span of lines `first..last` (inclusive); with `newline`, the last line's `\n` too. */
  block(first: number, last: number, newline: boolean): Span {
    const end = this.starts[last]! + this.lines[last]!.length
    return { start: this.starts[first]!, end: newline && last < this.lines.length - 1 ? end + 1 : end, lines: true }
  }

  /** The 1-based line number of a character offset. */
  lineOf(offset: number): number {
    const starts = this.starts
    let low = 0
    let high = starts.length - 1
    while (low < high) {
      const mid = (low + high + 1) >> 1
      if (starts[mid]! <= offset) low = mid
      else high = mid - 1
    }
    return low + 1
  }
}

/** `oldString` split into lines; a final newline is noted rather than kept as an empty line. */
export const searchLines = (oldString: string) => {
  const lines = oldString.split("\n")
  const endsWithNewline = lines.length > 1 && lines[lines.length - 1] === ""
  if (endsWithNewline) lines.pop()
  return { lines, endsWithNewline }
}

/** The leading whitespace of a line. */
export const indentOf = (line: string) => line.slice(0, line.length - line.trimStart().length)

/** The shortest indentation among the non-blank lines (`undefined` when all are blank). */
export const commonIndent = (lines: ReadonlyArray<string>): string | undefined => {
  let common: string | undefined
  for (const line of lines) {
    if (line.trim() === "") continue
    const indent = indentOf(line)
    if (common === undefined || indent.length < common.length) common = indent
  }
  return common
}
