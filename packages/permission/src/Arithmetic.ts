import type { Node } from "./Parser.ts"
import { single, type State } from "./ScanState.ts"
import { isName, literal } from "./Words.ts"

/**
 * Data that bash evaluates as code. Arithmetic (`(( ))`, `$(( ))`, `let`, `[[ a -gt b ]]`,
 * subscripts, `${x:off}`, integer variables) evaluates the value of every name it reads as an
 * expression, and an array subscript in that value runs its command substitutions: after
 * `x='a[$(rm f)]'`, `(( x ))` runs rm. So do names that builtins take from data (`read "$n"`,
 * `printf -v "$n"`, `unset "$n"`, `${!n}`, `declare -n r=$n`). An operand is safe when it is a
 * literal number, a name the line knows to hold an integer, or a value bash keeps an integer.
 */

const INTEGER = /^\s*[-+]?(0[xX][\da-fA-F]+|\d+(#[\w@]+)?)\s*$/
// bash maintains these as integers itself
const BASH_INTEGERS = new Set(["RANDOM", "SRANDOM", "LINENO", "SECONDS", "BASHPID", "PPID", "UID", "EUID", "EPOCHSECONDS", "OPTIND", "PIPESTATUS"])
const ARITHMETIC_TESTS = new Set(["-eq", "-ne", "-lt", "-le", "-gt", "-ge"])
// a command whose output is only a number (`$(wc -l < f)`, `$(nproc)`), possibly at the end of a pipeline
const NUMBER_OUTPUT = /^\s*(?:[^|;&\n`$()]*\|\s*)*(wc(\s+-[lcmw]+)+(\s*<\s*[^\s;&|<>()]+)?|nproc(\s+--all)?|id\s+-[ug]|date\s+\+%s)\s*$/
// marks a command's output inside arithmetic text
const OUTPUT = "\u0001"

/** True when a command substitution prints only a number. */
const numberOutput = (node: Node) => NUMBER_OUTPUT.test(node.text.startsWith("`") ? node.text.slice(1, -1) : node.text.slice(2, -1))

// associative arrays bash has itself: their subscripts are command names
const BASH_TABLES = new Set(["BASH_CMDS", "BASH_ALIASES"])
const associative = (st: State, name: string) => st.assoc.has(name) || BASH_TABLES.has(name)

const DATA_NOTE = "(a value like a[$(cmd)] runs cmd)"

/** True when `name` holds an integer wherever the line uses it. */
export const holdsInteger = (st: State, name: string) => {
  if (st.numeric.has(name)) return true
  const values = st.vars.get(name)
  if (values === undefined) return BASH_INTEGERS.has(name)
  return values !== null && values.length > 0 && values.every((v) => INTEGER.test(v))
}

/** True when a value node always expands to an integer (`5`, `$((i+1))`, `$#`, `${#x}`, `$i` for a known integer). */
export const integerValue = (st: State, node: Node | null): boolean => {
  if (node === null) return false
  const fixed = literal(node)
  if (fixed !== undefined) return INTEGER.test(fixed)
  if (node.type === "arithmetic_expansion") return true
  if (node.type === "command_substitution") return numberOutput(node)
  if (node.type === "string") return node.namedChildren.length === 1 && integerValue(st, node.namedChildren[0]!)
  if (node.type === "simple_expansion" || node.type === "expansion") {
    if (/^\$([#?$!]|\{#[A-Za-z_]\w*(\[[@*]\])?\})$/.test(node.text)) return true
    const name = /^\$\{?([A-Za-z_]\w*)\}?$/.exec(node.text)?.[1]
    return name !== undefined && holdsInteger(st, name)
  }
  return false
}

const TOKEN = /\$\(\(|\$\[|\$\(|`|\$\{[^{}]*\}|\$[A-Za-z_]\w*|\$[0-9@*-]|\$[#?$!]|\d+#[\w@]+|0[xX][\da-fA-F]+|\d+|[A-Za-z_]\w*|\s+|[\s\S]/g

/** The index after the `]` that closes the `[` at `at`. */
const closing = (text: string, at: number) => {
  let depth = 0
  for (let i = at; i < text.length; i++) {
    if (text[i] === "[") depth++
    else if (text[i] === "]" && --depth === 0) return i + 1
  }
  return text.length
}

/** `name =` (not `==`, not `+=`): the name is assigned, its value not read. */
const assignedAt = (text: string, end: number) => {
  let j = end
  while (text[j] === " " || text[j] === "\t") j++
  if (text[j] === "[") j = closing(text, j)
  while (text[j] === " " || text[j] === "\t") j++
  return text[j] === "=" && text[j + 1] !== "="
}

export interface Evaluated {
  readonly reason: string | undefined
  /** Names the expression assigns (their values are integers after it). */
  readonly assigned: ReadonlyArray<string>
}

/** Why evaluating `text` as arithmetic may run code: an operand the line does not know to be an integer. */
export const arithmetic = (st: State, text: string): Evaluated => {
  const known = new Set<string>()
  const pending: Array<string> = []
  const assigned: Array<string> = []
  const safe = (name: string) => known.has(name) || holdsInteger(st, name)
  const reading = (name: string) => `arithmetic evaluates the value of \`${name}\` as an expression ${DATA_NOTE}`
  for (const m of text.matchAll(TOKEN)) {
    const t = m[0]
    const end = m.index + t.length
    if (t === "$((" || t === "$[") continue
    if (t === "$(" || t === "`" || t === OUTPUT) return { reason: `arithmetic evaluates a command's output as an expression ${DATA_NOTE}`, assigned }
    if (t === ";" || t === ",") {
      for (const name of pending.splice(0)) known.add(name)
      continue
    }
    if (t.startsWith("${")) {
      const inner = t.slice(2, -1)
      if (/^#([A-Za-z_]\w*(\[[@*]\])?)?$|^[#?$!]$/.test(inner)) continue
      // `${n}`, `${PIPESTATUS[0]}`: a name that holds integers, at a literal index
      const element = /^([A-Za-z_]\w*)(\[\d+\])?$/.exec(inner)
      if (element !== null && safe(element[1]!)) continue
      return { reason: isName(inner) ? reading(inner) : `arithmetic evaluates \`${t}\` as an expression ${DATA_NOTE}`, assigned }
    }
    if (t.startsWith("$")) {
      if (/^\$[#?$!]$/.test(t) || safe(t.slice(1))) continue
      return { reason: reading(t), assigned }
    }
    if (!/^[A-Za-z_]/.test(t)) continue
    if (assignedAt(text, end)) {
      pending.push(t)
      assigned.push(t)
    } else if (!safe(t)) return { reason: reading(t), assigned }
  }
  return { reason: undefined, assigned }
}

/** The text of `node` from its start to `end`, each command output in it replaced (by a 0 when it is a number). */
const withOutputs = (node: Node, end = node.endIndex): string => {
  if (node.type === "command_substitution") return numberOutput(node) ? " 0 " : OUTPUT
  if (node.type === "process_substitution") return OUTPUT
  let out = ""
  let at = node.startIndex
  const text = node.text
  const walk = (n: Node) => {
    for (const c of n.namedChildren) {
      if (c.startIndex >= end) return
      if (c.type === "command_substitution" || c.type === "process_substitution") {
        out += text.slice(at - node.startIndex, c.startIndex - node.startIndex) + withOutputs(c)
        at = c.endIndex
      } else walk(c)
    }
  }
  walk(node)
  return out + text.slice(at - node.startIndex, end - node.startIndex)
}

/** A statement that always runs when the line does (not in a condition, loop, function or subshell). */
export const alwaysRuns = (node: Node) => {
  let at: Node = node
  while (at.parent?.type === "list" && at.parent.namedChildren[0]?.id === at.id) at = at.parent
  return at.parent?.type === "program"
}

/** Checks `text` and records the names it assigns as integers (when it surely runs, or they were integers). */
const evaluate = (st: State, text: string, sure: boolean): string | undefined => {
  const { reason, assigned } = arithmetic(st, text)
  if (reason === undefined) for (const name of assigned) if (sure || holdsInteger(st, name)) st.numeric.add(name)
  return reason
}

/** True inside an arithmetic context, where assignments are the arithmetic's own. */
export const inArithmetic = (node: Node) => {
  for (let at = node.parent; at !== null; at = at.parent) {
    if (at.type === "arithmetic_expansion" || at.type === "c_style_for_statement") return true
    if (at.type === "compound_statement") return at.text.startsWith("((")
    if (at.type === "command" || at.type === "program" || at.type === "command_substitution") return false
  }
  return false
}

/**
 * Why a word that names a variable (`read NAME`, `unset NAME`, `printf -v NAME`) may run code: it
 * is computed when it runs, or holds a subscript that is not safe arithmetic.
 */
export const nameOperand = (st: State, word: string | undefined, who: string): string | undefined => {
  if (word === undefined) return `${who} takes a variable name computed when it runs; bash evaluates a subscript in it as arithmetic ${DATA_NOTE}`
  const name = word.includes("=") ? word.slice(0, word.indexOf("=")).replace(/\+$/, "") : word
  const sub = /^([A-Za-z_]\w*)\[(.*)\]$/s.exec(name)
  if (sub !== null && BASH_TABLES.has(sub[1]!)) return `${who} changes the program a command name runs (${sub[1]})`
  if (sub !== null) return associative(st, sub[1]!) || sub[2] === "@" || sub[2] === "*" ? undefined : arithmetic(st, sub[2]!).reason
  return isName(name) || name.startsWith("-") ? undefined : `${who} takes \`${name}\` as a variable name, which bash evaluates ${DATA_NOTE}`
}

/** `${!x}`, `${a[$i]}`, `${s:off:len}`: indirection, subscripts and offsets evaluated from data. */
const expansionRisk = (st: State, node: Node): string | undefined => {
  const text = withOutputs(node)
  const m = /^\$\{([#!]?)([A-Za-z_]\w*|[@*#?$!0-9])/.exec(text)
  if (m === null) return undefined
  let at = m[0].length
  if (m[1] === "!" && text[at] !== "[" && !/^[@*]\}$/.test(text.slice(at))) {
    // `${!n}`: the value of n names the variable (with any subscript in it)
    const values = st.vars.get(m[2]!)
    if (values === undefined || values === null || !values.every(isName))
      return `\`\${!${m[2]}}\` uses a value as a variable name; bash evaluates a subscript in it as arithmetic ${DATA_NOTE}`
  }
  if (text[at] === "[") {
    const end = closing(text, at)
    const index = text.slice(at + 1, end - 1)
    at = end
    if (index !== "@" && index !== "*" && !associative(st, m[2]!)) {
      const reason = arithmetic(st, index).reason
      if (reason !== undefined) return reason
    }
  }
  // `${s:off}`, `${s:off:len}` (not `${s:-x}`, `${s:=x}`, `${s:?x}`, `${s:+x}`)
  if (m[1] === "" && text[at] === ":" && !"-=?+".includes(text[at + 1] ?? "")) return arithmetic(st, text.slice(at + 1, -1)).reason
  return undefined
}

const flagsOf = (node: Node) =>
  node.namedChildren
    .filter((c) => c.type === "word" && /^[-+]/.test(c.text))
    .map((c) => c.text.slice(1))
    .join("")

/** `declare`, `local`, `typeset`, `export`, `readonly`: computed names, name references, integer and associative attributes. */
const declarationRisk = (st: State, node: Node): string | undefined => {
  const keyword = node.children[0]?.text ?? "declare"
  const flags = flagsOf(node)
  let reason: string | undefined
  for (const c of node.namedChildren) {
    if (c.type === "word" && /^[-+]/.test(c.text)) continue
    const name = c.type === "variable_assignment" ? c.childForFieldName("name") : c
    const nameText = name?.type === "variable_name" ? name.text : name?.type === "subscript" ? name.namedChildren[0]?.text : undefined
    if (nameText !== undefined) {
      if (flags.includes("n")) st.namerefs.add(nameText)
      if (flags.includes("i")) st.integers.add(nameText)
      if (flags.includes("A")) st.assoc.add(nameText)
    }
    if (c.type === "variable_assignment") {
      // `declare -n r=$x`: r names whatever x holds, subscripts included
      const value = c.childForFieldName("value")
      if (flags.includes("n") && value !== null) reason ??= reference(st, value, keyword)
      continue
    }
    if (c.type === "variable_name") continue
    reason ??= nameOperand(st, literal(c) ?? single(st, c), keyword)
  }
  return reason
}

/** `declare -n r=$x`, `r=$x` for a reference r: r names whatever x holds, subscripts included. */
const reference = (st: State, value: Node, who: string) =>
  nameOperand(st, literal(value) ?? single(st, value), who) && `${who} makes a name refer to a computed variable name ${DATA_NOTE}`

/** `a[$i]=v`, an integer variable assigned data, a reference assigned a computed name. */
const assignmentRisk = (st: State, node: Node): string | undefined => {
  const name = node.childForFieldName("name")
  const value = node.childForFieldName("value")
  if (name?.type === "subscript") {
    const array = name.namedChildren[0]?.text ?? ""
    const index = withOutputs(name).slice(array.length + 1, -1)
    if (!associative(st, array) && index !== "@" && index !== "*") {
      const reason = arithmetic(st, index).reason
      if (reason !== undefined) return reason
    }
  }
  const variable = name?.type === "subscript" ? name.namedChildren[0]?.text : name?.text
  // `a=([k]=v …)`: each key of an indexed array is arithmetic
  if (variable !== undefined && value?.type === "array") {
    const declared = node.parent?.type === "declaration_command" && flagsOf(node.parent).includes("A")
    if (!declared && !associative(st, variable))
      for (const element of value.namedChildren) {
        const text = withOutputs(element)
        if (!text.startsWith("[")) continue
        const reason = arithmetic(st, text.slice(1, closing(text, 0) - 1)).reason
        if (reason !== undefined) return reason
      }
  }
  if (variable !== undefined && value !== null && st.namerefs.has(variable) && node.parent?.type !== "declaration_command") {
    const reason = reference(st, value, `the reference ${variable}`)
    if (reason !== undefined) return reason
  }
  const declared = node.parent?.type === "declaration_command" && flagsOf(node.parent).includes("i")
  if (variable !== undefined && value !== null && value.type !== "array" && (declared || st.integers.has(variable)) && !integerValue(st, value))
    return arithmetic(st, withOutputs(value)).reason
  return undefined
}

/** `[[ a -gt b ]]` evaluates both sides; `-v NAME` (also in `[ ]`) evaluates a subscript in NAME. */
const testRisk = (st: State, node: Node): string | undefined => {
  const double = node.text.startsWith("[[")
  const walk = (n: Node): string | undefined => {
    const operator = n.namedChildren.find((c) => c.type === "test_operator")?.text
    if (n.type === "binary_expression" && double && operator !== undefined && ARITHMETIC_TESTS.has(operator)) {
      for (const side of n.namedChildren)
        if (side.type !== "test_operator") {
          const reason = arithmetic(st, withOutputs(side)).reason
          if (reason !== undefined) return reason
        }
    }
    if (n.type === "unary_expression" && operator === "-v") {
      const operand = n.namedChildren.find((c) => c.type !== "test_operator")
      const reason = operand && nameOperand(st, literal(operand) ?? single(st, operand), "-v")
      if (reason !== undefined) return reason
    }
    for (const c of n.namedChildren) {
      const reason = walk(c)
      if (reason !== undefined) return reason
    }
    return undefined
  }
  return walk(node)
}

/** Why this node evaluates data as code; undefined when it does not (or only with known integers). */
export const evaluatedData = (st: State, node: Node): string | undefined => {
  switch (node.type) {
    case "compound_statement":
      return node.text.startsWith("((") ? evaluate(st, withOutputs(node).slice(2, -2), alwaysRuns(node)) : undefined
    case "arithmetic_expansion": {
      const text = withOutputs(node)
      return evaluate(st, text.startsWith("$[") ? text.slice(2, -1) : text.slice(3, -2), false)
    }
    case "c_style_for_statement": {
      // the header; the body's arithmetic is found on its own
      const body = node.childForFieldName("body")
      const header = withOutputs(node, body?.startIndex ?? node.endIndex)
      return evaluate(st, header.slice(header.indexOf("((") + 2).replace(/\)\)\s*;?\s*(do)?\s*$/, ""), true)
    }
    case "test_command":
      return testRisk(st, node)
    case "expansion":
      return expansionRisk(st, node)
    case "variable_assignment":
      return assignmentRisk(st, node)
    case "declaration_command":
      return declarationRisk(st, node)
    case "unset_command": {
      if (flagsOf(node).includes("f")) return undefined
      // `unset a[0]`: the parser splits the word at the subscript
      const words: Array<Array<Node>> = []
      for (const c of node.namedChildren) {
        const last = words.at(-1)
        if (last !== undefined && last.at(-1)!.endIndex === c.startIndex) last.push(c)
        else words.push([c])
      }
      for (const parts of words) {
        if (parts.length === 1 && (parts[0]!.type === "variable_name" || /^-/.test(parts[0]!.text))) continue
        const values = parts.map((p) => (p.type === "variable_name" ? p.text : (literal(p) ?? single(st, p))))
        const reason = nameOperand(st, values.includes(undefined) ? undefined : values.join(""), "unset")
        if (reason !== undefined) return reason
      }
      return undefined
    }
    default:
      return undefined
  }
}

type Values = ReadonlyArray<string | undefined>

/** The operands of a builtin after its options; `valued` letters take a value (attached or the next word). */
const operands = (values: Values, valued: string, named = ""): { names: Array<string | undefined>; options: Map<string, string | undefined> } => {
  const names: Array<string | undefined> = []
  const options = new Map<string, string | undefined>()
  let i = 1
  for (; i < values.length; i++) {
    const w = values[i]
    if (w === "--") {
      i++
      break
    }
    if (w === undefined || !w.startsWith("-") || w === "-") break
    for (let j = 1; j < w.length; j++) {
      if (!valued.includes(w[j]!)) continue
      const value = j + 1 < w.length ? w.slice(j + 1) : values[++i]
      options.set(w[j]!, value)
      if (named.includes(w[j]!)) names.push(value)
      break
    }
  }
  names.push(...values.slice(i))
  return { names, options }
}

/** The builtins {@link builtinRisk} reads. */
export const TAKES_NAMES = new Set(["let", "read", "mapfile", "readarray", "printf", "getopts", "wait", "test", "["])

/**
 * Builtins that evaluate data: `let` (arithmetic), and those that take variable names from their
 * words (`read`, `printf -v`, `mapfile`, `getopts`, `test -v`, `wait -p`).
 */
export const builtinRisk = (st: State, name: string, values: Values, sure: boolean): string | undefined => {
  const names = (list: ReadonlyArray<string | undefined>) => {
    for (const n of list) {
      const reason = nameOperand(st, n, name)
      if (reason !== undefined) return reason
      if (n !== undefined && st.integers.has(n)) return `${name} puts data in an integer variable, which bash evaluates as arithmetic ${DATA_NOTE}`
    }
    return undefined
  }
  switch (name) {
    case "let":
      for (const v of values.slice(1)) {
        const reason = v === undefined ? `let evaluates a computed expression ${DATA_NOTE}` : evaluate(st, v, sure)
        if (reason !== undefined) return reason
      }
      return undefined
    case "read":
      return names(operands(values, "adinNptu", "a").names)
    case "mapfile":
    case "readarray":
      return names(operands(values, "dnOsuCc").names.slice(0, 1))
    case "printf": {
      const { options } = operands(values, "v")
      return options.has("v") ? names([options.get("v")]) : undefined
    }
    case "getopts":
      return names(operands(values, "").names.slice(1, 2))
    case "wait": {
      const { options } = operands(values, "p")
      return options.has("p") ? names([options.get("p")]) : undefined
    }
    case "test":
    case "[": {
      const at = values.indexOf("-v")
      return at === -1 ? undefined : names([values[at + 1]])
    }
    default:
      return undefined
  }
}
