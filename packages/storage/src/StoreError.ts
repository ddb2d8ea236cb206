import { Predicate, Schema } from "effect"

/** Why a store operation failed; "taken-over": a write under a claim another process has taken (see `WritingClaim`). */
export const StoreErrorReason = Schema.Literals(["not-found", "io", "disk-full", "corrupt", "taken-over"])
export type StoreErrorReason = typeof StoreErrorReason.Type

/** The one error of the session store; `message` says what happened and what to do. */
export class StoreError extends Schema.TaggedError<StoreError>()("StoreError", {
  reason: StoreErrorReason,
  message: Schema.String
}) {}

const codeOf = (error: unknown): string | undefined => (Predicate.hasProperty(error, "code") && Predicate.isString(error.code) ? error.code : undefined)

// drizzle wraps driver errors (DrizzleQueryError); the SQLite error is somewhere down `cause`.
const causes = (error: unknown): Array<unknown> => {
  const chain: Array<unknown> = []
  let current: unknown = error
  while (current !== undefined && chain.length < 8 && !chain.includes(current)) {
    chain.push(current)
    current = Predicate.hasProperty(current, "cause") ? current.cause : undefined
  }
  return chain
}

const describe = (error: unknown): string => {
  const chain = causes(error)
  const innermost = chain.at(-1)
  if (Predicate.isError(innermost)) return innermost.message
  return String(innermost)
}

/** Maps a foreign (SQLite, drizzle, fs) error to a StoreError; `action` says what was being done. */
export const toStoreError = (file: string, action: string, error: unknown): StoreError => {
  if (error instanceof StoreError) return error
  const chain = causes(error)
  const codes = chain.map(codeOf).filter(Predicate.isString)
  const detail = describe(error)
  if (codes.some((code) => code.startsWith("SQLITE_FULL")) || /database or disk is full/i.test(detail)) {
    return new StoreError({
      reason: "disk-full",
      message: `The disk is full: could not ${action} in ${file}. Free some disk space and try again; everything saved before this point is kept.`
    })
  }
  if (codes.some((code) => code.startsWith("SQLITE_CORRUPT") || code.startsWith("SQLITE_NOTADB"))) {
    return new StoreError({
      reason: "corrupt",
      message:
        `The session database ${file} is damaged or is not a SQLite database (${detail}). ` +
        `Move it aside to start with an empty one; reins will create a new file.`
    })
  }
  if (codes.some((code) => code.startsWith("SQLITE_CONSTRAINT_FOREIGNKEY"))) {
    return new StoreError({
      reason: "io",
      message: `Could not ${action} in ${file}: it refers to a session or message that is not stored.`
    })
  }
  if (codes.some((code) => code === "SQLITE_CONSTRAINT_PRIMARYKEY" || code === "SQLITE_CONSTRAINT_UNIQUE")) {
    return new StoreError({ reason: "io", message: `Could not ${action} in ${file}: one with that id is already stored.` })
  }
  if (codes.some((code) => code.startsWith("SQLITE_BUSY"))) {
    return new StoreError({
      reason: "io",
      message: `Could not ${action} in ${file}: another process has held it locked for over 5 s (${detail}). Try again once it is done.`
    })
  }
  return new StoreError({ reason: "io", message: `Could not ${action} in ${file}: ${detail}` })
}

/** The not-found error for a session id. */
export const sessionNotFound = (id: string) =>
  new StoreError({
    reason: "not-found",
    message: `Session ${id} not found; \`reins sessions list\` shows the ids.`
  })

/** The memory database's error for a write that refers to a `what` (session, message) that is not stored, as SQLite's foreign keys fail. */
export const refersToMissing = (action: string, what: string) =>
  new StoreError({ reason: "io", message: `Could not ${action} in memory: it refers to a ${what} that is not stored.` })
