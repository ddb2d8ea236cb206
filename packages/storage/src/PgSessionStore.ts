import { emptyUsage, type AssistantMessage, type Message, type MessageWithParts, type ModelRef, type Part, type Session } from "@reins/domain"
import { Effect } from "effect"
import { WritingClaim } from "./Claim.ts"
import { MAX_SUBAGENT_DEPTH } from "./Database.ts"
import { attemptPg, type PgDatabase } from "./PgDatabase.ts"
import { fence, fencedWrite, messageValues, num, PG_UPSERT_MESSAGE, PG_UPSERT_PART, partValues, upsertPart } from "./PgSql.ts"
import type { ListSessionsOptions, MessagesOptions, SessionStore, SessionTotals } from "./SessionStore.ts"
import { sessionValues } from "./Sql.ts"
import { sessionNotFound } from "./StoreError.ts"

// The same queries as the SQLite store's, in PostgreSQL's terms: `->>` for json_extract, `= ANY($1)` for
// json_each, COLLATE "C" where SQLite compares TEXT as bytes.

const WINDOW_IDS = `SELECT id FROM message WHERE session_id = $1 AND id COLLATE "C" >= $2
  UNION ALL SELECT id FROM message WHERE session_id = $1 AND id COLLATE "C" < $2 AND id = ANY($3)`
/**
 * A session's messages (kind 0, by id) and their parts (kind 1, by message and id) in one statement, so in one
 * snapshot: of the messages `messages` selects ($1 the session), their parts by `parts`.
 */
const MESSAGES_AND_PARTS = (messages: string, parts: string) => `SELECT 0 AS kind, id COLLATE "C" AS a, '' COLLATE "C" AS b, data FROM message WHERE ${messages}
  UNION ALL SELECT 1, message_id COLLATE "C", id COLLATE "C", data FROM part WHERE ${parts}
  ORDER BY kind, a, b`
const SELECT_ALL = MESSAGES_AND_PARTS("session_id = $1", "session_id = $1")
const SELECT_WINDOW = MESSAGES_AND_PARTS(`id IN (${WINDOW_IDS})`, `message_id IN (${WINDOW_IDS})`)
/** The usage and cost of the messages `m` of a group, summed as float8 (read back as numbers). */
const USAGE_SUMS = `COALESCE(SUM((m.data->'usage'->>'input')::float8), 0) AS input,
  COALESCE(SUM((m.data->'usage'->>'output')::float8), 0) AS output,
  COALESCE(SUM((m.data->'usage'->>'reasoning')::float8), 0) AS reasoning,
  COALESCE(SUM((m.data->'usage'->>'cacheRead')::float8), 0) AS "cacheRead",
  COALESCE(SUM((m.data->'usage'->>'cacheWrite')::float8), 0) AS "cacheWrite",
  COALESCE(SUM((m.data->>'cost')::float8), 0) AS cost`
interface UsageRow {
  readonly input: number
  readonly output: number
  readonly reasoning: number
  readonly cacheRead: number
  readonly cacheWrite: number
  readonly cost: number
}
const SELECT_TOTALS = `SELECT m.session_id AS "sessionID", COUNT(*)::int AS messages,
  COUNT(*) FILTER (WHERE m.data->>'role' = 'assistant')::int AS steps,
  ${USAGE_SUMS},
  (SELECT a.data->'model' FROM message a WHERE a.session_id = m.session_id AND a.data->>'role' = 'assistant'
    ORDER BY a.id COLLATE "C" DESC LIMIT 1) AS model
  FROM message m WHERE m.session_id = ANY($1) GROUP BY m.session_id`
/** $1 the session ids, $2 the depth bound: per session, its sub-agent sessions at any depth and their usage. */
// A session and its sub-agent sessions (depth-bounded, as the totals), the session first.
const SELECT_TREE = `WITH RECURSIVE tree(id, depth) AS (
    SELECT id, 0 FROM session WHERE id = $1
    UNION ALL SELECT s.id, tree.depth + 1 FROM session s JOIN tree ON s.parent_id = tree.id WHERE tree.depth < $2
  )
  SELECT id FROM tree GROUP BY id ORDER BY MIN(depth), id`
/** The top-level session above $1 (itself for a top-level session), followed up its parents as far as MAX_SUBAGENT_DEPTH. */
const SELECT_ROOT = `WITH RECURSIVE up(id, parent_id, depth) AS (
    SELECT id, parent_id, 0 FROM session WHERE id = $1
    UNION ALL SELECT s.id, s.parent_id, up.depth + 1 FROM session s JOIN up ON s.id = up.parent_id WHERE up.depth < ${MAX_SUBAGENT_DEPTH}
  )
  SELECT id FROM up ORDER BY depth DESC LIMIT 1`
const SELECT_SUBAGENT_TOTALS = `WITH RECURSIVE tree(root, id, depth) AS (
    SELECT s.parent_id, s.id, 1 FROM session s WHERE s.parent_id = ANY($1)
    UNION ALL SELECT tree.root, s.id, tree.depth + 1 FROM session s JOIN tree ON s.parent_id = tree.id WHERE tree.depth < $2
  )
  SELECT tree.root AS "sessionID", COUNT(DISTINCT tree.id)::int AS sessions,
  ${USAGE_SUMS}
  FROM tree LEFT JOIN message m ON m.session_id = tree.id AND m.data->>'role' = 'assistant'
  GROUP BY tree.root`
interface TotalsRow extends UsageRow {
  readonly sessionID: string
  readonly messages: number
  readonly steps: number
  readonly model: ModelRef | null
}
interface SubAgentTotalsRow extends UsageRow {
  readonly sessionID: string
  readonly sessions: number
}
// The same expression as the partial index message_summary_idx, so the planner uses it.
const SELECT_LATEST_SUMMARY = `SELECT data FROM message WHERE session_id = $1 AND (data->>'summary') IS NOT NULL
  AND (data->'time'->>'completed') IS NOT NULL AND (data->>'error') IS NULL AND (data->>'reverted') IS NULL ORDER BY id COLLATE "C" DESC LIMIT 1`

/** The SessionStore over PostgreSQL (see `Storage.layerPostgres`). */
export const makePgSessionStore = (db: PgDatabase): SessionStore["Service"] => {
  const { sql } = db
  const attempt = <A, E>(action: () => string, effect: Effect.Effect<A, E>) => attemptPg(db, action, effect)
  /**
   * Runs the statement `write` (to session `sessionID`; its condition "TRUE" or the fence's) behind the fence when the
   * fiber's WritingClaim is that session's (one statement: `fencedWrite`); the rows it wrote.
   */
  const guarded = (sessionID: string, action: () => string, write: (passes?: string) => string, params: ReadonlyArray<unknown>) =>
    Effect.flatMap(WritingClaim, (claim) =>
      attempt(
        action,
        claim !== undefined && claim.sessionID === sessionID
          ? fencedWrite(sql, claim, write, params)
          : Effect.map(sql.unsafe(`${write()} RETURNING 1`, params), (rows) => rows.length)
      )
    )
  // One snapshot for the messages and their parts, as SQLite's read transaction gives.
  const snapshot = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    sql.withTransaction(Effect.andThen(sql.unsafe("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY"), effect))

  const createSession = Effect.fn("SessionStore.createSession")(function* (value: Session) {
    yield* attempt(
      () => `create session ${value.id}`,
      sql.unsafe(
        "INSERT INTO session (id, directory, parent_id, title, time_created, time_updated, data) VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb)",
        sessionValues(value)
      )
    )
  })

  const updateSession = Effect.fn("SessionStore.updateSession")(function* (value: Session) {
    const updated = yield* guarded(
      value.id,
      () => `update session ${value.id}`,
      (passes = "TRUE") =>
        `UPDATE session SET directory = $2, parent_id = $3, title = $4, time_created = $5, time_updated = $6, data = $7::jsonb WHERE id = $1 AND ${passes}`,
      sessionValues(value)
    )
    if (updated === 0) return yield* sessionNotFound(value.id)
  })

  const getSession = Effect.fn("SessionStore.getSession")(function* (id: string) {
    const rows = yield* attempt(() => `read session ${id}`, sql.unsafe<{ data: Session }>("SELECT data FROM session WHERE id = $1", [id]))
    const row = rows[0]
    if (row === undefined) return yield* sessionNotFound(id)
    return row.data
  })

  const listSessions = Effect.fn("SessionStore.listSessions")(function* (options: ListSessionsOptions = {}) {
    // A negative limit is no limit, as in SQLite (LIMIT NULL is LIMIT ALL).
    const limit = options.limit === undefined || options.limit < 0 ? null : Math.floor(options.limit)
    const rows = yield* attempt(
      () => "list sessions",
      sql.unsafe<{ data: Session }>(
        `SELECT data FROM session WHERE ($1::text IS NULL OR directory = $1) ORDER BY time_updated DESC, id COLLATE "C" DESC LIMIT $2::bigint`,
        [options.directory ?? null, limit]
      )
    )
    return rows.map((row) => row.data)
  })

  const latestSession = Effect.fn("SessionStore.latestSession")(function* (directory: string) {
    const rows = yield* attempt(
      () => `find the latest session of ${directory}`,
      sql.unsafe<{ data: Session }>(
        `SELECT data FROM session WHERE directory = $1 AND parent_id IS NULL ORDER BY time_updated DESC, id COLLATE "C" DESC LIMIT 1`,
        [directory]
      )
    )
    return rows[0]?.data
  })

  const putMessage = Effect.fnUntraced(function* (value: Message) {
    yield* guarded(value.sessionID, () => `save message ${value.id}`, PG_UPSERT_MESSAGE, messageValues(value))
  })

  // Hot path (every streamed delta): no span.
  const putPart = Effect.fnUntraced(function* (value: Part) {
    yield* guarded(value.sessionID, () => `save part ${value.id}`, PG_UPSERT_PART, partValues(value))
  })

  const putParts = Effect.fn("SessionStore.putParts")(function* (values: ReadonlyArray<Part>) {
    if (values.length === 0) return
    const writeAll = Effect.forEach(values, (value) => upsertPart(sql, value), { discard: true })
    const claim = yield* WritingClaim
    yield* attempt(
      () => `save ${values.length} parts`,
      sql.withTransaction(claim !== undefined && values.some((v) => v.sessionID === claim.sessionID) ? Effect.andThen(fence(sql, claim), writeAll) : writeAll)
    )
  })

  const messages = Effect.fn("SessionStore.messages")(function* (sessionID: string, options: MessagesOptions = {}) {
    const from = options.from
    const rows = yield* attempt(
      () => `read the messages of session ${sessionID}`,
      from === undefined
        ? sql.unsafe<{ kind: number; data: Message | Part }>(SELECT_ALL, [sessionID])
        : sql.unsafe<{ kind: number; data: Message | Part }>(SELECT_WINDOW, [sessionID, from, [...(options.include ?? [])]])
    )
    const messageRows: Array<{ data: Message }> = []
    const partsByMessage = new Map<string, Array<Part>>()
    for (const row of rows) {
      if (row.kind === 0) {
        messageRows.push(row as { data: Message })
        continue
      }
      const data = row.data as Part
      const list = partsByMessage.get(data.messageID)
      if (list === undefined) partsByMessage.set(data.messageID, [data])
      else list.push(data)
    }
    return messageRows.map(({ data }): MessageWithParts => ({ info: data, parts: partsByMessage.get(data.id) ?? [] }))
  })

  const latestSummary = Effect.fn("SessionStore.latestSummary")(function* (sessionID: string) {
    const rows = yield* attempt(
      () => `read the latest summary of session ${sessionID}`,
      sql.unsafe<{ data: AssistantMessage }>(SELECT_LATEST_SUMMARY, [sessionID])
    )
    return rows[0]?.data
  })

  const totals = Effect.fn("SessionStore.totals")(function* (sessionIDs: ReadonlyArray<string>) {
    const ids = [...sessionIDs]
    const [rows, below] = yield* attempt(
      () => `read the totals of ${sessionIDs.length} sessions`,
      snapshot(Effect.all([sql.unsafe<TotalsRow>(SELECT_TOTALS, [ids]), sql.unsafe<SubAgentTotalsRow>(SELECT_SUBAGENT_TOTALS, [ids, MAX_SUBAGENT_DEPTH])]))
    )
    const usageOf = (row: UsageRow) => ({
      input: num(row.input),
      output: num(row.output),
      reasoning: num(row.reasoning),
      cacheRead: num(row.cacheRead),
      cacheWrite: num(row.cacheWrite)
    })
    const out = new Map(
      rows.map((row): [string, SessionTotals] => [
        row.sessionID,
        {
          messages: num(row.messages),
          steps: num(row.steps),
          usage: usageOf(row),
          cost: num(row.cost),
          ...(row.model === null ? {} : { model: row.model })
        }
      ])
    )
    for (const row of below) {
      const own = out.get(row.sessionID) ?? { messages: 0, steps: 0, usage: emptyUsage, cost: 0 }
      out.set(row.sessionID, { ...own, subAgents: { sessions: num(row.sessions), usage: usageOf(row), cost: num(row.cost) } })
    }
    return out as ReadonlyMap<string, SessionTotals>
  })

  const sessionTree = Effect.fn("SessionStore.sessionTree")(function* (id: string) {
    const rows = yield* attempt(() => `read the sub-agent sessions of ${id}`, sql.unsafe<{ id: string }>(SELECT_TREE, [id, MAX_SUBAGENT_DEPTH]))
    return rows.map((row) => row.id)
  })

  const deleteSession = Effect.fn("SessionStore.deleteSession")(function* (id: string) {
    // One transaction: the foreign keys cascade to messages, parts and the lease; the event log and the waiting
    // questions have none, and go in the same transaction. The lease row is locked first, as a fenced write and a
    // claim lock it before the session row: one lock order, no deadlock.
    const deleted = yield* attempt(
      () => `delete session ${id}`,
      sql.withTransaction(
        Effect.gen(function* () {
          const ids = (yield* sql.unsafe<{ id: string }>(SELECT_TREE, [id, MAX_SUBAGENT_DEPTH])).map((row) => row.id)
          if (ids.length === 0) return ids
          // the leases in tree order, the tree's top first (its root's, for a sub-agent's session): a take-over locks
          // the root's, then frees the rest; starting at the same row, one waits for the other (ordered by id, a
          // child's id below its parent's deadlocked)
          const root = (yield* sql.unsafe<{ id: string }>(SELECT_ROOT, [id]))[0]?.id
          const order = root === undefined || root === id ? ids : [root, ...ids]
          yield* sql.unsafe("SELECT session_id FROM session_run WHERE session_id = ANY($1) ORDER BY array_position($1::text[], session_id) FOR UPDATE", [order])
          yield* sql.unsafe("DELETE FROM session WHERE id = ANY($1)", [ids])
          yield* sql.unsafe("DELETE FROM session_event WHERE session_id = ANY($1)", [ids])
          yield* sql.unsafe("DELETE FROM permission_pending WHERE session_id = ANY($1) OR root_session_id = ANY($1)", [ids])
          return ids
        })
      )
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
