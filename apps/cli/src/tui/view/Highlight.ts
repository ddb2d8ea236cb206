import { renderDiff } from "../../present/Diff.ts"
import type { Style } from "../../present/Style.ts"

/**
 * A small syntax highlighter for fenced code: comments, strings, numbers and keywords by language
 * family, one regular expression per family built on first use. Nothing to load, so a code block
 * costs about a regex pass over its own text; unknown languages are shown plain.
 */
interface Family {
  readonly keywords: ReadonlyArray<string>
  /** Line comment starts, e.g. `//`, `#`, `--`. */
  readonly line: ReadonlyArray<string>
  readonly block: boolean
  readonly backtick: boolean
}

const C_LIKE = [
  "break",
  "case",
  "catch",
  "class",
  "const",
  "continue",
  "default",
  "do",
  "else",
  "enum",
  "extends",
  "false",
  "finally",
  "for",
  "if",
  "import",
  "new",
  "null",
  "private",
  "protected",
  "public",
  "return",
  "static",
  "super",
  "switch",
  "this",
  "throw",
  "true",
  "try",
  "void",
  "while"
]

const families: Record<string, Family> = {
  js: {
    keywords: [
      ...C_LIKE,
      "as",
      "async",
      "await",
      "delete",
      "export",
      "from",
      "function",
      "in",
      "instanceof",
      "interface",
      "let",
      "of",
      "readonly",
      "type",
      "typeof",
      "undefined",
      "var",
      "yield",
      "implements",
      "declare",
      "namespace",
      "satisfies",
      "keyof"
    ],
    line: ["//"],
    block: true,
    backtick: true
  },
  c: {
    keywords: [
      ...C_LIKE,
      "auto",
      "bool",
      "char",
      "double",
      "float",
      "int",
      "long",
      "short",
      "signed",
      "sizeof",
      "struct",
      "typedef",
      "union",
      "unsigned",
      "namespace",
      "template",
      "typename",
      "using",
      "virtual",
      "final",
      "package",
      "var",
      "val",
      "fun",
      "interface",
      "implements",
      "abstract",
      "boolean",
      "byte",
      "override",
      "string",
      "internal",
      "nullptr"
    ],
    line: ["//"],
    block: true,
    backtick: false
  },
  go: {
    keywords: [
      "break",
      "case",
      "chan",
      "const",
      "continue",
      "default",
      "defer",
      "else",
      "fallthrough",
      "false",
      "for",
      "func",
      "go",
      "goto",
      "if",
      "import",
      "interface",
      "map",
      "nil",
      "package",
      "range",
      "return",
      "select",
      "struct",
      "switch",
      "true",
      "type",
      "var"
    ],
    line: ["//"],
    block: true,
    backtick: true
  },
  rust: {
    keywords: [
      "as",
      "async",
      "await",
      "break",
      "const",
      "continue",
      "crate",
      "else",
      "enum",
      "false",
      "fn",
      "for",
      "if",
      "impl",
      "in",
      "let",
      "loop",
      "match",
      "mod",
      "move",
      "mut",
      "pub",
      "ref",
      "return",
      "self",
      "Self",
      "static",
      "struct",
      "super",
      "trait",
      "true",
      "type",
      "unsafe",
      "use",
      "where",
      "while",
      "dyn",
      "None",
      "Some",
      "Ok",
      "Err"
    ],
    line: ["//"],
    block: true,
    backtick: false
  },
  python: {
    keywords: [
      "and",
      "as",
      "assert",
      "async",
      "await",
      "break",
      "class",
      "continue",
      "def",
      "del",
      "elif",
      "else",
      "except",
      "False",
      "finally",
      "for",
      "from",
      "global",
      "if",
      "import",
      "in",
      "is",
      "lambda",
      "None",
      "nonlocal",
      "not",
      "or",
      "pass",
      "raise",
      "return",
      "True",
      "try",
      "while",
      "with",
      "yield",
      "self"
    ],
    line: ["#"],
    block: false,
    backtick: false
  },
  ruby: {
    keywords: [
      "begin",
      "class",
      "def",
      "do",
      "else",
      "elsif",
      "end",
      "ensure",
      "false",
      "if",
      "in",
      "module",
      "nil",
      "require",
      "rescue",
      "return",
      "self",
      "then",
      "true",
      "unless",
      "until",
      "when",
      "while",
      "yield",
      "attr_reader",
      "attr_accessor"
    ],
    line: ["#"],
    block: false,
    backtick: false
  },
  shell: {
    keywords: [
      "case",
      "do",
      "done",
      "elif",
      "else",
      "esac",
      "export",
      "fi",
      "for",
      "function",
      "if",
      "in",
      "local",
      "return",
      "then",
      "until",
      "while",
      "echo",
      "cd",
      "set",
      "unset",
      "exit",
      "source"
    ],
    line: ["#"],
    block: false,
    backtick: true
  },
  sql: {
    keywords: [
      "select",
      "from",
      "where",
      "insert",
      "into",
      "values",
      "update",
      "set",
      "delete",
      "create",
      "table",
      "drop",
      "alter",
      "join",
      "left",
      "right",
      "inner",
      "outer",
      "on",
      "group",
      "by",
      "order",
      "having",
      "limit",
      "and",
      "or",
      "not",
      "null",
      "as",
      "index",
      "primary",
      "key",
      "SELECT",
      "FROM",
      "WHERE",
      "INSERT",
      "INTO",
      "VALUES",
      "UPDATE",
      "SET",
      "DELETE",
      "CREATE",
      "TABLE",
      "DROP",
      "ALTER",
      "JOIN",
      "LEFT",
      "INNER",
      "ON",
      "GROUP",
      "BY",
      "ORDER",
      "HAVING",
      "LIMIT",
      "AND",
      "OR",
      "NOT",
      "NULL",
      "AS",
      "PRIMARY",
      "KEY"
    ],
    line: ["--"],
    block: true,
    backtick: false
  },
  data: { keywords: ["true", "false", "null", "yes", "no"], line: ["#"], block: false, backtick: false }
}

const ALIASES: Record<string, string> = {
  js: "js",
  javascript: "js",
  jsx: "js",
  mjs: "js",
  cjs: "js",
  ts: "js",
  typescript: "js",
  tsx: "js",
  mts: "js",
  c: "c",
  h: "c",
  cpp: "c",
  "c++": "c",
  cc: "c",
  hpp: "c",
  java: "c",
  kotlin: "c",
  kt: "c",
  cs: "c",
  csharp: "c",
  swift: "c",
  scala: "c",
  dart: "c",
  php: "c",
  go: "go",
  golang: "go",
  rust: "rust",
  rs: "rust",
  python: "python",
  py: "python",
  ruby: "ruby",
  rb: "ruby",
  sh: "shell",
  bash: "shell",
  zsh: "shell",
  shell: "shell",
  console: "shell",
  fish: "shell",
  sql: "sql",
  json: "data",
  jsonc: "data",
  yaml: "data",
  yml: "data",
  toml: "data",
  ini: "data"
}

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")

const compiled = new Map<string, RegExp>()

/** One pass: comment | string | number | word, in that order of precedence. */
const patternFor = (name: string, family: Family): RegExp => {
  const cached = compiled.get(name)
  if (cached) return cached
  const comments = [...family.line.map((l) => `${escapeRegex(l)}.*`), ...(family.block ? ["/\\*[\\s\\S]*?(?:\\*/|$)"] : [])]
  const strings = [`"(?:[^"\\\\\\n]|\\\\.)*"?`, `'(?:[^'\\\\\\n]|\\\\.)*'?`, ...(family.backtick ? ["`(?:[^`\\\\]|\\\\.)*`?"] : [])]
  const re = new RegExp(
    `(${comments.join("|")})|(${strings.join("|")})|(\\b\\d[\\d_]*(?:\\.\\d+)?(?:e[+-]?\\d+)?\\b|\\b0x[\\da-f]+\\b)|([A-Za-z_$][\\w$]*)`,
    "gi"
  )
  compiled.set(name, re)
  return re
}

/** The family a fence's language names, if it is one this highlighter knows. */
export const languageOf = (lang: string | undefined): string | undefined => {
  const key = (lang ?? "").trim().split(/\s+/)[0]?.toLowerCase() ?? ""
  if (key === "diff" || key === "patch") return "diff"
  return ALIASES[key]
}

/** The lines of a code block, coloured for its language (as given after the opening fence). */
export const highlight = (code: string, lang: string | undefined, style: Style): ReadonlyArray<string> => {
  const name = languageOf(lang)
  if (!style.color || name === undefined) return code.split("\n")
  if (name === "diff") return renderDiff(code, style)
  const family = families[name]!
  const keywords = new Set(family.keywords)
  const re = patternFor(name, family)
  re.lastIndex = 0
  const painted = code.replace(re, (match, comment?: string, string?: string, number?: string, word?: string) => {
    // a block comment or backtick string may span lines: paint each line on its own so a line cut stays clean
    const paint = (f: (s: string) => string) => match.split("\n").map(f).join("\n")
    if (comment !== undefined) return paint(style.gray)
    if (string !== undefined) return paint(style.green)
    if (number !== undefined) return style.yellow(match)
    if (word !== undefined && keywords.has(word)) return style.magenta(match)
    return match
  })
  return painted.split("\n")
}
