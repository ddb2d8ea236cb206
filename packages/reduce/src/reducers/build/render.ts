/**
 * Renders parsed build output: each distinct diagnostic once, where it first appeared, with its
 * snippet; repeats of the same message listed by location; summaries kept; noise as one marker
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

interface Group {
  readonly first: Diag
  readonly all: Array<Diag>
  /** `location\0body` of each occurrence kept, to drop exact reprints. */
  readonly seen: Set<string>
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
  if (!diags[0]!.compact) return wrap(diags.map((d) => d.location), indent, ", ")
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

  const out: Array<string> = []
  let snippets = false
  let cut = false
  let run: Array<string> = []
  const flushRun = () => {
    if (run.length > RUN_MAX) {
      out.push(...cutMiddle(run, RUN_MAX / 2, RUN_MAX / 4))
      cut = true
    } else out.push(...run)
    run = []
  }
  const full = (d: Diag) => {
    out.push(...d.context, d.header)
    if (d.body.length > 0) snippets = true
    out.push(...(d.body.length > BODY_MAX ? cutMiddle(d.body, BODY_MAX - 15, 10) : d.body))
    if ((d.mode === "pretty" || d.mode === "rust") && d.body.length > 0) blank()
  }
  const blank = () => {
    if (out.length > 0 && out[out.length - 1] !== "") out.push("")
  }

  for (const item of parsed.items) {
    if (item.kind === "text") {
      if (item.count > 1) repeats++
      run.push(item.count > 1 ? `${item.text}  [×${item.count}]` : item.text)
      continue
    }
    flushRun()
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
        const all = group.all
        if (all.length === 1) {
          full(all[0]!)
          break
        }
        const bodies = all.map((d) => d.body.join("\n"))
        if (bodies.every((b) => b === "")) {
          out.push(`${group.first.label}  — ${plural(all.length, "location")}:`, ...locations(all, "  "))
          break
        }
        const shown = bodies.every((b) => b === bodies[0]) ? 1 : Math.min(FULL[group.first.mode], all.length)
        for (const d of all.slice(0, shown)) full(d)
        const rest = all.slice(shown)
        if (rest.length > 0) out.push(`  … the same message at ${plural(rest.length, "more location")}:`, ...locations(rest, "    "))
        break
      }
    }
  }
  flushRun()
  while (out.length > 0 && out[out.length - 1] === "") out.pop()

  const reasons: Array<ReasonCode> = []
  if (parsed.noise > 0) reasons.push("noise_dropped")
  if (parsed.progress > 0) reasons.push("progress_dropped")
  if (repeats > 0) reasons.push("repeats_grouped")
  if (snippets) reasons.push("snippets_kept")
  if (cut) reasons.push("middle_dropped")
  return { text: out.join("\n") + "\n", reasons }
}
