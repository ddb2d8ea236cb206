import { Effect, Schedule, Stream } from "effect"
import type { Session } from "@reins/domain"
import type { EventLog, LoggedEvent, SessionStore, StoreError } from "@reins/storage"
import { MAX_DEPTH } from "./EventAppender.ts"

/** How many events one read of the log takes. */
const PAGE = 500
/** A read even without a wake-up (one lost between the first read and the subscription): one indexed query. */
const SAFETY_POLL = "1 second"

/** The top-level session of `session`: followed up its `parentID`s (as far as the appender follows them). */
export const sessionRoot = (store: SessionStore["Service"], session: Session) =>
  Effect.gen(function* () {
    let current = session
    for (let depth = 0; current.parentID !== undefined && depth < MAX_DEPTH; depth++) current = yield* store.getSession(current.parentID)
    return current.id
  })

/**
 * A session's events (its sub-agents' too) from the durable log: those after position `after` (0: all that are
 * stored), then each new one as it is appended — by this process or any other on the same database — in log
 * order, each once. Woken by the log's `wakeups`, with a read every second in case one was missed.
 */
export const followLog = (log: EventLog["Service"], store: SessionStore["Service"], sessionID: string, after = 0): Stream.Stream<LoggedEvent, StoreError> =>
  Stream.unwrap(
    Effect.gen(function* () {
      const session = yield* store.getSession(sessionID)
      const root = yield* sessionRoot(store, session)
      // the session and the sub-agent sessions started under it, learnt from their `session.created` as they come
      const tree = new Set([sessionID])
      // a top-level session's tree is everything under its root
      const whole = root === sessionID
      let position = after
      const readMore = Effect.gen(function* () {
        const out: Array<LoggedEvent> = []
        for (;;) {
          const page = yield* log.read({ after: position, rootSessionID: root, limit: PAGE })
          for (const logged of page) {
            position = logged.id
            const event = logged.event
            if (event.type === "session.created" && event.session.parentID !== undefined && tree.has(event.session.parentID)) tree.add(event.session.id)
            if (whole || tree.has(logged.sessionID)) out.push(logged)
          }
          if (page.length < PAGE) return out
        }
      })
      const ticks = Stream.merge(Stream.make(undefined), Stream.merge(log.wakeups, Stream.fromSchedule(Schedule.spaced(SAFETY_POLL))))
      return ticks.pipe(
        Stream.mapEffect(() => readMore),
        Stream.flatMap((events) => Stream.fromIterable(events))
      )
    })
  )
