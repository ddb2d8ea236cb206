/**
 * The pieces that wrappers are read with: where a wrapped command starts, and what it runs.
 * Words are the literal values of a simple command's words (`undefined` when computed), the name first.
 */

/** Where the wrapped commands are: word ranges to scan as commands, words to parse as shell code. */
export interface Unwrapped {
  readonly inners: ReadonlyArray<readonly [start: number, end: number]>
  readonly scripts: ReadonlyArray<number>
  /** Shell code that is not a whole word (`--command=…`, `-Scode`, words joined); undefined: computed. */
  readonly code?: ReadonlyArray<string | undefined>
}

export type Words = ReadonlyArray<string | undefined>

/** Skips options from `i`: short letters in `withValue` and long options in `long` take the next word. */
export const skipOptions = (words: Words, i: number, withValue: string, long: ReadonlySet<string> = new Set()): number => {
  while (i < words.length) {
    const w = words[i]
    if (w === undefined || !w.startsWith("-") || w === "-") return i
    if (w === "--") return i + 1
    if (w.startsWith("--")) {
      i += !w.includes("=") && long.has(w) ? 2 : 1
      continue
    }
    // a short cluster: the first letter that takes a value swallows the rest, or the next word
    const letters = w.slice(1)
    const at = [...letters].findIndex((c) => withValue.includes(c))
    i += at !== -1 && at === letters.length - 1 ? 2 : 1
  }
  return i
}

export const rest = (words: Words, start: number): Unwrapped | undefined =>
  start < words.length ? { inners: [[start, words.length]], scripts: [] } : undefined

export const script = (index: number): Unwrapped => ({ inners: [], scripts: [index] })
export const code = (text: string | undefined): Unwrapped => ({ inners: [], scripts: [], code: [text] })

export const long = (...names: Array<string>) => new Set(names)
