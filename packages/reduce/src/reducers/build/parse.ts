/**
 * Splits compiler and linter output into diagnostics (header + the snippet, caret and note lines
 * that belong to it), summaries, noise and other lines. One pass, one line of look-ahead.
 */
import { CARET, CONTEXT, IMPORTANT, NOISE, PROGRESS, SUMMARY, TSC_TABLE_ROW } from "./patterns.ts"

/** How the lines after a diagnostic's header are taken into it. */
type Mode =
  | "line" // nothing follows (eslint, single-line formats)
  | "indent" // indented lines, and a raw source line when a caret line follows (gcc, clang, javac, mvn, go, tsc)
  | "rust" // everything up to the blank line that ends it
  | "pretty" // everything up to the next header or summary (tsc --pretty)

/** Which body lines are part of the message (and so of the grouping key). */
type Detail = "none" | "all" | "elaboration" | "symbol"

export interface Diag {
  /** As printed, e.g. `src/a.ts(3,5)`, `src/a.c:3:5`, `/p/Foo.java:[12,5]`. */
  readonly location: string
  readonly file: string
  /** The location without the file, for per-file listing (eslint). */
  readonly pos: string
  /** The message without its location, e.g. `error TS2304: Cannot find name 'x'.` */
  readonly label: string
  readonly header: string
  readonly body: Array<string>
  readonly context: ReadonlyArray<string>
  /** The gcc `file: In function ‘f’:` line in effect, also when an earlier diagnostic took it. */
  readonly scope: string | undefined
  /** Repeats are listed per file (`a.js:3:1 7:1`) rather than location by location. */
  readonly compact: boolean
  readonly mode: Mode
  readonly detail: Detail
  key: string
  expectSnippet: boolean
}

export type Item =
  | { readonly kind: "diag"; readonly diag: Diag }
  | { readonly kind: "text"; readonly text: string; count: number }
  | { readonly kind: "summary"; readonly text: string }
  | { readonly kind: "blank" }
  | { readonly kind: "dropped"; noise: number; progress: number }

export interface Parsed {
  readonly items: ReadonlyArray<Item>
  readonly noise: number
  readonly progress: number
  readonly diagnostics: number
}

const TSC_PLAIN = /^(\S.*?)\((\d+),(\d+)\): ((?:error|warning|message) TS\d+: .*)$/
const TSC_PRETTY = /^(\S.*?):(\d+):(\d+) - ((?:error|warning|message) TS\d+: .*)$/
const MVN = /^\[(?:ERROR|WARNING)\] (\S.*?):\[(\d+),(\d+)\] (.*)$/
const MVN_MORE = /^\[(?:ERROR|WARNING)\] (\s+\S.*)$/
const ESLINT_UNIX = /^(\S.*?):(\d+):(\d+): (.* \[(?:Error|Warning)(?:\/\S+)?\])$/
const GCC = /^(\S.*?):(\d+):(?:(\d+):)? ((?:fatal error|error|warning|note|remark): .*)$/
const GO = /^(\S+\.go):(\d+)(?::(\d+))?: (.*)$/
const RUST = /^(?:error|warning)(?:\[[A-Z]*\d+\])?: \S/
const RUST_ARROW = /^\s*--> (\S.*?):(\d+):(\d+)$/
const STYLISH_ROW = /^\s+(\d+):(\d+)\s+(error|warning)\s+(\S.*)$/
const STYLISH_FILE = /^(?:[A-Za-z]:)?[^\s:][^:]*$/
const NOTE = /^note: /
/** gcc's function scope line, `src/a.c: In function ‘f’:` (not an include chain). */
const SCOPE = /^\S.*: In (?:function|member function|constructor|destructor|static member function|lambda)\b/
const TOP_LEVEL = /^\S.*: At (?:top level|global scope):/
const INCLUDED = /^In file included from \S/
const INCLUDED_MORE = /^\s+from \S.*[:,]$/

const diag = (
  file: string,
  pos: string,
  location: string,
  label: string,
  header: string,
  mode: Mode,
  detail: Detail,
  compact = false
): Omit<Diag, "context" | "scope"> => ({ location, file, pos, label, header, body: [], compact, mode, detail, key: "", expectSnippet: mode === "indent" })

/** The diagnostic this line starts, if it starts one (`next` is the line after it, for rustc's ` --> `). */
const header = (line: string, next: string | undefined, stylishFile: string | undefined): Omit<Diag, "context" | "scope"> | undefined => {
  const c0 = line.charCodeAt(0)
  if (c0 === 32 || c0 === 9) {
    if (stylishFile === undefined) return undefined
    const m = STYLISH_ROW.exec(line)
    if (!m) return undefined
    const parts = m[4]!.trimEnd().split(/\s{2,}/)
    const rule = parts.length > 1 ? parts[parts.length - 1]! : ""
    const message = (parts.length > 1 ? parts.slice(0, -1) : parts).join("  ")
    const label = `${m[3]}  ${message}${rule ? `  ${rule}` : ""}`
    const pos = `${m[1]}:${m[2]}`
    const location = `${stylishFile}:${pos}`
    return diag(stylishFile, pos, location, label, `${location}  ${label}`, "line", "none", true)
  }
  let m = TSC_PLAIN.exec(line)
  if (m) return diag(m[1]!, `(${m[2]},${m[3]})`, `${m[1]}(${m[2]},${m[3]})`, m[4]!, line, "indent", "all")
  m = TSC_PRETTY.exec(line)
  if (m) return diag(m[1]!, `${m[2]}:${m[3]}`, `${m[1]}:${m[2]}:${m[3]}`, m[4]!, line, "pretty", "elaboration")
  if (c0 === 91 /* [ */) {
    m = MVN.exec(line)
    if (m) return diag(m[1]!, `[${m[2]},${m[3]}]`, `${m[1]}:[${m[2]},${m[3]}]`, `${line.slice(0, line.indexOf("]") + 1)} ${m[4]}`, line, "indent", "symbol")
    return undefined
  }
  if (RUST.test(line)) {
    const arrow = next === undefined ? null : RUST_ARROW.exec(next)
    if (!arrow) return undefined
    return diag(arrow[1]!, `${arrow[2]}:${arrow[3]}`, `${arrow[1]}:${arrow[2]}:${arrow[3]}`, line, line, "rust", "none")
  }
  m = ESLINT_UNIX.exec(line)
  if (m) return diag(m[1]!, `${m[2]}:${m[3]}`, `${m[1]}:${m[2]}:${m[3]}`, m[4]!, line, "line", "none", true)
  m = GCC.exec(line)
  if (m) {
    const pos = m[3] ? `${m[2]}:${m[3]}` : m[2]!
    return diag(m[1]!, pos, `${m[1]}:${pos}`, m[4]!, line, "indent", "symbol")
  }
  m = GO.exec(line)
  if (m) {
    const pos = m[3] ? `${m[2]}:${m[3]}` : m[2]!
    return diag(m[1]!, pos, `${m[1]}:${pos}`, m[4]!, line, "indent", "all")
  }
  return undefined
}

const DETAIL_SYMBOL = /^\s+(?:symbol|required|found|reason):/

/** The grouping key: the message and the body lines that are part of it. */
const keyOf = (d: Diag) => {
  switch (d.detail) {
    case "none":
      return d.label
    case "all":
      return [d.label, ...d.body.map((l) => l.trim())].join("\n")
    case "symbol":
      return [d.label, ...d.body.filter((l) => DETAIL_SYMBOL.test(l)).map((l) => l.trim())].join("\n")
    case "elaboration": {
      const lines = [d.label]
      for (const l of d.body) {
        if (!/^\s/.test(l)) break
        lines.push(l.trim())
      }
      return lines.join("\n")
    }
  }
}

/** Strips what a terminal would have overwritten: the text before the last bare `\r`. */
const visible = (raw: string) => {
  const cr = raw.lastIndexOf("\r")
  return cr === -1 ? raw : raw.slice(cr + 1)
}

export const parse = (lines: ReadonlyArray<string>): Parsed => {
  const items: Array<Item> = []
  const seen = new Map<string, { kind: "text"; text: string; count: number }>()
  let current: Diag | undefined
  let pending: Array<string> = []
  let scope: string | undefined
  let stylishFile: string | undefined
  let table = false
  let noise = 0
  let progress = 0
  let diagnostics = 0

  const close = () => {
    if (!current) return
    while (current.body.length > 0 && current.body[current.body.length - 1]!.trim() === "") current.body.pop()
    current.key = keyOf(current)
    items.push({ kind: "diag", diag: current })
    diagnostics++
    current = undefined
  }
  const flushContext = () => {
    for (const text of pending) items.push({ kind: "text", text, count: 1 })
    pending = []
  }
  const drop = (isProgress: boolean) => {
    close()
    flushContext()
    if (isProgress) progress++
    else noise++
    // a run of dropped lines (blank lines inside it included) becomes one marker
    let end = items.length
    while (end > 0 && items[end - 1]!.kind === "blank") end--
    const last = items[end - 1]
    if (last && last.kind === "dropped") {
      items.length = end
      if (isProgress) last.progress++
      else last.noise++
    } else items.push({ kind: "dropped", noise: isProgress ? 0 : 1, progress: isProgress ? 1 : 0 })
  }

  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!
    const line = visible(raw)
    if (line !== raw && raw.slice(0, raw.lastIndexOf("\r")).trim() !== "") progress++
    const next = i + 1 < lines.length ? visible(lines[i + 1]!) : undefined

    if (line.trim() === "") {
      stylishFile = undefined
      table = false
      if (current && current.mode === "pretty") current.body.push("")
      else {
        close()
        flushContext()
        items.push({ kind: "blank" })
      }
      continue
    }
    // the source line a caret points into belongs to the diagnostic whatever it looks like
    if (current?.expectSnippet) {
      current.expectSnippet = false
      if (next !== undefined && CARET.test(next) && !/^\s*$/.test(next)) {
        current.body.push(line, next)
        i++
        continue
      }
    }
    if (table && TSC_TABLE_ROW.test(line)) {
      items.push({ kind: "summary", text: line })
      continue
    }
    table = false
    if (SUMMARY.test(line)) {
      close()
      flushContext()
      if (/^Errors\s+Files$/.test(line)) table = true
      items.push({ kind: "summary", text: line })
      continue
    }
    const h = header(line, next, stylishFile)
    if (h) {
      if (current && current.mode === "indent" && h.mode === "indent" && NOTE.test(h.label)) {
        current.body.push(line)
        current.expectSnippet = true
        continue
      }
      close()
      for (const l of pending) {
        if (SCOPE.test(l)) scope = l
        else if (TOP_LEVEL.test(l)) scope = undefined
      }
      current = { ...h, context: pending, scope: scope?.startsWith(`${h.file}: `) ? scope : undefined }
      pending = []
      continue
    }
    if (current && (current.mode === "rust" || current.mode === "pretty")) {
      current.body.push(line)
      continue
    }
    if (NOISE.test(line)) {
      drop(false)
      continue
    }
    if (PROGRESS.test(line)) {
      drop(true)
      continue
    }
    if (CONTEXT.test(line)) {
      // an include chain that leads to a note belongs to the diagnostic the note explains
      if (current && current.mode === "indent" && INCLUDED.test(line)) {
        let end = i + 1
        while (end < lines.length && INCLUDED_MORE.test(visible(lines[end]!))) end++
        const note = end < lines.length ? header(visible(lines[end]!), undefined, undefined) : undefined
        if (note && note.mode === "indent" && NOTE.test(note.label)) {
          for (let k = i; k <= end; k++) current.body.push(visible(lines[k]!))
          current.expectSnippet = true
          i = end
          continue
        }
      }
      close()
      pending.push(line)
      continue
    }
    if (current && current.mode === "indent") {
      const c0 = line.charCodeAt(0)
      if (c0 === 32 || c0 === 9 || CARET.test(line)) {
        current.body.push(line)
        continue
      }
      const more = MVN_MORE.exec(line)
      if (more) {
        current.body.push(more[1]!)
        continue
      }
    }
    close()
    if (next !== undefined && STYLISH_FILE.test(line) && STYLISH_ROW.test(next)) {
      flushContext()
      stylishFile = line.trimEnd()
      continue
    }
    flushContext()
    if (IMPORTANT.test(line)) {
      items.push({ kind: "summary", text: line })
      continue
    }
    const before = seen.get(line)
    if (before) before.count++
    else {
      const item = { kind: "text" as const, text: line, count: 1 }
      seen.set(line, item)
      items.push(item)
    }
  }
  close()
  flushContext()
  return { items, noise, progress, diagnostics }
}
