/**
 * Renders parsed build output: errors first, each distinct one once, where it first appeared,
 * with its snippet, notes and (gcc) the function or include chain it is in; repeats of the same
 * error listed by location. Warnings follow, before the closing summaries: a kind of warning (one
 * flag, e.g. `-Wunused-variable`, or one message) seen more than a few times becomes one line with
 * its count and a few locations, their context lines dropped. Summaries kept; noise as one marker
 * per run.
 */
import type { ReasonCode } from "../../Reducer.ts"
import { cutMiddle } from "../../Text.ts"
import type { Diag, Item, Parsed } from "./parse.ts"

/**
 * Occurrences of one message shown with their own snippets when the snippets differ: rustc puts
 * the specifics (`expected u32, found &str`) in the snippet labels; the others put them in the
 * message, so one snippet is enough.
 */
const FULL: Record<Diag["mode"], number> = { rust: 3, pretty: 1, indent: 1, line: 1 }
/** Shorter runs of dropped lines leave no marker (separators, a stray status line). */
const MARK_MIN = 3
/** Longest body kept whole; longer ones keep their head and tail. */
const BODY_MAX = 60
/** Longest run of unrecognised lines kept whole. */
const RUN_MAX = 60
const WIDTH = 160
/** A kind of warning seen more often than this becomes one line. */
const WARNINGS_FEW = 3
/** Locations named on that line. */
const WARNING_LOCATIONS = 3

const NOTE_LABEL = /^(?:note|remark|message)\b/

/** A warning, in any of the formats parsed (not an error, a note or an unlabelled go diagnostic). */
const isWarning = (d: Diag) => /^(?:warning\b|\[WARNING\])/i.test(d.label) || /\[Warning\/\S*\]$/.test(d.label)

/**
 * What makes warnings the same kind: the compiler's flag (`[-Wsign-compare]`, javac's
 * `[deprecation]`), else the message with its quoted names (‘x’, 'x', `x`, "x") left out.
 */
/** How many different messages of one text are listed with their locations; the rest by what they quote only. */
const VARIANTS_WITH_LOCATIONS = 8
/** How many of them are named at all: past it, counted. */
const VARIANTS_NAMED = 60

const QUOTED = /‘[^’]*’|'[^']*'|`[^`]*`|"[^"]*"/g
/** A message with what it quotes left out: `unused variable ‘…’`. */
const unquoted = (label: string) => label.replace(QUOTED, "…")
/** What a message quotes: `‘scratch_01’`, `\`u64\` \`u32\``. */
const quoted = (label: string) => (label.match(QUOTED) ?? [label]).join(" ")

const kindOf = (d: Diag) => {
  const flag = /\[(-W[^\]\s]+)\]$/.exec(d.label) ?? /^warning: \[([\w-]+)\]/.exec(d.label)
  if (flag) return `flag ${flag[1]}`
  return `message ${unquoted(d.label)}`
}

interface Group {
  readonly first: Diag
  readonly all: Array<Diag>
  /** `location\0body` of each occurrence kept, to drop exact reprints. */
  readonly seen: Set<string>
}

/** The groups of one kind of warning (see kindOf), and how many distinct occurrences they hold. */
interface Kind {
  readonly groups: Array<Group>
  count: number
  readonly messages: Set<string>
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`

/** Locations joined into lines of at most WIDTH characters. */
const wrap = (parts: ReadonlyArray<string>, indent: string, sep: string): Array<string> => {
  const out: Array<string> = []
  let line = ""
  for (const part of parts) {
    if (line !== "" && line.length + sep.length + part.length > WIDTH) {
      out.push(indent + line)
      line = part
    } else line = line === "" ? part : line + sep + part
  }
  if (line !== "") out.push(indent + line)
  return out
}

/** Every location of the group: one per entry, or per file (`a.js:3:1 7:1 9:5`) for eslint. */
const locations = (diags: ReadonlyArray<Diag>, indent: string): Array<string> => {
  if (!diags[0]!.compact)
    return wrap(
      diags.map((d) => d.location),
      indent,
      ", "
    )
  const byFile = new Map<string, Array<string>>()
  for (const d of diags) {
    const list = byFile.get(d.file)
    if (list) list.push(d.pos)
    else byFile.set(d.file, [d.pos])
  }
  return [...byFile].map(([file, positions]) => `${indent}${file}:${positions.join(" ")}`)
}

export const render = (parsed: Parsed): { readonly text: string; readonly reasons: ReadonlyArray<ReasonCode> } => {
  const groups = new Map<string, Group>()
  let repeats = 0
  for (const item of parsed.items) {
    if (item.kind !== "diag") continue
    const d = item.diag
    const id = `${d.location}\0${d.body.join("\n")}`
    const group = groups.get(d.key)
    if (!group) {
      groups.set(d.key, { first: d, all: [d], seen: new Set([id]) })
      continue
    }
    repeats++
    // the same diagnostic printed twice (mvn's recap, a header included by several files)
    if (group.seen.has(id)) continue
    group.seen.add(id)
    group.all.push(d)
  }

  // kinds of warnings, over every distinct occurrence of every message of that kind
  const kinds = new Map<string, Kind>()
  for (const group of groups.values()) {
    if (group.first.compact || !isWarning(group.first)) continue
    const id = kindOf(group.first)
    const kind = kinds.get(id) ?? { groups: [], count: 0, messages: new Set<string>() }
    kinds.set(id, kind)
    kind.groups.push(group)
    kind.count += group.all.length
    kind.messages.add(group.first.label)
  }

  // the summaries, blank lines and noise markers at the end stay last, after the warnings
  let tail = parsed.items.length
  while (tail > 0) {
    const item = parsed.items[tail - 1]!
    if (item.kind === "summary" || item.kind === "blank" || item.kind === "dropped" || (item.kind === "diag" && isWarning(item.diag))) tail--
    else break
  }

  // the files with errors: a kind's locations in them are named first
  const errorFiles = new Set<string>()
  for (const item of parsed.items) if (item.kind === "diag" && !isWarning(item.diag) && !NOTE_LABEL.test(item.diag.label)) errorFiles.add(item.diag.file)

  // where each diagnostic was printed, to list a kind's locations in that order
  const order = new Map<Diag, number>()
  parsed.items.forEach((item, n) => {
    if (item.kind === "diag") order.set(item.diag, n)
  })

  const out: Array<string> = []
  let snippets = false
  let cut = false
  let contextDropped = false
  let lastScope: string | undefined
  let run: Array<string> = []
  const flushRun = () => {
    if (run.length > RUN_MAX) {
      out.push(...cutMiddle(run, RUN_MAX / 2, RUN_MAX / 4))
      cut = true
    } else out.push(...run)
    run = []
  }
  const full = (d: Diag) => {
    if (isWarning(d)) {
      if (d.context.length > 0) contextDropped = true
      lastScope = undefined
      out.push(d.header)
    } else {
      // the function an error is in, unless the line just above already says it
      const context = d.context.length > 0 ? d.context : d.scope !== undefined && d.scope !== lastScope ? [d.scope] : []
      out.push(...context, d.header)
      lastScope = d.scope
    }
    if (d.body.length > 0) snippets = true
    out.push(...(d.body.length > BODY_MAX ? cutMiddle(d.body, BODY_MAX - 15, 10) : d.body))
    if ((d.mode === "pretty" || d.mode === "rust") && d.body.length > 0) blank()
  }
  const blank = () => {
    if (out.length > 0 && out[out.length - 1] !== "") out.push("")
  }

  const renderItem = (item: Item) => {
    if (item.kind === "text") {
      if (item.count > 1) repeats++
      run.push(item.count > 1 ? `${item.text}  [×${item.count}]` : item.text)
      lastScope = undefined
      return
    }
    flushRun()
    if (item.kind !== "diag") lastScope = undefined
    switch (item.kind) {
      case "summary":
        out.push(item.text)
        break
      case "blank":
        blank()
        break
      case "dropped":
        if (item.noise + item.progress >= MARK_MIN) out.push(`… ${plural(item.noise + item.progress, "noise line")} dropped …`)
        break
      case "diag": {
        const group = groups.get(item.diag.key)!
        if (group.first !== item.diag) break
        renderGroup(group)
        break
      }
    }
  }
  const renderGroup = (group: Group) => {
    const all = group.all
    if (all.length === 1) return full(all[0]!)
    const bodies = all.map((d) => d.body.join("\n"))
    if (bodies.every((b) => b === "")) {
      out.push(`${group.first.label}  — ${plural(all.length, "location")}:`, ...locations(all, "  "))
      return
    }
    const shown = bodies.every((b) => b === bodies[0]) ? 1 : Math.min(FULL[group.first.mode], all.length)
    for (const d of all.slice(0, shown)) full(d)
    const rest = all.slice(shown)
    if (rest.length > 0) out.push(`  … the same message at ${plural(rest.length, "more location")}:`, ...locations(rest, "    "))
  }
  /**
   * A kind of warning seen many times, one entry per message text: a message seen alone is its line with the count and
   * first locations; messages that differ only in what they quote (`unused variable ‘a’`, `‘b’`; `casting u64 to u32`,
   * `i64 to i32`) are one line with the text, then what each quotes and where — one never stands for another.
   */
  const renderKind = (kind: Kind) => {
    const all = kind.groups.flatMap((g) => g.all).sort((a, b) => order.get(a)! - order.get(b)!)
    if (all.some((d) => d.context.length > 0 || d.body.length > 0)) contextDropped = true
    repeats++
    const byText = new Map<string, Array<Diag>>()
    for (const d of all) {
      const key = unquoted(d.label)
      const list = byText.get(key)
      if (list === undefined) byText.set(key, [d])
      else list.push(d)
    }
    for (const [text, ds] of byText) {
      // the files being fixed (those with errors) first
      const first = [...ds.filter((d) => errorFiles.has(d.file)), ...ds.filter((d) => !errorFiles.has(d.file))]
      const labels = new Set(ds.map((d) => d.label))
      if (labels.size === 1) {
        const shown = first.slice(0, WARNING_LOCATIONS)
        const more = ds.length > shown.length ? `, … ${ds.length - shown.length} more` : ""
        out.push(`${ds[0]!.label}  — ${ds.length} times: ${shown.map((d) => d.location).join(", ")}${more}`)
        continue
      }
      // each variant once: how often and its first locations; past the first few, by name only
      const variants = new Map<string, Array<Diag>>()
      for (const d of first) {
        const key = quoted(d.label)
        const list = variants.get(key)
        if (list === undefined) variants.set(key, [d])
        else list.push(d)
      }
      const named = [...variants].slice(0, VARIANTS_NAMED)
      const entries = named.map(([name, vs], i) => {
        if (i >= VARIANTS_WITH_LOCATIONS) return name
        const shown = vs.slice(0, 3).map((d) => d.location)
        return `${name}${vs.length > 1 ? ` ×${vs.length}` : ""} ${shown.join(" ")}${vs.length > shown.length ? " …" : ""}`
      })
      if (variants.size > named.length) entries.push(`… ${variants.size - named.length} more`)
      out.push(`${text}  — ${ds.length} times, ${labels.size} different:`)
      out.push(...wrap(entries, "  ", "; "))
    }
  }

  // errors and everything else in order, then the warnings, then the closing summaries
  const warnings: Array<Diag> = []
  parsed.items.forEach((item, n) => {
    if (item.kind === "diag" && isWarning(item.diag)) warnings.push(item.diag)
    else if (n < tail) renderItem(item)
  })
  flushRun()
  if (warnings.length > 0 && out.length > 0) blank()
  const done = new Set<Kind>()
  for (const d of warnings) {
    const group = groups.get(d.key)!
    if (group.first !== d) continue
    const kind = group.first.compact ? undefined : kinds.get(kindOf(d))
    if (kind === undefined || kind.count <= WARNINGS_FEW) renderGroup(group)
    else if (!done.has(kind)) {
      done.add(kind)
      renderKind(kind)
    }
  }
  if (warnings.length > 0 && tail < parsed.items.length) blank()
  parsed.items.forEach((item, n) => {
    if (n >= tail && !(item.kind === "diag" && isWarning(item.diag))) renderItem(item)
  })
  flushRun()
  while (out.length > 0 && out[out.length - 1] === "") out.pop()

  const reasons: Array<ReasonCode> = []
  if (parsed.noise > 0) reasons.push("noise_dropped")
  if (parsed.progress > 0) reasons.push("progress_dropped")
  if (repeats > 0) reasons.push("repeats_grouped")
  if (snippets) reasons.push("snippets_kept")
  if (cut) reasons.push("middle_dropped")
  if (contextDropped && !reasons.includes("noise_dropped")) reasons.unshift("noise_dropped")
  return { text: `${out.join("\n")}\n`, reasons }
}
