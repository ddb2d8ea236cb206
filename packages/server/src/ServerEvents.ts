import { Context, Effect, Layer, Schedule, Stream } from "effect"
import { EventAppender } from "@reins/session"
import { EventLog, type LoggedEvent, type StoreError } from "@reins/storage"
import { HubLimits, makeEventHub, type EventHub, type ServerEvent, type Subscriber } from "./EventHub.ts"

/** How many events one read of the log takes. */
const PAGE = 1_000
/** A read of the log even without a wake-up (one missed at start, or a lost notification): it costs one indexed query. */
const SAFETY_POLL = "1 second"

/**
 * The server's event hub, fed from the event log by one reader per process (woken by the log's
 * `wakeups`), so every `reins serve` over the same database gives the same ids to the same events.
 */
export class ServerEvents extends Context.Service<
  ServerEvents,
  Omit<EventHub, "publish" | "subscribe"> & {
    /** Appends an event that is not on the bus (a turn's end) to the log, in order with the bus's events. */
    publish(event: ServerEvent): Effect.Effect<void>
    /** A client: the replay it asks for (from the ring, and from the log what the ring no longer has), then live events. */
    subscribe(options: { readonly sessionID?: string | undefined; readonly lastEventId?: number | undefined }): Effect.Effect<Subscriber, StoreError>
  }
>()("reins/server/ServerEvents") {
  static readonly layer = Layer.effect(
    ServerEvents,
    Effect.gen(function* () {
      const log = yield* EventLog
      const appender = yield* EventAppender
      const hub = makeEventHub(yield* HubLimits)
      const warn = (action: string) => (error: { readonly message: string }) => Effect.logWarning(`Could not ${action}: ${error.message}`)
      hub.start(yield* log.last().pipe(Effect.catch((error) => Effect.as(warn("read the event log")(error), 0))))

      /** Reads `after < id <= through` in pages. */
      const readRange = Effect.fnUntraced(function* (after: number, through: number) {
        const out: Array<LoggedEvent> = []
        let position = after
        while (position < through) {
          const page = yield* log.read({ after: position, limit: PAGE })
          for (const event of page) if (event.id <= through) out.push(event)
          if (page.length < PAGE) break
          position = page.at(-1)!.id
        }
        return out
      })

      // the one reader: everything after the last id it fed the hub, in pages
      const drain = Effect.gen(function* () {
        for (;;) {
          const page = yield* log.read({ after: hub.latest(), limit: PAGE })
          for (const event of page) hub.publish(event)
          if (page.length < PAGE) return
        }
      }).pipe(Effect.catch(warn("read the event log")))
      const wakeups = Stream.merge(log.wakeups, Stream.fromSchedule(Schedule.spaced(SAFETY_POLL)))
      yield* Effect.forkScoped(Stream.runForEach(wakeups, () => drain))
      yield* drain

      return ServerEvents.of({
        ...hub,
        publish: (event) => appender.offer(event),
        subscribe: (options) =>
          Effect.gen(function* () {
            const bounds = yield* Effect.all({ first: log.first(), last: log.last() })
            const client = hub.subscribe({ ...options, bounds })
            const missing = client.missing
            if (missing !== undefined) client.fill(yield* readRange(missing.after, missing.through).pipe(Effect.onError(() => Effect.sync(client.close))))
            return client
          })
      })
    })
  )
}
