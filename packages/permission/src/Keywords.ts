import type { Node, Parser } from "./Parser.ts"

/**
 * Shell reserved words and the punctuation of compound commands. The parser takes some of them
 * for a command name (after `time`, `!`, `coproc`), so a command named one of these is never
 * what runs: it is judged opaque. (`time` and `coproc` are read as wrappers of what follows.)
 */
export const RESERVED = new Set([
  "{",
  "}",
  "(",
  ")",
  "!",
  "[[",
  "]]",
  "((",
  "))",
  "if",
  "then",
  "else",
  "elif",
  "fi",
  "for",
  "while",
  "until",
  "do",
  "done",
  "case",
  "esac",
  "select",
  "function",
  "in"
])

// real commands spelled with punctuation only
const PUNCTUATION_COMMANDS = new Set([":", ".", "["])

/** True for a command name that is a reserved word, or punctuation that no program is named. */
export const isReservedName = (name: string) => RESERVED.has(name) || (/^[^\p{L}\p{N}_./~-]+$/u.test(name) && !PUNCTUATION_COMMANDS.has(name))

// words that open a compound command (the parser cannot read them after `time`/`!`/`coproc`)
const OPENS = new Set(["{", "(", "((", "[[", "!", "if", "for", "while", "until", "case", "select", "function", "time", "coproc"])

const wordValue = (node: Node | null | undefined) => (node ? node.text.replace(/["'\\]/g, "") : undefined)

/**
 * The byte ranges of `time`/`!`/`coproc` prefixes the parser misread: `time { …; }` is read as a
 * command `time` with arguments `{ …`. Blanking the prefix lets the parser read what follows.
 */
const misreadPrefixes = (node: Node, out: Array<readonly [number, number]>) => {
  if (node.type === "command") {
    const name = node.childForFieldName("name")
    const value = wordValue(name)
    if (name && (value === "time" || value === "coproc")) {
      const args = node.childrenForFieldName("argument")
      let i = 0
      // `time -p --`; `coproc NAME {`
      if (value === "time") while (i < args.length && wordValue(args[i])?.startsWith("-")) i++
      const next = wordValue(args[i])
      const after = wordValue(args[i + 1])
      if (next !== undefined && OPENS.has(next)) out.push([name.startIndex, args[i]!.startIndex])
      else if (value === "coproc" && after !== undefined && OPENS.has(after)) out.push([name.startIndex, args[i + 1]!.startIndex])
      // `time (…)`, `time ((…))`: the parser nests a subshell in the command
      else if (i === args.length && node.namedChildren.some((c) => c.type === "subshell")) out.push([name.startIndex, name.endIndex])
    }
  } else if (node.type === "negated_command") {
    const inner = node.namedChildren[0]
    const value = inner?.type === "command" ? wordValue(inner.childForFieldName("name")) : undefined
    if (value !== undefined && OPENS.has(value)) out.push([node.startIndex, node.startIndex + 1])
  }
  for (const child of node.namedChildren) misreadPrefixes(child, out)
}

const MAY_MISREAD = /\btime\b|\bcoproc\b|!/

/**
 * The source with misread `time`/`!`/`coproc` prefixes blanked (same length, so offsets hold), and
 * its tree; the caller deletes the tree. Prefixes only time or negate what follows: what runs is
 * the same. Up to 8 rounds (`! time { …; }` needs two).
 */
export const parseUnprefixed = (parser: Parser, source: string) => {
  let tree = parser.parse(source)
  if (!tree || !MAY_MISREAD.test(source)) return { tree, source }
  for (let round = 0; round < 8; round++) {
    const ranges: Array<readonly [number, number]> = []
    misreadPrefixes(tree.rootNode, ranges)
    if (ranges.length === 0) break
    // tree-sitter indexes are UTF-16 offsets in web-tree-sitter, as JavaScript strings are
    let next = source
    for (const [start, end] of ranges) next = next.slice(0, start) + " ".repeat(end - start) + next.slice(end)
    if (next === source) break
    source = next
    tree.delete()
    tree = parser.parse(source)
    if (!tree) break
  }
  return { tree, source }
}
