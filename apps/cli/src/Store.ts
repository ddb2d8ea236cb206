import { Effect } from "effect"
import { Storage, type StoreError } from "@reins/storage"
import { type CliError, failure, usage } from "./CliError.ts"
import { loadSetup, type Setup } from "./Setup.ts"

/** Runs a command against the storage of the data dir (sessions, claims, grants); "not-found" is a usage error (exit 2). */
export const withStore = <A>(effect: (setup: Setup) => Effect.Effect<A, CliError | StoreError, Storage.Services>) =>
  Effect.gen(function* () {
    // sessions, grants: nothing of the project runs, and nothing is said about its trust
    const setup = yield* loadSetup({ notice: false })
    return yield* effect(setup).pipe(
      // REINS_DATABASE_URL (or --database) picks PostgreSQL; SQLite in the data dir without it
      Effect.provide(Storage.layerFor({ url: setup.env.REINS_DATABASE_URL, dataDir: setup.dataDir })),
      Effect.catchTag("StoreError", (e) => Effect.fail(e.reason === "not-found" ? usage(e.message) : failure(e.message)))
    )
  })

/** A stored time as `YYYY-MM-DD HH:MM` (UTC). */
export const time = (ms: number) => new Date(ms).toISOString().replace("T", " ").slice(0, 16)
