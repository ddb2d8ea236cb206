import { Clock, Effect, Layer, Schedule } from "effect"
import { DataDir } from "@reins/domain"
import * as fs from "node:fs"
import * as path from "node:path"
import { TruncateSettings } from "./Settings.ts"
import { spillDirectory } from "./Spill.ts"

const DAY_MS = 86_400_000

/** Deletes spill files last written before `now - maxAgeMs`; returns how many went. */
export const sweep = (directory: string, maxAgeMs: number, now: number) => {
  let removed = 0
  let entries: Array<fs.Dirent>
  try {
    entries = fs.readdirSync(directory, { withFileTypes: true })
  } catch {
    return 0 // no spill directory yet
  }
  for (const entry of entries) {
    if (!entry.isFile()) continue
    const file = path.join(directory, entry.name)
    try {
      if (now - fs.statSync(file).mtimeMs > maxAgeMs) {
        fs.unlinkSync(file)
        removed++
      }
    } catch {
      // removed by someone else meanwhile
    }
  }
  return removed
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
export const RetentionLive = Layer.effectDiscard(
  sweepOnce.pipe(Effect.repeat(Schedule.spaced("1 hour")), Effect.forkScoped)
)
