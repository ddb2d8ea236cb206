/**
 * Reading a command's options without knowing all of them: enough to find the few that run code.
 * Words are literal values (`undefined` when computed), the command name first.
 */

type Words = ReadonlyArray<string | undefined>

/** Options read the way getopt reads them: short clusters (`-vo X`, `-oX`), `--long=v`, `--long v`. */
export interface Options {
  /** Short letters that take a value: the rest of the cluster, or the next word. */
  readonly short: string
  /** Short letters whose value can only be attached (`sed -i.bak`, `man -Hfirefox`). */
  readonly attached?: string
  /** Long options that take the next word when no `=` is given. */
  readonly long?: ReadonlyArray<string>
  /** Options end at the first operand (awk's program), rather than anywhere (GNU). */
  readonly stopAtOperand?: boolean
}

export interface Parsed {
  readonly options: ReadonlyArray<{ readonly name: string; readonly value: string | undefined }>
  readonly operands: ReadonlyArray<string | undefined>
}

export const parseOptions = (words: Words, spec: Options): Parsed => {
  const options: Array<{ name: string; value: string | undefined }> = []
  const operands: Array<string | undefined> = []
  let ended = false
  for (let i = 1; i < words.length; i++) {
    const w = words[i]
    if (ended || w === undefined || !w.startsWith("-") || w === "-") {
      operands.push(w)
      if (spec.stopAtOperand) ended = true
      continue
    }
    if (w === "--") {
      ended = true
      continue
    }
    if (w.startsWith("--")) {
      const eq = w.indexOf("=")
      const name = eq === -1 ? w : w.slice(0, eq)
      const value = eq !== -1 ? w.slice(eq + 1) : spec.long?.includes(name) ? words[++i] : undefined
      options.push({ name, value })
      continue
    }
    for (let j = 1; j < w.length; j++) {
      const letter = w[j]!
      if (spec.short.includes(letter)) {
        options.push({ name: `-${letter}`, value: j + 1 < w.length ? w.slice(j + 1) : words[++i] })
        break
      }
      if (spec.attached?.includes(letter)) {
        options.push({ name: `-${letter}`, value: w.slice(j + 1) })
        break
      }
      options.push({ name: `-${letter}`, value: undefined })
    }
  }
  return { options, operands }
}

/** The values of the named options (a value is `undefined` when computed or missing). */
export const valuesOf = (parsed: Parsed, ...names: ReadonlyArray<string>) => parsed.options.filter((o) => names.includes(o.name)).map((o) => o.value)
/** True when any of the named options is given. */
export const has = (parsed: Parsed, ...names: ReadonlyArray<string>) => parsed.options.some((o) => names.includes(o.name))

/** The value of option `names` in `words`: the next word, or attached (`--opt=v`, `-Xv`); all of them. */
export const optionValues = (words: Words, names: ReadonlyArray<string>): Array<string | undefined> => {
  const out: Array<string | undefined> = []
  for (let i = 1; i < words.length; i++) {
    const w = words[i]
    if (w === undefined) continue
    if (w === "--") break
    for (const name of names) {
      if (w === name) out.push(words[i + 1])
      else if (name.startsWith("--") && w.startsWith(`${name}=`)) out.push(w.slice(name.length + 1))
      else if (!name.startsWith("--") && w.startsWith(name) && !w.startsWith("--")) out.push(w.slice(name.length))
    }
  }
  return out
}
