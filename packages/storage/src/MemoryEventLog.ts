import { Clock, Effect, Queue, Stream } from "effect"
import { fencePasses, takenOver, WritingClaim } from "./Claim.ts"
import type { MemoryState } from "./Database.ts"
import type { EventLog, EventToAppend, LoggedEvent, ReadEventsOptions } from "./EventLog.ts"
import type { ListQuestionsOptions, PendingQuestion, PendingQuestions, QuestionReply } from "./PendingQuestions.ts"

/** The index of the first event with `id > after` (events are in id order). */
const firstAfter = (events: ReadonlyArray<LoggedEvent>, after: number) => {
  let lo = 0
  let hi = events.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (events[mid]!.id <= after) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** The EventLog over the memory database: one array in id order; each append is one synchronous step. */
export const makeMemoryEventLog = (state: MemoryState): EventLog["Service"] => {
  const log = state.eventLog
  const lastSeq = new Map<string, number>()

  const append = Effect.fn("EventLog.append")(function* (batch: ReadonlyArray<EventToAppend>) {
    const claim = yield* WritingClaim
    if (claim !== undefined) {
      const holder = state.runs.get(claim.sessionID)
      if (holder === undefined || !fencePasses(holder, claim)) return yield* takenOver(claim, holder)
    }
    if (batch.length === 0) return []
    const logged = batch.map((item): LoggedEvent => {
      const seq = (lastSeq.get(item.sessionID) ?? 0) + 1
      lastSeq.set(item.sessionID, seq)
      return { id: log.next++, sessionID: item.sessionID, rootSessionID: item.rootSessionID, seq, time: item.time, event: item.event }
    })
    log.events.push(...logged)
    for (const listener of log.listeners) listener()
    return logged
  })

  const read = Effect.fn("EventLog.read")(function* (options: ReadEventsOptions) {
    const out: Array<LoggedEvent> = []
    const limit = options.limit ?? Number.POSITIVE_INFINITY
    for (let i = firstAfter(log.events, options.after); i < log.events.length && out.length < limit; i++) {
      const event = log.events[i]!
      if (options.sessionID !== undefined && event.sessionID !== options.sessionID) continue
      if (options.rootSessionID !== undefined && event.rootSessionID !== options.rootSessionID) continue
      out.push(event)
    }
    return out
  })

  const prune = Effect.fn("EventLog.prune")(function* (beforeTime: number) {
    const before = log.events.length
    log.events = log.events.filter((event) => event.time >= beforeTime)
    return before - log.events.length
  })

  return {
    append,
    read,
    last: () => Effect.sync(() => log.events.at(-1)?.id ?? 0),
    first: () => Effect.sync(() => log.events[0]?.id ?? 0),
    prune,
    wakeups: Stream.callback<void>(
      (queue) =>
        Effect.acquireRelease(
          Effect.sync(() => {
            const listener = () => void Queue.offerUnsafe(queue, undefined)
            log.listeners.add(listener)
            return listener
          }),
          (listener) => Effect.sync(() => log.listeners.delete(listener))
        ),
      { bufferSize: 1, strategy: "sliding" }
    )
  }
}

const matches = (question: PendingQuestion, options: ListQuestionsOptions | undefined) =>
  (options?.sessionID === undefined || question.sessionID === options.sessionID) &&
  (options?.rootSessionID === undefined || question.rootSessionID === options.rootSessionID)

/** PendingQuestions over the memory database's Map. */
export const makeMemoryPendingQuestions = (state: MemoryState): PendingQuestions["Service"] => {
  const { questions, runs } = state
  // a question is live while the asking session has a live lease: a dead process's question is not
  const live = (question: PendingQuestion, now: number) => {
    const run = runs.get(question.sessionID)
    return run !== undefined && run.holder !== "" && run.time.expires > now
  }
  return {
    put: Effect.fn("PendingQuestions.put")(function* (question: Omit<PendingQuestion, "reply">) {
      questions.set(question.id, question)
    }),
    remove: Effect.fn("PendingQuestions.remove")(function* (id: string) {
      questions.delete(id)
    }),
    list: Effect.fn("PendingQuestions.list")(function* (options?: ListQuestionsOptions) {
      const now = yield* Clock.currentTimeMillis
      return [...questions.values()]
        .filter((question) => matches(question, options) && live(question, now))
        .sort((a, b) => a.time.created - b.time.created || (a.id < b.id ? -1 : 1))
    }),
    answer: Effect.fn("PendingQuestions.answer")(function* (id: string, reply: QuestionReply) {
      const question = questions.get(id)
      if (question === undefined || question.reply !== undefined || !live(question, yield* Clock.currentTimeMillis)) return false
      questions.set(id, { ...question, reply })
      return true
    }),
    takeAnswers: Effect.fn("PendingQuestions.takeAnswers")(function* (sessionID: string) {
      const answered = [...questions.values()].filter((question) => question.sessionID === sessionID && question.reply !== undefined)
      for (const question of answered) questions.delete(question.id)
      return answered
    })
  }
}
