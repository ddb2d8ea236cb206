import { Context, Effect, Layer, Schedule, Stream } from "effect"
import { realPath } from "@reins/domain"
import { EventAppender, sessionRoot } from "@reins/session"
import { EventLog, SessionStore, sessionNotFound, type LoggedEvent, type StoreError } from "@reins/storage"
import { HubLimits, makeEventHub, type EventHub, type ServerEvent, type Subscriber } from "./EventHub.ts"
import { ServerInfo } from "./ServerInfo.ts"

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
    /**
     * A client: the replay it asks for (from the ring, and from the log what the ring no longer has), then live events.
     * Only this project's sessions: another project's session fails as not found.
     */
    subscribe(options: { readonly sessionID?: string | undefined; readonly lastEventId?: number | undefined }): Effect.Effect<Subscriber, StoreError>
  }
>()("reins/server/ServerEvents") {
  static readonly layer = Layer.effect(
    ServerEvents,
    Effect.gen(function* () {
      const log = yield* EventLog
      const appender = yield* EventAppender
      const limits = yield* HubLimits
      const hub = makeEventHub(limits)
      const store = yield* SessionStore
      const project = realPath((yield* ServerInfo).directory)
      // another project's sessions share the database (the data dir): their events are not this server's to show
      const directories = new Map<string, boolean>()
      const inProject = (directory: string) => {
        let mine = directories.get(directory)
        if (mine === undefined) directories.set(directory, (mine = realPath(directory) === project))
        return mine
      }
      /** Root session → whether it is this project's: from the events that carry it, else looked up once. */
      const roots = new Map<string, boolean>()
      /** What the events themselves say: the roots they create or update. */
      const told = (events: ReadonlyArray<LoggedEvent>) => {
        for (const { event } of events)
          if ((event.type === "session.created" || event.type === "session.updated") && event.session.parentID === undefined)
            roots.set(event.session.id, inProject(event.session.directory))
      }
      const learn = (events: ReadonlyArray<LoggedEvent>) =>
        Effect.gen(function* () {
          told(events)
          for (const { rootSessionID } of events) {
            if (roots.has(rootSessionID)) continue
            // a root gone from the store (deleted) before this process saw it: not shown
            const found = yield* store.getSession(rootSessionID).pipe(Effect.option)
            roots.set(rootSessionID, found._tag === "Some" && inProject(found.value.directory))
          }
        })
      const shown = (logged: LoggedEvent) => roots.get(logged.rootSessionID) === true
      /** The root of one of this project's sessions (it fails as not found for another project's). */
      const rootOf = Effect.fnUntraced(function* (sessionID: string) {
        const session = yield* store.getSession(sessionID)
        if (!inProject(session.directory)) return yield* sessionNotFound(sessionID)
        return yield* sessionRoot(store, session)
      })
      const warn = (action: string) => (error: { readonly message: string }) => Effect.logWarning(`Could not ${action}: ${error.message}`)
      hub.start(yield* log.last().pipe(Effect.catch((error) => Effect.as(warn("read the event log")(error), 0))))

      const maxEvents = Math.max(1, limits.backfill ?? 5_000)
      const maxBytes = limits.backfillBytes ?? 8 * 1024 * 1024
      /**
       * Reads `after < id <= through` in pages: this project's events, of one session tree when `root` is given (filtered by
       * the database). At most `backfill` events (`backfillBytes`) at once: `cut` is then where the client resumes.
       */
      const readRange = Effect.fnUntraced(function* (after: number, through: number, root: string | undefined) {
        const out: Array<LoggedEvent> = []
        let bytes = 0
        let position = after
        while (position < through) {
          const page = yield* log.read({ after: position, limit: PAGE, ...(root === undefined ? {} : { rootSessionID: root }) })
          if (root === undefined) yield* learn(page)
          for (const event of page) {
            if (event.id > through) return { events: out, cut: undefined }
            if (out.length >= maxEvents || bytes >= maxBytes) return { events: out, cut: position }
            position = event.id
            if (root !== undefined || shown(event)) {
              out.push(event)
              bytes += JSON.stringify(event.event).length
            }
          }
          if (page.length < PAGE) break
        }
        return { events: out, cut: undefined }
      })

      // the one reader: everything after the last id it fed the hub, in pages
      const drain = Effect.gen(function* () {
        for (;;) {
          const page = yield* log.read({ after: hub.latest(), limit: PAGE })
          yield* learn(page)
          for (const event of page) hub.publish(event, shown(event))
          if (page.length < PAGE) return
        }
      }).pipe(Effect.catch(warn("read the event log")))
      // this process's own appends go to the hub as they are stored: each one right after the last the hub has (nothing of
      // another process's in between) and of a root already known; the rest the reader fetches from the log when woken
      const forget = appender.onAppended((events) => {
        told(events)
        for (const logged of events) {
          if (logged.id !== hub.latest() + 1 || !roots.has(logged.rootSessionID)) return
          hub.publish(logged, shown(logged))
        }
      })
      yield* Effect.addFinalizer(() => Effect.sync(forget))
      const wakeups = Stream.merge(log.wakeups, Stream.fromSchedule(Schedule.spaced(SAFETY_POLL)))
      yield* Effect.forkScoped(Stream.runForEach(wakeups, () => drain))
      yield* drain

      return ServerEvents.of({
        ...hub,
        publish: (event) => appender.offer(event),
        subscribe: (options) =>
          Effect.gen(function* () {
            const root = options.sessionID === undefined ? undefined : yield* rootOf(options.sessionID)
            const bounds = yield* Effect.all({ first: log.first(), last: log.last() })
            const client = hub.subscribe({ ...options, bounds })
            const missing = client.missing
            if (missing !== undefined) {
              const read = yield* readRange(missing.after, missing.through, root).pipe(Effect.onError(() => Effect.sync(client.close)))
              client.fill(read.events, read.cut)
            }
            return client
          })
      })
    })
  )
}
