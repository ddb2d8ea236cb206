import type { Node } from "./Parser.ts"

// Double quotes keep backslashes except before $ ` " \ and newline.
const unescapeDouble = (s: string) => s.replace(/\\([$`"\\\n])/g, (_, c: string) => (c === "\n" ? "" : c))
const unescapeWord = (s: string) => s.replace(/\\(.)/gs, (_, c: string) => (c === "\n" ? "" : c))

/** The value of a word when it is fixed in the text (no expansion, no substitution); else undefined. */
export const literal = (node: Node): string | undefined => {
  switch (node.type) {
    case "word":
    case "number":
      return unescapeWord(node.text)
    case "raw_string":
      return node.text.slice(1, -1)
    case "string":
      return node.namedChildren.every((c) => c.type === "string_content") ? unescapeDouble(node.text.slice(1, -1)) : undefined
    case "concatenation": {
      let out = ""
      for (const part of node.namedChildren) {
        const value = literal(part)
        if (value === undefined) return undefined
        out += value
      }
      return out
    }
    case "command_name":
      return node.namedChildren.length === 1 ? literal(node.namedChildren[0]!) : undefined
    default:
      return undefined
  }
}

/** The values a variable may have when a word uses it; undefined: unknown (the environment, a computation). */
export type Lookup = (name: string) => ReadonlyArray<string> | undefined

/** Marks the parts of a word that are computed when it runs. */
export const UNKNOWN = "\u0000"

/**
 * A word with its variables looked up: every value it may take (when all parts are known), and its
 * shape, the literal text with each expansion (known or not) replaced by {@link UNKNOWN}.
 */
export interface Resolved {
  readonly values: ReadonlyArray<string> | undefined
  readonly shape: string
}

const MAX_VALUES = 16

const cross = (left: ReadonlyArray<string> | undefined, right: ReadonlyArray<string> | undefined) => {
  if (left === undefined || right === undefined || left.length * right.length > MAX_VALUES) return undefined
  return left.flatMap((a) => right.map((b) => a + b))
}

const join = (parts: ReadonlyArray<Resolved>): Resolved =>
  parts.reduce<Resolved>((acc, part) => ({ values: cross(acc.values, part.values), shape: acc.shape + part.shape }), { values: [""], shape: "" })

const known = (values: ReadonlyArray<string>): Resolved => ({ values, shape: values[0] ?? "" })
const unknown: Resolved = { values: undefined, shape: UNKNOWN }
const expanded = (values: ReadonlyArray<string>): Resolved => ({ values, shape: UNKNOWN })

/** `$NAME` and `${NAME}` (nothing else: defaults, substrings and the like are computed). */
const variable = (node: Node): string | undefined => {
  const name = node.namedChildren[0]
  if (node.namedChildren.length !== 1 || name?.type !== "variable_name") return undefined
  return node.text === `$${name.text}` || node.text === `\${${name.text}}` ? name.text : undefined
}

/**
 * What a word may expand to, through `lookup` for `$NAME`/`${NAME}`; anything else computed is
 * unknown. An unquoted value with blanks is split into several words when it runs: unknown too.
 */
export const resolve = (node: Node, lookup: Lookup, quoted = false): Resolved => {
  const fixed = literal(node)
  if (fixed !== undefined) return known([fixed])
  switch (node.type) {
    case "simple_expansion":
    case "expansion": {
      const name = variable(node)
      const values = name === undefined ? undefined : lookup(name)
      if (values === undefined || values.length === 0 || (!quoted && values.some((v) => /\s/.test(v)))) return unknown
      return expanded(values)
    }
    case "process_substitution":
      // `<(cmd)` is a pipe the shell names /dev/fd/N; the command itself is scanned apart
      return expanded(["/dev/fd/63"])
    case "concatenation":
      return join(node.namedChildren.map((part) => resolve(part, lookup, quoted)))
    case "string": {
      // the text between expansions is literal (string_content, or nothing between two expansions)
      const parts: Array<Resolved> = []
      let at = node.startIndex + 1
      for (const child of node.namedChildren) {
        if (child.startIndex > at) parts.push(known([unescapeDouble(node.text.slice(at - node.startIndex, child.startIndex - node.startIndex))]))
        parts.push(child.type === "string_content" ? known([unescapeDouble(child.text)]) : resolve(child, lookup, true))
        at = child.endIndex
      }
      if (node.endIndex - 1 > at) parts.push(known([unescapeDouble(node.text.slice(at - node.startIndex, -1))]))
      return join(parts)
    }
    default:
      return unknown
  }
}

/** True when `name` is a shell variable name. */
export const isName = (name: string) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(name)
