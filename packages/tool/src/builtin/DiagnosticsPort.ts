// The edit tools' port to language servers (packages/lsp, wired by the runtime): after a file is written it is
// synced with its server and checked, and the new errors go after the tool's result. The default has no servers.
import { Context, Effect } from "effect"
import * as path from "node:path"
import type { RawResult, ToolContext } from "../Tool.ts"

/** One problem a language server reported: 1-based line and column, LSP severity (1 error, 2 warning, 3 info, 4 hint). */
export interface Problem {
  readonly line: number
  readonly column: number
  readonly severity: 1 | 2 | 3 | 4
  /** As the model would search for it: `TS2322`, `reportAttributeAccessIssue`. */
  readonly code?: string
  readonly message: string
}

/** What a server said about one file: its problems (and those it had before, when known), or that it did not answer in time. */
export type FileCheck =
  | {
      readonly status: "checked"
      readonly path: string
      readonly server: string
      readonly problems: ReadonlyArray<Problem>
      /** The file's problems before this change, when the server had it open. */
      readonly before?: ReadonlyArray<Problem>
    }
  | { readonly status: "timeout"; readonly path: string; readonly server: string; readonly waitedMs: number }

/** A file a tool wrote, with its text before (an existing text file's): a server new to it reports the old errors as old. */
export interface Written {
  readonly path: string
  readonly before?: string
}

/** Where the edit tools and `diagnostics` find language servers; the default finds none. */
export const Diagnostics = Context.Reference<{
  /** Whether to offer the `diagnostics` tool: a server is here for the kind of project this is (its marker at the root). */
  readonly offered: boolean
  /**
   * Syncs files a tool just wrote with their servers and checks them; a file no server serves has no entry. `removed`:
   * files the tool deleted or moved away, closed in the servers that have them open.
   */
  afterWrite(sessionID: string, written: ReadonlyArray<Written>, removed?: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<FileCheck>>
  /** The current problems of `files`, or of the files the session's edits touched. */
  check(sessionID: string, files: ReadonlyArray<string> | undefined): Effect.Effect<ReadonlyArray<FileCheck>>
}>("reins/tool/Diagnostics", {
  defaultValue: () => ({ offered: false, afterWrite: () => Effect.succeed([]), check: () => Effect.succeed([]) })
})

/** How many problem lines one result shows. */
export const MAX_PROBLEM_LINES = 20
const MAX_MESSAGE = 300

/** A file as results show it: relative when inside `cwd`. */
export const shownPath = (cwd: string, file: string) => {
  const rel = path.relative(cwd, file)
  return rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel) ? rel : file
}

/** `src/a.ts:3:7 TS2322 Type 'string' is not assignable to type 'number'.`: the message's first line, cut. */
export const problemLine = (cwd: string, file: string, p: Problem) => {
  const message = (p.message.split("\n", 1)[0] ?? "").trim()
  const cut = message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE)}…` : message
  return `${shownPath(cwd, file)}:${p.line}:${p.column}${p.code !== undefined ? ` ${p.code}` : ""} ${cut}`
}

const key = (p: Problem) => `${p.code ?? ""}\u0000${p.message}`

/** The errors of `now` that `before` did not have (compared by code and message: an edit above moves the lines). */
export const newErrors = (now: ReadonlyArray<Problem>, before: ReadonlyArray<Problem> | undefined) => {
  const errors = now.filter((p) => p.severity === 1)
  if (before === undefined) return { added: errors, kept: 0 }
  const left = new Map<string, number>()
  for (const p of before) if (p.severity === 1) left.set(key(p), (left.get(key(p)) ?? 0) + 1)
  const added: Array<Problem> = []
  let kept = 0
  for (const p of errors) {
    const n = left.get(key(p)) ?? 0
    if (n > 0) {
      left.set(key(p), n - 1)
      kept++
    } else added.push(p)
  }
  return { added, kept }
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`

/** What goes after an edit's result: its new errors by server (capped), the ones it left alone counted, a server too slow said so; "" when nothing. */
export const afterEditText = (cwd: string, checks: ReadonlyArray<FileCheck>): string => {
  const sections: Array<string> = []
  let room = MAX_PROBLEM_LINES
  for (const server of [...new Set(checks.map((c) => c.server))]) {
    const mine = checks.filter((c) => c.server === server)
    const lines: Array<string> = []
    let hidden = 0
    let kept = 0
    for (const check of mine) {
      if (check.status !== "checked") continue
      const found = newErrors(check.problems, check.before)
      kept += found.kept
      for (const p of found.added) {
        if (room > 0) {
          lines.push(problemLine(cwd, check.path, p))
          room--
        } else hidden++
      }
    }
    const notes = [
      ...(hidden > 0 ? [`… and ${plural(hidden, "more error")}.`] : []),
      ...(kept > 0 && lines.length > 0 ? [`(${plural(kept, "error")} in these files ${kept === 1 ? "was" : "were"} there before this edit.)`] : [])
    ]
    if (lines.length > 0) sections.push([`Errors reported by ${server} after this edit:`, ...lines, ...notes].join("\n"))
    const slow = mine.filter((c) => c.status === "timeout")
    if (slow.length > 0 && slow[0]?.status === "timeout") sections.push(`(${server} gave no diagnostics within ${Math.round(slow[0].waitedMs / 1000)} s.)`)
  }
  return sections.join("\n\n")
}

/** An edit tool's result with the new errors of the files it wrote after it (the files' count in the metadata). */
export const withDiagnostics = (
  port: (typeof Diagnostics)["Service"],
  ctx: ToolContext,
  files: ReadonlyArray<Written>,
  result: RawResult,
  removed: ReadonlyArray<string> = []
): Effect.Effect<RawResult> =>
  files.length === 0 && removed.length === 0
    ? Effect.succeed(result)
    : Effect.map(port.afterWrite(ctx.sessionID, files, removed), (checks) => {
        const text = afterEditText(ctx.cwd, checks)
        const errors = checks.reduce((n, c) => n + (c.status === "checked" ? c.problems.filter((p) => p.severity === 1).length : 0), 0)
        return checks.length === 0
          ? result
          : { ...result, output: text === "" ? result.output : `${result.output}\n\n${text}`, metadata: { ...result.metadata, diagnostics: { errors } } }
      })
