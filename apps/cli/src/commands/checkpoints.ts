import { Effect } from "effect"
import { Command, Flag } from "effect/cli"
import { SessionStore } from "@reins/storage"
import { checkpointsRoot, hashesOf, pruneCheckpoints, type PruneReport } from "@reins/workspace"
import { usage } from "../CliError.ts"
import { plural } from "../Output.ts"
import { withStore } from "../Store.ts"

const DAY_MS = 24 * 3_600_000

const olderThan = Flag.Int("older-than").pipe(
  Flag.withDescription("Keep copies written or used within this many days, whatever names them (default 7)"),
  Flag.withMetavar("DAYS"),
  Flag.withDefault(7)
)
const dryRun = Flag.Boolean("dry-run").pipe(Flag.withDescription("Say what would be removed; remove nothing"), Flag.withDefault(false))
const format = Flag.Literals("format", ["text", "json"]).pipe(
  Flag.withDescription("text: what was removed, on stdout; json: one result object"),
  Flag.withDefault("text" as const)
)

/** `512 B`, `3.4 KiB`, `12.0 MiB`, `1.2 GiB`. */
const size = (bytes: number) => {
  const units = ["B", "KiB", "MiB", "GiB"]
  let n = bytes
  let unit = 0
  while (n >= 1024 && unit < units.length - 1) {
    n /= 1024
    unit++
  }
  return unit === 0 ? `${n} B` : `${n.toFixed(1)} ${units[unit]}`
}

const summary = (report: PruneReport, sessions: number, days: number, dry: boolean) => {
  const verb = dry ? "Would remove" : "Removed"
  const lines = [
    `${verb} ${plural(report.removed, "copy", "copies")} (${size(report.removedBytes)}) of files that none of the ${plural(sessions, "stored session", "stored sessions")} can undo to and that were not used for ${plural(days, "day", "days")}; kept ${plural(report.kept, "copy", "copies")} (${size(report.keptBytes)}).`
  ]
  for (const s of report.skipped) lines.push(`Left alone: ${s.store}: ${s.reason}.`)
  return lines.join("\n")
}

/**
 * `reins checkpoints prune`: frees the data dir's copies of file contents (what undo writes back) that no stored
 * session of this database names, that no project's index names (the files as reins last saw them), and that were not
 * used for --older-than days; a project with an undo to finish or a reins process using it is left whole.
 */
const prune = Command.make("prune", { olderThan, dryRun, format }, ({ olderThan, dryRun, format }) =>
  withStore((setup) =>
    Effect.gen(function* () {
      if (olderThan < 0) return yield* usage(`--older-than takes a number of days, 0 or more (got ${olderThan})`)
      const store = yield* SessionStore
      // every session of this database, sub-agents' too: what their recorded changes name is what undo may need
      const sessions = yield* store.listSessions()
      const referenced = new Set<string>()
      for (const session of sessions) for (const message of yield* store.messages(session.id)) hashesOf(message.parts, referenced)
      const report = pruneCheckpoints({
        root: checkpointsRoot(setup.dataDir),
        referenced,
        olderThanMs: olderThan * DAY_MS,
        now: Date.now(),
        dryRun
      })
      if (format === "json") return process.stdout.write(`${JSON.stringify({ dryRun, olderThanDays: olderThan, sessions: sessions.length, ...report })}\n`)
      process.stdout.write(`${summary(report, sessions.length, olderThan, dryRun)}\n`)
    })
  )
).pipe(Command.withDescription("Free the copies undo keeps that no stored session needs: those no session's changes name and not used for --older-than days"))

/** `reins checkpoints prune`. */
export const checkpoints = Command.make("checkpoints").pipe(
  Command.withDescription("Manage the copies of project files that undo and redo write back"),
  Command.withSubcommands([prune])
)
