import type { PermissionAsked } from "@reins/domain"
import { Effect } from "effect"
import { attemptPg, PG_NOW_MS, type PgDatabase } from "./PgDatabase.ts"
import type { ListQuestionsOptions, PendingQuestion, PendingQuestions, QuestionReply } from "./PendingQuestions.ts"
import { num } from "./PgSql.ts"

const COLUMNS = "id, session_id, root_session_id, time_created, data, reply"
const PUT = `INSERT INTO permission_pending (id, session_id, root_session_id, time_created, data, reply) VALUES ($1, $2, $3, $4, $5::jsonb, NULL)
  ON CONFLICT (id) DO UPDATE SET session_id = excluded.session_id, root_session_id = excluded.root_session_id,
  time_created = excluded.time_created, data = excluded.data, reply = NULL`
// A question is live while the asking session has a live lease (database time): a dead process's question is not.
const LIVE = `EXISTS (SELECT 1 FROM session_run r WHERE r.session_id = permission_pending.session_id AND r.holder <> '' AND r.time_expires > ${PG_NOW_MS})`
const LIST = `SELECT ${COLUMNS} FROM permission_pending WHERE ($1::text IS NULL OR session_id = $1) AND ($2::text IS NULL OR root_session_id = $2) AND ${LIVE}
  ORDER BY time_created, id COLLATE "C"`
const ANSWER = `UPDATE permission_pending SET reply = $2::jsonb WHERE id = $1 AND reply IS NULL AND ${LIVE} RETURNING id`
const TAKE = `DELETE FROM permission_pending WHERE session_id = $1 AND reply IS NOT NULL RETURNING ${COLUMNS}`

interface QuestionRow {
  readonly id: string
  readonly session_id: string
  readonly root_session_id: string
  readonly time_created: bigint | number
  readonly data: PermissionAsked
  readonly reply: QuestionReply | null
}

const questionOf = (row: QuestionRow): PendingQuestion => ({
  id: row.id,
  sessionID: row.session_id,
  rootSessionID: row.root_session_id,
  time: { created: num(row.time_created) },
  asked: row.data,
  ...(row.reply === null ? {} : { reply: row.reply })
})

/** PendingQuestions over PostgreSQL: the `permission.asked` event and the reply as jsonb. */
export const makePgPendingQuestions = (db: PgDatabase): PendingQuestions["Service"] => {
  const { sql } = db
  return {
    put: Effect.fn("PendingQuestions.put")(function* (question: Omit<PendingQuestion, "reply">) {
      yield* attemptPg(
        db,
        () => `store permission question ${question.id}`,
        sql.unsafe(PUT, [question.id, question.sessionID, question.rootSessionID, question.time.created, JSON.stringify(question.asked)])
      )
    }),
    remove: Effect.fn("PendingQuestions.remove")(function* (id: string) {
      yield* attemptPg(db, () => `remove permission question ${id}`, sql.unsafe("DELETE FROM permission_pending WHERE id = $1", [id]))
    }),
    list: Effect.fn("PendingQuestions.list")(function* (options?: ListQuestionsOptions) {
      const rows = yield* attemptPg(
        db,
        () => "list the permission questions",
        sql.unsafe<QuestionRow>(LIST, [options?.sessionID ?? null, options?.rootSessionID ?? null])
      )
      return rows.map(questionOf)
    }),
    answer: Effect.fn("PendingQuestions.answer")(function* (id: string, reply: QuestionReply) {
      const rows = yield* attemptPg(db, () => `answer permission question ${id}`, sql.unsafe(ANSWER, [id, JSON.stringify(reply)]))
      return rows.length > 0
    }),
    takeAnswers: Effect.fn("PendingQuestions.takeAnswers")(function* (sessionID: string) {
      const rows = yield* attemptPg(db, () => `take the answers to session ${sessionID}'s permission questions`, sql.unsafe<QuestionRow>(TAKE, [sessionID]))
      return rows.map(questionOf).sort((a, b) => a.time.created - b.time.created)
    })
  }
}
