/** Where one match of `oldString` sits in the file: `content.slice(start, end)`. */
export interface Span {
  readonly start: number
  readonly end: number
}

/** One way of finding `oldString` in a file; tried in order until one matches. */
export interface Replacer {
  readonly name: string
  /** All non-overlapping matches, in file order. */
  find(content: string, oldString: string): Array<Span>
}

/** The text exactly as given. */
export const exact: Replacer = {
  name: "exact",
  find: (content, oldString) => {
    const spans: Array<Span> = []
    if (oldString === "") return spans
    let index = content.indexOf(oldString)
    while (index !== -1) {
      spans.push({ start: index, end: index + oldString.length })
      index = content.indexOf(oldString, index + oldString.length)
    }
    return spans
  }
}

/**
 * Whole lines whose trimmed text equals the trimmed lines of `oldString`: forgives indentation
 * and trailing spaces. The span covers the file's own text of those lines.
 */
export const lineTrimmed: Replacer = {
  name: "line-trimmed",
  find: (content, oldString) => {
    const spans: Array<Span> = []
    const wanted = oldString.split("\n").map((line) => line.trim())
    const endsWithNewline = wanted.length > 1 && wanted[wanted.length - 1] === ""
    if (endsWithNewline) wanted.pop()
    if (wanted.every((line) => line === "")) return spans
    const lines = content.split("\n")
    const starts: Array<number> = []
    let offset = 0
    for (const line of lines) {
      starts.push(offset)
      offset += line.length + 1
    }
    for (let i = 0; i + wanted.length <= lines.length; i++) {
      let same = true
      for (let j = 0; j < wanted.length && same; j++) same = lines[i + j]!.trim() === wanted[j]
      if (!same) continue
      const lastIndex = i + wanted.length - 1
      const last = lines[lastIndex]!
      const hasNext = lastIndex < lines.length - 1
      // Keep the line ending outside the span unless oldString ended with one too.
      const end = endsWithNewline && hasNext ? starts[lastIndex]! + last.length + 1 : starts[lastIndex]! + last.length - (last.endsWith("\r") ? 1 : 0)
      spans.push({ start: starts[i]!, end })
      i = lastIndex
    }
    return spans
  }
}

/** The replacers `edit` tries, in order. */
export const replacers: ReadonlyArray<Replacer> = [exact, lineTrimmed]

/** Replaces the given spans (in file order, non-overlapping) with `replacement`. */
export const applySpans = (content: string, spans: ReadonlyArray<Span>, replacement: string) => {
  let out = ""
  let cursor = 0
  for (const span of spans) {
    out += content.slice(cursor, span.start) + replacement
    cursor = span.end
  }
  return out + content.slice(cursor)
}
