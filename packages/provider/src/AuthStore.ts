// The API keys a user stored with `reins auth login`, kept in the user's data dir (`auth.json`, mode 0600, the
// directory 0700; the sandbox hides the file from commands), keyed by provider id. A key in the environment or in
// reins.json wins over a stored one (see `credentials`): what a user sets for one shell or project is what they meant.
import { Effect, Schema } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { writeFileWhole } from "@reins/domain"

/** One provider's stored credential. */
export const StoredKey = Schema.Struct({ type: Schema.Literal("api"), key: Schema.String })
export type StoredKey = typeof StoredKey.Type

/** The stored credentials, by provider id. */
export type StoredKeys = Readonly<Record<string, StoredKey>>

const AuthFile = Schema.Record(Schema.String, StoredKey)

/** The auth store could not be read or written: which file, and what to do. */
export class AuthStoreError extends Schema.TaggedError<AuthStoreError>()("AuthStoreError", { message: Schema.String }) {}

/** The auth store's file in a data dir. */
export const authFile = (dataDir: string) => path.join(dataDir, "auth.json")

const decode = Schema.decodeUnknownExit(AuthFile)

const corrupt = (file: string, why: string) =>
  new AuthStoreError({
    message: `The key store ${file} is not valid (${why}): fix it, or move it away and store your keys again with reins auth login.`
  })

/** The stored keys of a data dir (none when the file does not exist); a damaged file is an error naming it, never emptied. */
export const readStoredKeys = (dataDir: string): Effect.Effect<StoredKeys, AuthStoreError> =>
  Effect.gen(function* () {
    const file = authFile(dataDir)
    const text = yield* Effect.try({
      try: () => (fs.existsSync(file) ? fs.readFileSync(file, "utf8") : undefined),
      catch: (e) => new AuthStoreError({ message: `Cannot read the key store ${file} (${(e as Error).message}): check its permissions.` })
    })
    if (text === undefined) return {}
    const json = yield* Effect.try({ try: () => JSON.parse(text) as unknown, catch: () => corrupt(file, "not JSON") })
    const exit = decode(json)
    return exit._tag === "Success" ? exit.value : yield* corrupt(file, 'expected {"<provider>": {"type": "api", "key": "…"}}')
  })

const write = (dataDir: string, keys: StoredKeys): Effect.Effect<void, AuthStoreError> =>
  Effect.try({
    try: () => {
      const file = authFile(dataDir)
      fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 })
      // never half a file, never readable by others
      writeFileWhole(file, `${JSON.stringify(keys, null, 2)}\n`, 0o600)
    },
    catch: (e) =>
      new AuthStoreError({ message: `Cannot write the key store ${authFile(dataDir)} (${(e as Error).message}): check that the data dir is writable.` })
  })

/** Stores `key` for `providerID`, replacing the one stored before. */
export const storeKey = (dataDir: string, providerID: string, key: string) =>
  Effect.flatMap(readStoredKeys(dataDir), (keys) => write(dataDir, { ...keys, [providerID]: { type: "api", key } }))

/** Forgets the key of `providerID`; false when none was stored. */
export const removeKey = (dataDir: string, providerID: string) =>
  Effect.gen(function* () {
    const keys = yield* readStoredKeys(dataDir)
    if (keys[providerID] === undefined) return false
    const { [providerID]: _, ...rest } = keys
    yield* write(dataDir, rest)
    return true
  })

/** A key as lists show it: its first and last characters, the rest hidden. */
export const maskKey = (key: string) => (key.length <= 8 ? "*".repeat(key.length) : `${key.slice(0, 3)}…${key.slice(-4)}`)
