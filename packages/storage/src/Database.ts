import { Database as SqliteClient } from "bun:sqlite"
import type { Message, Part, PermissionGrant, Session, SessionRun } from "@reins/domain"
import { Clock, Effect, Predicate, Schedule } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import type { LoggedEvent } from "./EventLog.ts"
import { migrate } from "./Migrations.ts"
import type { PendingQuestion } from "./PendingQuestions.ts"
import { toStoreError } from "./StoreError.ts"

/** One open, migrated SQLite connection; `file` names it in errors. Every storage service of `Storage.layerSqlite` shares it. */
export interface SqliteDatabase {
  readonly client: SqliteClient
  readonly file: string
}

/** The tables of the memory database: plain Maps, read and written in one synchronous step per operation. */
export interface MemoryState {
  readonly sessions: Map<string, Session>
  readonly messages: Map<string, Message>
  readonly parts: Map<string, Part>
  readonly runs: Map<string, SessionRun>
  readonly grants: Map<string, PermissionGrant>
  /** The event log, oldest first; `next` is the id the next event gets; `listeners` are woken after each append. */
  readonly eventLog: { events: Array<LoggedEvent>; next: number; readonly listeners: Set<() => void> }
  readonly questions: Map<string, PendingQuestion>
}

/** First, so that the migrations (BEGIN IMMEDIATE) wait for another process's lock. */
const BUSY_TIMEOUT = "PRAGMA busy_timeout = 5000"
const PRAGMAS = ["PRAGMA synchronous = NORMAL", "PRAGMA foreign_keys = ON"]
/** How long an open tries the switch to WAL again while another process holds the file (busy_timeout's 5 s), and how often. */
const WAL_RETRY_MS = 5000
const WAL_RETRY_EVERY_MS = 10

const isInMemory = (file: string) => file === ":memory:" || file === ""

/**
 * A database (and its -wal/-shm) an earlier reins made 0644 is the user's alone from now on: the group and
 * others lose their bits, on files the user owns (another's file is left as it is, for SQLite to refuse or open).
 */
const tightenMode = (file: string) => {
  for (const f of [file, `${file}-wal`, `${file}-shm`]) {
    const st = fs.statSync(f, { throwIfNoEntry: false })
    if (st === undefined || (st.mode & 0o077) === 0 || st.uid !== process.getuid?.()) continue
    fs.chmodSync(f, st.mode & 0o700)
  }
}

/**
 * Opens (creating it and its directory) the SQLite file, sets the pragmas and applies pending
 * migrations; closes it when the scope closes.
 */
export const openDatabase = Effect.fnUntraced(function* (file: string) {
  const now = yield* Clock.currentTimeMillis
  const db = yield* Effect.acquireRelease(
    Effect.try({
      try: () => {
        if (!isInMemory(file)) {
          // every session (what was read, run and said) is in it: a new directory is the user's alone (0700), a new
          // file 0600 (created empty here, which SQLite takes as a new database; its -wal and -shm get its mode).
          // Whatever is there already (another reins made it a moment ago: two starting at once on a fresh data dir)
          // is opened as it is: a file this user may only read, another's file, or something that is no file at all
          // is for SQLite to open or refuse.
          fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
          if (!createdNew(file)) tightenMode(file)
        }
        return new SqliteClient(file, { create: true })
      },
      catch: (error) => toStoreError(file, "open the session database", error)
    }),
    // close(true) finalizes the statements still open, so the connection really closes (and
    // checkpoints the WAL) now instead of whenever they are garbage collected.
    (db) =>
      Effect.try({
        try: () => db.close(true),
        catch: (error) => toStoreError(file, "close the session database", error)
      }).pipe(Effect.catch((error) => Effect.logWarning(error.message)))
  )
  yield* Effect.try({ try: () => db.run(BUSY_TIMEOUT), catch: (error) => toStoreError(file, "prepare the session database", error) })
  if (!isInMemory(file)) yield* walMode(db, file)
  yield* Effect.try({
    try: () => {
      for (const pragma of PRAGMAS) db.run(pragma)
      migrate(db, now)
    },
    catch: (error) => toStoreError(file, "prepare the session database", error)
  })
  return db
})

/** Makes `file` (0600) unless something is at that path already (false then). */
const createdNew = (file: string) => {
  try {
    fs.writeFileSync(file, "", { mode: 0o600, flag: "wx" })
    return true
  } catch (error) {
    if (Predicate.hasProperty(error, "code") && error.code === "EEXIST") return false
    throw error
  }
}

const isBusy = (error: unknown) => Predicate.hasProperty(error, "code") && Predicate.isString(error.code) && error.code.startsWith("SQLITE_BUSY")

/**
 * Puts the file in WAL mode (a property of the file: once one process has, every later open finds it so and takes no
 * lock). The switch needs the file to itself, and SQLite does not wait for that (busy_timeout does not apply): a
 * process opening a fresh database while another does is told "database is locked" at once. That is tried again every
 * 10 ms until 5 s have passed since the first try (a read of the mode may itself wait for a lock). A database that
 * cannot be in WAL mode (no shared memory where it lies) keeps its mode, as SQLite leaves it, and opens.
 */
const walMode = (db: SqliteClient, file: string) =>
  Effect.suspend(() => {
    const until = Date.now() + WAL_RETRY_MS
    return Effect.try({
      try: () => {
        const mode = db.query<{ journal_mode: string }, []>("PRAGMA journal_mode").get()?.journal_mode
        if (mode !== "wal") db.run("PRAGMA journal_mode = WAL")
      },
      catch: (error) => error
    }).pipe(
      Effect.retry({ while: (error) => isBusy(error) && Date.now() < until, schedule: Schedule.spaced(WAL_RETRY_EVERY_MS) }),
      Effect.mapError((error) => toStoreError(file, "prepare the session database", error))
    )
  })

/** How many levels of sub-agent sessions a session's totals follow (sub-agents nest 2 deep; the bound guards a cycle). */
export const MAX_SUBAGENT_DEPTH = 8

/** Orders text as SQLite compares TEXT (UTF-8 bytes, code point order); JS `<` compares UTF-16 code units. */
export const utf8Order = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b))

/** Empty memory tables. */
export const makeMemoryState = (): MemoryState => ({
  sessions: new Map(),
  messages: new Map(),
  parts: new Map(),
  runs: new Map(),
  grants: new Map(),
  eventLog: { events: [], next: 1, listeners: new Set() },
  questions: new Map()
})
