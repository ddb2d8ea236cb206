import { Effect } from "effect"
import * as path from "node:path"
import { isBroad, Permission, realLocation } from "@reins/permission"
import type { ToolContext } from "../Tool.ts"
import { displayPath, readDirectory, SEARCH_SKIP, type Entry } from "./Files.ts"
import { gitIgnoreAt, noIgnore, type GitIgnore } from "@reins/workspace"

/** A file a directory-wide search left out because the permission rules single it out. */
export interface Guarded {
  readonly path: string
  readonly action: "ask" | "deny"
  /** The rule that decided, as `read "*.env"`. */
  readonly rule: string
}

/**
 * Judges a file for a directory-wide search by the rules `read` would apply to it (and the search
 * tool's own), without asking anyone: a file the rules deny, or ask about by a rule that names it
 * (`*.env`), is left out; a broad `*` ask is the question about the search itself, asked already.
 */
export const searchGuard = Effect.fnUntraced(function* (ctx: ToolContext, tool: string) {
  const permission = yield* Permission
  const judged = yield* permission.judge(ctx.sessionID)
  return (file: string, real: string): Guarded | undefined => {
    let ask: Guarded | undefined
    for (const name of ["read", tool]) {
      for (const subject of real === file ? [file] : [file, real]) {
        const decision = judged({ permission: name, patterns: [subject] })
        const rule = decision.rule ? `${name} "${decision.rule.pattern}"` : name
        if (decision.action === "deny") return { path: file, action: "deny", rule }
        if (decision.action === "ask" && decision.rule && !isBroad(decision.rule)) ask ??= { path: file, action: "ask", rule }
      }
    }
    return ask
  }
})

/** What a walk found, and what it left out and why. */
export interface Walked {
  readonly files: ReadonlyArray<Entry>
  /** Directories that could not be read. */
  readonly unreadable: number
  /** Wanted files and directories `.gitignore` ignores. */
  readonly ignored: number
  readonly guarded: ReadonlyArray<Guarded>
}

/**
 * Every regular file below `root` that `wanted` keeps, for grep and glob: `.git` and
 * `node_modules` skipped, `.gitignore`d entries skipped unless `includeIgnored`, files the
 * permission rules protect left out (see `searchGuard`). Symlinks, FIFOs, sockets and devices are
 * never entered or returned, so nothing met in a walk can block a read.
 */
export const walkSearch = Effect.fnUntraced(function* (
  ctx: ToolContext,
  root: string,
  options: { readonly tool: string; readonly includeIgnored: boolean; readonly wanted: (entry: Entry) => boolean }
) {
  const guard = yield* searchGuard(ctx, options.tool)
  const realRoot = realLocation(root)
  const files: Array<Entry> = []
  const guarded: Array<Guarded> = []
  let unreadable = 0
  let ignored = 0
  const stack: Array<{ readonly rel: string; readonly ignore: GitIgnore }> = [
    { rel: "", ignore: options.includeIgnored ? noIgnore : yield* gitIgnoreAt(root, ctx.cwd) }
  ]
  while (stack.length > 0) {
    const { rel, ignore: parent } = stack.pop()!
    const dir = rel === "" ? root : path.join(root, rel)
    const entries = yield* readDirectory(dir)
    if (entries === undefined) {
      unreadable++
      continue
    }
    // the root's own .gitignore is already part of the rules it starts with
    const hasIgnoreFile = rel !== "" && entries.some((e) => e.name === ".gitignore" && e.isFile)
    const ignore = yield* parent.enter(dir, hasIgnoreFile)
    for (const e of [...entries].reverse()) {
      const entry: Entry = { path: path.join(dir, e.name), rel: rel === "" ? e.name : `${rel}/${e.name}`, name: e.name, isDirectory: e.isDirectory }
      if (e.isDirectory) {
        if (SEARCH_SKIP.has(e.name)) continue
        if (ignore.ignores(entry.path, true)) ignored++
        else stack.push({ rel: entry.rel, ignore })
        continue
      }
      if (!e.isFile || !options.wanted(entry)) continue
      if (ignore.ignores(entry.path, false)) {
        ignored++
        continue
      }
      const protection = guard(entry.path, path.join(realRoot, entry.rel))
      if (protection) guarded.push(protection)
      else files.push(entry)
    }
  }
  return { files, unreadable, ignored, guarded } satisfies Walked
})

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`

/** The notes on what a walk left out, for the model: which rules, and how to get at a file anyway. */
export const walkNotes = (ctx: ToolContext, walked: Walked, options: { readonly empty: boolean }) => {
  const notes: Array<string> = []
  const asked = walked.guarded.filter((g) => g.action === "ask")
  const denied = walked.guarded.filter((g) => g.action === "deny")
  const rules = (list: ReadonlyArray<Guarded>) => [...new Set(list.map((g) => g.rule))].join(", ")
  if (asked.length > 0) {
    const shown = asked.slice(0, 10).map((g) => displayPath(ctx, g.path))
    notes.push(
      `(${plural(asked.length, "file was", "files were")} left out because the permission rules ask before reading ${asked.length === 1 ? "it" : "them"} ` +
        `(${rules(asked)}): ${shown.join(", ")}${asked.length > shown.length ? ", …" : ""}. ` +
        "To look into one, read it (or grep it) by its path: the user will be asked.)"
    )
  }
  if (denied.length > 0) {
    notes.push(
      `(${plural(denied.length, "file was", "files were")} left out because the permission rules deny reading ${denied.length === 1 ? "it" : "them"} (${rules(denied)}). Do not try to read ${denied.length === 1 ? "it" : "them"}.)`
    )
  }
  if (options.empty && walked.ignored > 0) {
    notes.push(
      `(${plural(walked.ignored, "entry", "entries")} ignored by .gitignore ${walked.ignored === 1 ? "was" : "were"} not searched; pass include_ignored: true to search them.)`
    )
  }
  if (walked.unreadable > 0) {
    notes.push(`(${plural(walked.unreadable, "directory", "directories")} could not be read and ${walked.unreadable === 1 ? "was" : "were"} skipped.)`)
  }
  return notes
}
