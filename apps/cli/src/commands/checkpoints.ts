import { Clock, Effect } from "effect"
import { Command, Flag } from "effect/cli"
import { databaseIdentity, SessionStore } from "@reins/storage"
import { checkpointsRoot, hashesOf, pruneCheckpoints, type PruneReport } from "@reins/workspace"
import { failure, usage } from "../CliError.ts"
import { byteSize, plural } from "../present/Units.ts"
import { withStore } from "../Store.ts"

const DAY_MS = 24 * 3_600_000

const olderThan = Flag.Int("older-than").pipe(
  Flag.withDescription("Keep the copies written or used within this many days, even those no session needs (default 7; the last hour's always)"),
  Flag.withMetavar("DAYS"),
  Flag.withDefault(7)
)
const dryRun = Flag.Boolean("dry-run").pipe(Flag.withDescription("Say what would be removed; change nothing"), Flag.withDefault(false))
const format = Flag.Literals("format", ["text", "json"]).pipe(
  Flag.withDescription("text: what was removed, on stdout; json: one result object"),
  Flag.withDefault("text" as const)
)

const summary = (report: PruneReport, read: { readonly sessions: number; readonly database: string }, days: number, dry: boolean) => {
  const lines = [
    `${dry ? "Would remove" : "Removed"} ${plural(report.removed, "copy", "copies")} (${byteSize(report.removedBytes)}) that no stored session can undo to and that were not used ${days === 0 ? "in the last hour" : `for ${plural(days, "day", "days")}`}; kept ${plural(report.kept, "copy", "copies")} (${byteSize(report.keptBytes)}). Sessions read: ${read.sessions} (${read.database}).`
  ]
  if (report.temporaries > 0)
    lines.push(`${dry ? "Would remove" : "Removed"} ${plural(report.temporaries, "temporary file", "temporary files")} of copies cut off.`)
  for (const s of report.skipped) lines.push(`Left alone: ${s.project ?? s.store}: ${s.reason}.`)
  return lines.join("\n")
}

/**
 * `reins checkpoints prune`: frees the data dir's copies of file contents (what undo writes back) that no stored
 * session of this database names, that no project's index names (the files as reins last saw them), and that were not
 * used for --older-than days; a project with an undo to finish, a reins process using it, or sessions of another
 * database is left whole.
 */
const prune = Command.make("prune", { olderThan, dryRun, format }, ({ olderThan, dryRun, format }) =>
  withStore((setup) =>
    Effect.gen(function* () {
      if (olderThan < 0) return yield* usage(`--older-than takes a number of days, 0 or more (got ${olderThan})`)
      const store = yield* SessionStore
      const database = databaseIdentity({ url: setup.env.REINS_DATABASE_URL, dataDir: setup.dataDir, env: setup.env })
      // before the sessions are read: a process that stores a step after that has renewed its mark since (in use)
      const now = yield* Clock.currentTimeMillis
      // every session of this database, sub-agents' too: what their recorded changes name is what undo may need
      const sessions = yield* store.listSessions()
      const referenced = new Set<string>()
      for (const session of sessions) for (const message of yield* store.messages(session.id)) hashesOf(message.parts, referenced)
      const report = yield* Effect.try({
        try: () => pruneCheckpoints({ root: checkpointsRoot(setup.dataDir), referenced, database, olderThanMs: olderThan * DAY_MS, now, dryRun }),
        catch: (error) => failure(error instanceof Error ? error.message : String(error))
      })
      if (format === "json") process.stdout.write(`${JSON.stringify({ dryRun, olderThanDays: olderThan, database, sessions: sessions.length, ...report })}\n`)
      else process.stdout.write(`${summary(report, { sessions: sessions.length, database }, olderThan, dryRun)}\n`)
      if (report.failed > 0)
        return yield* failure(
          `${plural(report.failed, "copy", "copies")} could not be removed (kept): see the permissions of ${checkpointsRoot(setup.dataDir)}.`
        )
    })
  )
).pipe(Command.withDescription("Free the copies of files undo keeps that no stored session can undo to and that were not used for --older-than days"))

/** `reins checkpoints prune`. */
export const checkpoints = Command.make("checkpoints").pipe(
  Command.withDescription("Manage the copies of project files that undo and redo write back"),
  Command.withSubcommands([prune])
)
