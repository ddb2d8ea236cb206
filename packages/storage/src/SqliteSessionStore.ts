import type { Database as SqliteClient } from "bun:sqlite"
import { emptyUsage, type AssistantMessage, type Message, type MessageWithParts, type ModelRef, type Part, type Session, type SessionRun } from "@reins/domain"
import { Effect } from "effect"
import { MAX_SUBAGENT_DEPTH, type SqliteDatabase } from "./Database.ts"
import type { MessagesOptions, SessionStore, SessionTotals } from "./SessionStore.ts"
import { WritingClaim } from "./Claim.ts"
import {
  checkFence,
  FENCED_UPSERT_MESSAGE,
  FENCED_UPSERT_PART,
  SELECT_RUN,
  sessionValues,
  type SessionValues,
  UPSERT_MESSAGE,
  UPSERT_PART,
  type RunRow
} from "./Sql.ts"
import { sessionNotFound, toStoreError, type StoreError } from "./StoreError.ts"

// From a boundary: the messages at or after it, and the listed ones (pinned) before it. UNION ALL
// keeps each half on the (session_id, id) index; parts follow through their (message_id, id) index.
const WINDOW_IDS = `SELECT id FROM message WHERE session_id = ?1 AND id >= ?2
  UNION ALL SELECT id FROM message WHERE session_id = ?1 AND id < ?2 AND id IN (SELECT value FROM json_each(?3))`
const SELECT_WINDOW_MESSAGES = `SELECT data FROM message WHERE id IN (${WINDOW_IDS}) ORDER BY id`
const SELECT_WINDOW_PARTS = `SELECT data FROM part WHERE message_id IN (${WINDOW_IDS}) ORDER BY message_id, id`
// The same expression as the partial index message_summary_idx, so the planner uses it.
// Per session: counts and sums over message rows only (a session's parts, its tool outputs, are never read),
// and the model of its newest assistant message.
/** The usage and cost of the messages `m` of a group, summed (user messages have none). */
const USAGE_SUMS = `COALESCE(SUM(json_extract(m.data, '$.usage.input')), 0) AS input,
  COALESCE(SUM(json_extract(m.data, '$.usage.output')), 0) AS output,
  COALESCE(SUM(json_extract(m.data, '$.usage.reasoning')), 0) AS reasoning,
  COALESCE(SUM(json_extract(m.data, '$.usage.cacheRead')), 0) AS cacheRead,
  COALESCE(SUM(json_extract(m.data, '$.usage.cacheWrite')), 0) AS cacheWrite,
  COALESCE(SUM(json_extract(m.data, '$.cost')), 0) AS cost`
/** What `USAGE_SUMS` gives. */
interface UsageRow {
  readonly input: number
  readonly output: number
  readonly reasoning: number
  readonly cacheRead: number
  readonly cacheWrite: number
  readonly cost: number
}
const SELECT_TOTALS = `SELECT m.session_id AS sessionID, COUNT(*) AS messages,
  SUM(json_extract(m.data, '$.role') = 'assistant') AS steps,
  ${USAGE_SUMS},
  (SELECT json_extract(a.data, '$.model') FROM message a WHERE a.session_id = m.session_id AND json_extract(a.data, '$.role') = 'assistant'
    ORDER BY a.id DESC LIMIT 1) AS model
  FROM message m WHERE m.session_id IN (SELECT value FROM json_each(?1)) GROUP BY m.session_id`
/** ?1 a JSON array of session ids, ?2 the depth bound: per session, its sub-agent sessions at any depth and their usage. */
// A session and its sub-agent sessions (depth-bounded, as the totals), the session first.
const SELECT_TREE = `WITH RECURSIVE tree(id, depth) AS (
    SELECT id, 0 FROM session WHERE id = ?1
    UNION ALL SELECT s.id, tree.depth + 1 FROM session s JOIN tree ON s.parent_id = tree.id WHERE tree.depth < ?2
  )
  SELECT id FROM tree GROUP BY id ORDER BY MIN(depth), id`
const SELECT_SUBAGENT_TOTALS = `WITH RECURSIVE tree(root, id, depth) AS (
    SELECT s.parent_id, s.id, 1 FROM session s WHERE s.parent_id IN (SELECT value FROM json_each(?1))
    UNION ALL SELECT tree.root, s.id, tree.depth + 1 FROM session s JOIN tree ON s.parent_id = tree.id WHERE tree.depth < ?2
  )
  SELECT tree.root AS sessionID, COUNT(DISTINCT tree.id) AS sessions,
  ${USAGE_SUMS}
  FROM tree LEFT JOIN message m ON m.session_id = tree.id AND json_extract(m.data, '$.role') = 'assistant'
  GROUP BY tree.root`
interface SubAgentTotalsRow extends UsageRow {
  readonly sessionID: string
  readonly sessions: number
}
interface TotalsRow extends UsageRow {
  readonly sessionID: string
  readonly messages: number
  readonly steps: number
  readonly model: string | null
}
const SELECT_LATEST_SUMMARY = `SELECT data FROM message WHERE session_id = ?1 AND json_extract(data, '$.summary') IS NOT NULL
  AND json_extract(data, '$.time.completed') IS NOT NULL AND json_extract(data, '$.error') IS NULL
  AND json_extract(data, '$.reverted') IS NULL ORDER BY id DESC LIMIT 1`

// Raw SQL over the tables of schema.ts (drizzle keeps the schema and its migrations; its query builder would be
// loaded and its queries built at every start)
const SESSION_COLUMNS = "directory, parent_id, title, time_created, time_updated, data"
const INSERT_SESSION = `INSERT INTO session (id, ${SESSION_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)`
const UPDATE_SESSION = `UPDATE session SET directory = ?2, parent_id = ?3, title = ?4, time_created = ?5, time_updated = ?6, data = ?7
  WHERE id = ?1 RETURNING id`
const SELECT_SESSION = "SELECT data FROM session WHERE id = ?1"
const SELECT_LATEST = `SELECT data FROM session WHERE directory = ?1 AND parent_id IS NULL ORDER BY time_updated DESC, id DESC LIMIT 1`
// SQLite reads a negative LIMIT as "no limit".
const LIST_SESSIONS = "SELECT data FROM session ORDER BY time_updated DESC, id DESC LIMIT ?1"
const LIST_SESSIONS_IN = "SELECT data FROM session WHERE directory = ?2 ORDER BY time_updated DESC, id DESC LIMIT ?1"
const SELECT_MESSAGES = "SELECT data FROM message WHERE session_id = ?1 ORDER BY id"
const SELECT_PARTS = "SELECT data FROM part WHERE session_id = ?1 ORDER BY message_id, id"
/** A session row's JSON, parsed (inside the read's attempt: a corrupt row is a store error, not a crash). */
const sessionOf = (row: { readonly data: string } | null) => (row === null ? undefined : (JSON.parse(row.data) as Session))

/** The SessionStore over the SQLite database (see `Storage.layerSqlite`). */
export const makeSqliteSessionStore = ({ client, file }: SqliteDatabase): Effect.Effect<SessionStore["Service"], StoreError> =>
  Effect.try({
    try: () => build(client, file),
    catch: (error) => toStoreError(file, "prepare the session queries", error)
  })

/** A part's row (id, message id, session id, JSON) and a message's (id, session id, creation time, JSON). */
type PartValues = [string, string, string, string]
type MessageValues = [string, string, number, string]

const build = (client: SqliteClient, file: string): SessionStore["Service"] => {
  const attempt = <A>(action: () => string, run: () => A) => Effect.try({ try: run, catch: (error) => toStoreError(file, action(), error) })

  const insertSession = client.prepare<void, SessionValues>(INSERT_SESSION)
  const updateSessionRow = client.prepare<{ id: string }, SessionValues>(UPDATE_SESSION)
  const selectSession = client.prepare<{ data: string }, [string]>(SELECT_SESSION)
  const selectLatest = client.prepare<{ data: string }, [string]>(SELECT_LATEST)
  const selectMessages = client.prepare<{ data: string }, [string]>(SELECT_MESSAGES)
  const selectParts = client.prepare<{ data: string }, [string]>(SELECT_PARTS)
  const readAll = client.transaction((sessionID: string) => [selectMessages.all(sessionID), selectParts.all(sessionID)] as const)
  // The hot path: one raw bun:sqlite statement, about 10% faster than drizzle's prepared one.
  const upsertPart = client.prepare<void, PartValues>(UPSERT_PART)
  const upsertMessage = client.prepare<void, MessageValues>(UPSERT_MESSAGE)
  const writePart = (value: Part) => upsertPart.run(value.id, value.messageID, value.sessionID, JSON.stringify(value))
  const writeParts = client.transaction((values: ReadonlyArray<Part>) => {
    for (const value of values) writePart(value)
  })
  const selectWindowMessages = client.prepare<{ data: string }, [string, string, string]>(SELECT_WINDOW_MESSAGES)
  const selectWindowParts = client.prepare<{ data: string }, [string, string, string]>(SELECT_WINDOW_PARTS)
  const readWindow = client.transaction(
    (sessionID: string, from: string, include: string) =>
      [selectWindowMessages.all(sessionID, from, include), selectWindowParts.all(sessionID, from, include)] as const
  )
  const selectLatestSummary = client.prepare<{ data: string }, [string]>(SELECT_LATEST_SUMMARY)
  const selectTotals = client.prepare<TotalsRow, [string]>(SELECT_TOTALS)
  const selectSubAgentTotals = client.prepare<SubAgentTotalsRow, [string, number]>(SELECT_SUBAGENT_TOTALS)
  const selectRun = client.prepare<RunRow, [string]>(SELECT_RUN)
  // A write under a claim: the claim is checked in the write's own transaction (BEGIN IMMEDIATE,
  // so no other process can take the session over between the check and the write).
  const claimed = client.transaction((claim: SessionRun, write: () => unknown): unknown => {
    checkFence(selectRun, claim)
    return write()
  })
  const underClaim = <A>(claim: SessionRun, write: () => A): A => claimed.immediate(claim, write) as A
  // The hot path's fenced writes (a part, a message): one statement each, which changes nothing where the fence fails
  const fencedPart = client.prepare<void, [...PartValues, string, string, number]>(FENCED_UPSERT_PART)
  const fencedMessage = client.prepare<void, [...MessageValues, string, string, number]>(FENCED_UPSERT_MESSAGE)
  /** Writes one part or message of `sessionID`: fenced by the fiber's WritingClaim if it is that session's. */
  const putOne = <V extends PartValues | MessageValues>(
    sessionID: string,
    action: () => string,
    values: V,
    unfenced: (...values: V) => unknown,
    write: (...values: [...V, string, string, number]) => { readonly changes: number }
  ) =>
    Effect.flatMap(WritingClaim, (claim) =>
      attempt(action, () =>
        claim !== undefined && claim.sessionID === sessionID
          ? write(...values, claim.sessionID, claim.holder, claim.epoch).changes > 0 || checkFence(selectRun, claim, true)
          : void unfenced(...values)
      )
    )
  /** Runs `write` (to `sessionIDs`) checking the fiber's WritingClaim first if it is one of theirs. */
  const guarded = <A>(sessionIDs: ReadonlyArray<string>, action: () => string, write: () => A) =>
    Effect.flatMap(WritingClaim, (claim) =>
      claim !== undefined && sessionIDs.includes(claim.sessionID) ? attempt(action, () => underClaim(claim, write)) : attempt(action, write)
    )

  const createSession = Effect.fn("SessionStore.createSession")(function* (value: Session) {
    yield* attempt(
      () => `create session ${value.id}`,
      () => insertSession.run(...sessionValues(value))
    )
  })

  const updateSession = Effect.fn("SessionStore.updateSession")(function* (value: Session) {
    const updated = yield* guarded(
      [value.id],
      () => `update session ${value.id}`,
      () => updateSessionRow.all(...sessionValues(value))
    )
    if (updated.length === 0) return yield* sessionNotFound(value.id)
  })

  const getSession = Effect.fn("SessionStore.getSession")(function* (id: string) {
    const row = yield* attempt(
      () => `read session ${id}`,
      () => sessionOf(selectSession.get(id))
    )
    if (row === undefined) return yield* sessionNotFound(id)
    return row
  })

  const listSessions = Effect.fn("SessionStore.listSessions")(function* (options: { readonly directory?: string; readonly limit?: number } = {}) {
    const rows = yield* attempt(
      () => "list sessions",
      () => {
        const limit = options.limit === undefined ? -1 : Math.floor(options.limit)
        return (
          options.directory === undefined
            ? client.query<{ data: string }, [number]>(LIST_SESSIONS).all(limit)
            : client.query<{ data: string }, [number, string]>(LIST_SESSIONS_IN).all(limit, options.directory)
        ).map((row) => JSON.parse(row.data) as Session)
      }
    )
    return rows
  })

  const latestSession = Effect.fn("SessionStore.latestSession")(function* (directory: string) {
    const row = yield* attempt(
      () => `find the latest session of ${directory}`,
      () => sessionOf(selectLatest.get(directory))
    )
    return row
  })

  // Called several times per step: a prepared statement, no span.
  const putMessage = Effect.fnUntraced(function* (value: Message) {
    const values: MessageValues = [value.id, value.sessionID, value.time.created, JSON.stringify(value)]
    yield* putOne(
      value.sessionID,
      () => `save message ${value.id}`,
      values,
      (...v) => upsertMessage.run(...v),
      (...v) => fencedMessage.run(...v)
    )
  })

  // Hot path (every streamed delta): no span.
  const putPart = Effect.fnUntraced(function* (value: Part) {
    const values: PartValues = [value.id, value.messageID, value.sessionID, JSON.stringify(value)]
    yield* putOne(
      value.sessionID,
      () => `save part ${value.id}`,
      values,
      (...v) => upsertPart.run(...v),
      (...v) => fencedPart.run(...v)
    )
  })

  const putParts = Effect.fn("SessionStore.putParts")(function* (values: ReadonlyArray<Part>) {
    if (values.length === 0) return
    const claim = yield* WritingClaim
    yield* claim !== undefined && values.some((v) => v.sessionID === claim.sessionID)
      ? attempt(
          () => `save ${values.length} parts`,
          () => underClaim(claim, () => writeParts(values))
        )
      : attempt(
          () => `save ${values.length} parts`,
          () => writeParts.immediate(values)
        )
  })

  const messages = Effect.fn("SessionStore.messages")(function* (sessionID: string, options: MessagesOptions = {}) {
    const from = options.from
    return yield* attempt(
      () => `read the messages of session ${sessionID}`,
      () => {
        const [messageRows, partRows] =
          from === undefined ? readAll.deferred(sessionID) : readWindow.deferred(sessionID, from, JSON.stringify(options.include ?? []))
        const partsByMessage = new Map<string, Array<Part>>()
        for (const row of partRows) {
          const data = JSON.parse(row.data) as Part
          const list = partsByMessage.get(data.messageID)
          if (list === undefined) partsByMessage.set(data.messageID, [data])
          else list.push(data)
        }
        return messageRows.map((row): MessageWithParts => {
          const info = JSON.parse(row.data) as Message
          return { info, parts: partsByMessage.get(info.id) ?? [] }
        })
      }
    )
  })

  const latestSummary = Effect.fn("SessionStore.latestSummary")(function* (sessionID: string) {
    const row = yield* attempt(
      () => `read the latest summary of session ${sessionID}`,
      () => selectLatestSummary.get(sessionID)
    )
    return row === null ? undefined : (JSON.parse(row.data) as AssistantMessage)
  })

  const totals = Effect.fn("SessionStore.totals")(function* (sessionIDs: ReadonlyArray<string>) {
    const ids = JSON.stringify(sessionIDs)
    const [rows, below] = yield* attempt(
      () => `read the totals of ${sessionIDs.length} sessions`,
      () => [selectTotals.all(ids), selectSubAgentTotals.all(ids, MAX_SUBAGENT_DEPTH)] as const
    )
    const usageOf = (row: UsageRow) => ({
      input: row.input,
      output: row.output,
      reasoning: row.reasoning,
      cacheRead: row.cacheRead,
      cacheWrite: row.cacheWrite
    })
    const out = new Map(
      rows.map((row): [string, SessionTotals] => [
        row.sessionID,
        {
          messages: row.messages,
          steps: row.steps,
          usage: usageOf(row),
          cost: row.cost,
          ...(row.model === null ? {} : { model: JSON.parse(row.model) as ModelRef })
        }
      ])
    )
    for (const row of below) {
      const own = out.get(row.sessionID) ?? { messages: 0, steps: 0, usage: emptyUsage, cost: 0 }
      out.set(row.sessionID, { ...own, subAgents: { sessions: row.sessions, usage: usageOf(row), cost: row.cost } })
    }
    return out as ReadonlyMap<string, SessionTotals>
  })

  // the event log and the waiting questions have no foreign key: deleted with the session, in its transaction
  const selectTree = client.prepare<{ id: string }, [string, number]>(SELECT_TREE)
  const deleteOne = client.prepare<void, [string]>("DELETE FROM session WHERE id = ?1")
  const deleteEvents = client.prepare<void, [string]>("DELETE FROM session_event WHERE session_id = ?1")
  const deletePending = client.prepare<void, [string]>("DELETE FROM permission_pending WHERE session_id = ?1 OR root_session_id = ?1")
  const removeTree = client.transaction((id: string) => {
    const ids = selectTree.all(id, MAX_SUBAGENT_DEPTH).map((row) => row.id)
    for (const one of ids) {
      deleteOne.run(one)
      deleteEvents.run(one)
      deletePending.run(one)
    }
    return ids
  })

  const sessionTree = Effect.fn("SessionStore.sessionTree")(function* (id: string) {
    return yield* attempt(
      () => `read the sub-agent sessions of ${id}`,
      () => selectTree.all(id, MAX_SUBAGENT_DEPTH).map((row) => row.id)
    )
  })

  const deleteSession = Effect.fn("SessionStore.deleteSession")(function* (id: string) {
    // One transaction: the foreign keys cascade to messages, parts and leases atomically.
    const deleted = yield* attempt(
      () => `delete session ${id}`,
      () => removeTree.immediate(id)
    )
    if (deleted.length === 0) return yield* sessionNotFound(id)
    return deleted
  })

  return {
    createSession,
    updateSession,
    getSession,
    listSessions,
    latestSession,
    putMessage,
    putPart,
    putParts,
    messages,
    latestSummary,
    totals,
    sessionTree,
    deleteSession
  }
}
