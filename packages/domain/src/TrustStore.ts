// The directories the user trusts, kept in the user's data dir (`trust.json`, mode 0600): each by its
// real path, with the digest of what its configuration would run when it was trusted. A project that
// changed what it would run (a new hook, an edited plugin) is no longer trusted until asked again.
import { Effect, Schema } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { writeFileWhole } from "./FileWrite.ts"

/** One trusted directory. */
export const TrustEntry = Schema.Struct({
  digest: Schema.String,
  /** When it was trusted (ms since the epoch). */
  time: Schema.Number,
  /** How many items trust switched on then. */
  items: Schema.Number,
  /** Their fingerprints (trustItemKey), to say what changed since. */
  seen: Schema.optional(Schema.Array(Schema.String))
})
export type TrustEntry = typeof TrustEntry.Type

const TrustFile = Schema.Struct({ version: Schema.Literal(1), directories: Schema.Record(Schema.String, TrustEntry) })
type TrustFile = typeof TrustFile.Type

/** The trust store could not be read or written: which file, and what to do. */
export class TrustStoreError extends Schema.TaggedError<TrustStoreError>()("TrustStoreError", { message: Schema.String }) {}

/** The file of the trust store in a data dir. */
export const trustFile = (dataDir: string) => path.join(dataDir, "trust.json")

/** A directory as the store keys it: its real path (a symlink and its target are one directory). */
export const trustKey = (dir: string) => {
  try {
    return fs.realpathSync(dir)
  } catch {
    return path.resolve(dir)
  }
}

const decode = Schema.decodeUnknownExit(TrustFile)

const read = (file: string): Effect.Effect<TrustFile, TrustStoreError> =>
  Effect.try({
    try: () => (fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, "utf8")) : { version: 1, directories: {} }),
    catch: (e) =>
      new TrustStoreError({ message: `Cannot read the trust store ${file} (${(e as Error).message}): fix or delete it (then trust the directories again).` })
  }).pipe(
    Effect.flatMap((json) => {
      const exit = decode(json)
      return exit._tag === "Success"
        ? Effect.succeed(exit.value)
        : Effect.fail(new TrustStoreError({ message: `The trust store ${file} is not in the expected form: delete it (then trust the directories again).` }))
    })
  )

const write = (file: string, data: TrustFile): Effect.Effect<void, TrustStoreError> =>
  Effect.try({
    try: () => {
      fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
      writeFileWhole(file, `${JSON.stringify(data, null, 2)}\n`, 0o600)
    },
    catch: (e) => new TrustStoreError({ message: `Cannot write the trust store ${file} (${(e as Error).message}): check that the data dir is writable.` })
  })

/** Whether `dir` is trusted for exactly this digest. */
export const isTrusted = (dataDir: string, dir: string, digest: string) =>
  Effect.map(read(trustFile(dataDir)), (data) => data.directories[trustKey(dir)]?.digest === digest)

/** What the store says of `dir`: trusted for some digest (maybe an older one), or nothing. */
export const trustOf = (dataDir: string, dir: string) => Effect.map(read(trustFile(dataDir)), (data) => data.directories[trustKey(dir)])

/** Trusts `dir` for `digest` and the items it covers (their fingerprints), replacing an older trust. */
export const trustDirectory = (
  dataDir: string,
  dir: string,
  trusted: { readonly digest: string; readonly seen: ReadonlyArray<string>; readonly time: number }
) =>
  Effect.gen(function* () {
    const file = trustFile(dataDir)
    const data = yield* read(file)
    const entry: TrustEntry = { digest: trusted.digest, time: trusted.time, items: trusted.seen.length, seen: [...trusted.seen] }
    yield* write(file, { version: 1, directories: { ...data.directories, [trustKey(dir)]: entry } })
  })

/** Forgets `dir`; false when it was not trusted. */
export const revokeTrust = (dataDir: string, dir: string) =>
  Effect.gen(function* () {
    const file = trustFile(dataDir)
    const data = yield* read(file)
    const key = trustKey(dir)
    if (data.directories[key] === undefined) return false
    const { [key]: _, ...rest } = data.directories
    yield* write(file, { version: 1, directories: rest })
    return true
  })

/** Every trusted directory, by path. */
export const trustedDirectories = (dataDir: string) => Effect.map(read(trustFile(dataDir)), (data) => data.directories)
