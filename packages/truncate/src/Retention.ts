import { Clock, Effect, Layer, Schedule } from "effect"
import { DataDir } from "@reins/domain"
import * as fs from "node:fs"
import * as path from "node:path"
import { TruncateSettings } from "./Settings.ts"
import { spillDirectory } from "./Spill.ts"

const DAY_MS = 86_400_000

/**
 * Deletes spill files last written before `now - maxAgeMs` — in the per-session folders and any
 * left at the top from the older flat layout — and session folders left empty that long (a
 * folder's time moves with every file made in it, so a running session keeps its own); returns
 * how many files went.
 */
export const sweep = (directory: string, maxAgeMs: number, now: number) => {
  const old = (file: string) => now - fs.statSync(file).mtimeMs > maxAgeMs
  const sweepFiles = (dir: string) => {
    let removed = 0
    for (const entry of list(dir)) {
      if (!entry.isFile()) continue
      const file = path.join(dir, entry.name)
      try {
        if (old(file)) {
          fs.unlinkSync(file)
          removed++
        }
      } catch {
        // removed by someone else meanwhile
      }
    }
    return removed
  }
  let removed = sweepFiles(directory)
  for (const entry of list(directory)) {
    if (!entry.isDirectory()) continue
    const folder = path.join(directory, entry.name)
    // judged before its files go: deleting them moves the folder's time
    let stale = false
    try {
      stale = old(folder)
    } catch {
      continue // gone
    }
    removed += sweepFiles(folder)
    try {
      if (stale) fs.rmdirSync(folder) // fails while it still holds a file
    } catch {
      // not empty, or gone
    }
  }
  return removed
}

const list = (dir: string): Array<fs.Dirent> => {
  try {
    return fs.readdirSync(dir, { withFileTypes: true })
  } catch {
    return [] // no spill directory yet
  }
}

/** One sweep of the runtime's spill directory, by the runtime's clock. */
export const sweepOnce = Effect.gen(function* () {
  const directory = spillDirectory(yield* DataDir)
  const settings = yield* TruncateSettings
  const now = yield* Clock.currentTimeMillis
  const removed = sweep(directory, settings.retentionDays * DAY_MS, now)
  if (removed > 0) yield* Effect.logDebug(`removed ${removed} spill files older than ${settings.retentionDays} days`)
  return removed
})

/**
 * Started with the runtime: sweeps once at once, then every hour, in a background fiber that
 * ends with the runtime's scope.
 */
export const RetentionLive = Layer.effectDiscard(sweepOnce.pipe(Effect.repeat(Schedule.spaced("1 hour")), Effect.forkScoped))
