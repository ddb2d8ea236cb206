import type { SqliteDatabase } from "./Database.ts"
import type { ListQuestionsOptions, PendingQuestion, PendingQuestions, QuestionReply } from "./PendingQuestions.ts"
import { Effect } from "effect"
import { NOW_MS } from "./Sql.ts"
import { toStoreError, type StoreError } from "./StoreError.ts"

const COLUMNS = "id, session_id, root_session_id, time_created, data, reply"
const PUT = `INSERT INTO permission_pending (id, session_id, root_session_id, time_created, data, reply) VALUES (?1, ?2, ?3, ?4, ?5, NULL)
  ON CONFLICT (id) DO UPDATE SET session_id = excluded.session_id, root_session_id = excluded.root_session_id,
  time_created = excluded.time_created, data = excluded.data, reply = NULL`
// A question is live while the asking session has a live lease (database time): a dead process's question is not.
const LIVE = `EXISTS (SELECT 1 FROM session_run r WHERE r.session_id = permission_pending.session_id AND r.holder <> '' AND r.time_expires > ${NOW_MS})`
// ?1 session id or NULL, ?2 root session id or NULL
const LIST = `SELECT ${COLUMNS} FROM permission_pending WHERE (?1 IS NULL OR session_id = ?1) AND (?2 IS NULL OR root_session_id = ?2)
  AND ${LIVE} ORDER BY time_created, id`
const ANSWER = `UPDATE permission_pending SET reply = ?2 WHERE id = ?1 AND reply IS NULL AND ${LIVE}`
const TAKE = `DELETE FROM permission_pending WHERE session_id = ?1 AND reply IS NOT NULL RETURNING ${COLUMNS}`

interface QuestionRow {
  readonly id: string
  readonly session_id: string
  readonly root_session_id: string
  readonly time_created: number
  readonly data: string
  readonly reply: string | null
}

const questionOf = (row: QuestionRow): PendingQuestion => ({
  id: row.id,
  sessionID: row.session_id,
  rootSessionID: row.root_session_id,
  time: { created: row.time_created },
  asked: JSON.parse(row.data),
  ...(row.reply === null ? {} : { reply: JSON.parse(row.reply) })
})

/** PendingQuestions over the SQLite database. */
export const makeSqlitePendingQuestions = ({ client, file }: SqliteDatabase): Effect.Effect<PendingQuestions["Service"], StoreError> =>
  Effect.try({
    try: () => {
      const attempt = <A>(action: () => string, run: () => A) => Effect.try({ try: run, catch: (error) => toStoreError(file, action(), error) })
      const put = client.prepare<void, [string, string, string, number, string]>(PUT)
      const remove = client.prepare<void, [string]>("DELETE FROM permission_pending WHERE id = ?1")
      const list = client.prepare<QuestionRow, [string | null, string | null]>(LIST)
      const answer = client.prepare<void, [string, string]>(ANSWER)
      const take = client.prepare<QuestionRow, [string]>(TAKE)
      return {
        put: Effect.fn("PendingQuestions.put")(function* (question: Omit<PendingQuestion, "reply">) {
          yield* attempt(
            () => `store permission question ${question.id}`,
            () => put.run(question.id, question.sessionID, question.rootSessionID, question.time.created, JSON.stringify(question.asked))
          )
        }),
        remove: Effect.fn("PendingQuestions.remove")(function* (id: string) {
          yield* attempt(
            () => `remove permission question ${id}`,
            () => remove.run(id)
          )
        }),
        list: Effect.fn("PendingQuestions.list")(function* (options?: ListQuestionsOptions) {
          const rows = yield* attempt(
            () => "list the permission questions",
            () => list.all(options?.sessionID ?? null, options?.rootSessionID ?? null)
          )
          return rows.map(questionOf)
        }),
        answer: Effect.fn("PendingQuestions.answer")(function* (id: string, reply: QuestionReply) {
          return yield* attempt(
            () => `answer permission question ${id}`,
            () => answer.run(id, JSON.stringify(reply)).changes > 0
          )
        }),
        takeAnswers: Effect.fn("PendingQuestions.takeAnswers")(function* (sessionID: string) {
          const rows = yield* attempt(
            () => `take the answers to session ${sessionID}'s permission questions`,
            () => take.all(sessionID)
          )
          return rows.map(questionOf).sort((a, b) => a.time.created - b.time.created)
        })
      }
    },
    catch: (error) => toStoreError(file, "prepare the permission question queries", error)
  })
