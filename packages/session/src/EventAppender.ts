import { Bus, eventSessionID, type LogEvent, type SessionRun } from "@reins/domain"
import { EventLog, SessionStore, WritingClaim, type EventToAppend, type LoggedEvent, type StoreError } from "@reins/storage"
import { Clock, Context, Effect, Latch, Layer, Schedule, Semaphore } from "effect"

/**
 * How the appender batches: at most `maxDelayMs` after the first event waits, or as soon as `maxBatch` wait; and
 * how long the log keeps events (`retentionMs`; pruned a minute after start, then hourly, so a short run never does).
 */
export const AppenderSettings = Context.Reference<{ readonly maxDelayMs: number; readonly maxBatch: number; readonly retentionMs: number }>(
  "reins/session/AppenderSettings",
  { defaultValue: () => ({ maxDelayMs: 10, maxBatch: 64, retentionMs: 7 * 24 * 3_600_000 }) }
)

/** While appends fail (not a take-over), at most this many events wait; past it the oldest are dropped, with a warning. */
const MAX_WAITING = 10_000
/** How many levels of parent sessions are followed to find a session's root (sub-agents nest 2 deep; the bound guards a cycle). */
export const MAX_DEPTH = 8

interface Waiting {
  readonly item: EventToAppend | Omit<EventToAppend, "rootSessionID">
  /** The claim of the fiber that published it: its append is fenced by it. */
  readonly claim: SessionRun | undefined
}

/**
 * An event that ends a step (an assistant message completed) or a turn, or creates a session: what came before it
 * is stored before the publisher goes on (a client that connects after a session was created starts after its creation).
 */
const endsStep = (event: LogEvent) =>
  event.type === "session.created" ||
  (event.type === "message.updated" && event.message.role === "assistant" && event.message.time.completed !== undefined) ||
  (event.type === "session.status" && event.status === "idle") ||
  event.type === "turn.finished" ||
  event.type === "turn.failed" ||
  event.type === "session.deleted"

/**
 * Appends the bus's events to the `EventLog` in batches: within `maxDelayMs` of the first waiting, at
 * `maxBatch` waiting, and at once (the publisher waiting for it) at the end of each step and turn. A
 * batch is never written inside another transaction. An event published under a `WritingClaim` is
 * appended under it: a holder that was taken over appends nothing. A failed append is retried, then
 * kept for the next one and logged; the turn goes on.
 */
export class EventAppender extends Context.Service<
  EventAppender,
  {
    /** Queues an event not published on the bus (a server's `turn.finished`, `turn.failed`); appended in order with the bus's. */
    offer(event: LogEvent): Effect.Effect<void>
    /** Appends everything queued so far; done when it is stored (or kept after failing). */
    readonly flush: Effect.Effect<void>
    /** The root of a session: its parents followed up (cached); a session not stored is its own. */
    rootOf(sessionID: string): Effect.Effect<string>
    /**
     * Calls `listener` with each batch this process appends, in append order, as soon as it is stored: a local tap
     * (a server's hub takes its own events from it, with no read of the log). Returns the call that removes it.
     */
    onAppended(listener: (events: ReadonlyArray<LoggedEvent>) => void): () => void
  }
>()("reins/session/EventAppender") {
  /** Listens on the bus for as long as the layer lives; the last events are flushed when it closes. */
  static readonly layer: Layer.Layer<EventAppender, never, Bus | EventLog | SessionStore> = Layer.effect(
    EventAppender,
    Effect.gen(function* () {
      const bus = yield* Bus
      const log = yield* EventLog
      const store = yield* SessionStore
      const settings = yield* AppenderSettings
      const roots = new Map<string, string>()
      // parents told by session.created / session.updated events (a session may not be stored yet when its creation is appended)
      const parents = new Map<string, string | undefined>()
      let waiting: Array<Waiting> = []
      const pending = Latch.makeUnsafe(false)
      const full = Latch.makeUnsafe(false)
      const lock = yield* Semaphore.make(1)
      const tapped = new Set<(events: ReadonlyArray<LoggedEvent>) => void>()
      // a listener's fault is its own: the batch is stored, and the rest of the flush goes on
      const tell = (logged: ReadonlyArray<LoggedEvent>) =>
        Effect.forEach(
          tapped,
          (listener) =>
            Effect.try(() => listener(logged)).pipe(Effect.catch((error) => Effect.logWarning(`A listener of the event log failed: ${String(error.cause)}`))),
          { discard: true }
        )

      /** The root of a session: its parents followed up (cached); a session no longer stored is its own root. */
      const rootOf = Effect.fnUntraced(function* (sessionID: string) {
        const chain: Array<string> = []
        let id: string | undefined = sessionID
        let root = sessionID
        for (let depth = 0; id !== undefined && depth <= MAX_DEPTH; depth++) {
          const known = roots.get(id)
          if (known !== undefined) {
            root = known
            break
          }
          chain.push(id)
          root = id
          const parent: string | undefined = parents.has(id)
            ? parents.get(id)
            : yield* store.getSession(id).pipe(
                Effect.map((session) => session.parentID),
                Effect.catch(() => Effect.succeed(undefined))
              )
          id = parent
        }
        for (const seen of chain) roots.set(seen, root)
        return root
      })

      const queue = (event: LogEvent, claim: SessionRun | undefined, time: number) => {
        const sessionID = eventSessionID(event)
        if (event.type === "session.created" || event.type === "session.updated") {
          const parent = event.session.parentID
          parents.set(sessionID, parent)
          if (parent === undefined) roots.set(sessionID, sessionID)
          else if (roots.has(parent)) roots.set(sessionID, roots.get(parent)!)
        }
        const rootSessionID = roots.get(sessionID)
        waiting.push({ item: rootSessionID === undefined ? { sessionID, time, event } : { sessionID, rootSessionID, time, event }, claim })
        if (waiting.length > MAX_WAITING) {
          const dropped = waiting.splice(0, waiting.length - MAX_WAITING)
          return Effect.logWarning(`The event log could not be written: ${dropped.length} events were dropped from it (the sessions themselves are stored).`)
        }
        pending.openUnsafe()
        if (waiting.length >= settings.maxBatch) full.openUnsafe()
        return Effect.void
      }

      const appendRun = (batch: ReadonlyArray<Waiting>, claim: SessionRun | undefined) => {
        // roots are usually known when queued: the lookups (an effect per event) only for those that are not
        const items = batch.every(({ item }) => "rootSessionID" in item)
          ? Effect.succeed(batch.map(({ item }) => item as EventToAppend))
          : Effect.forEach(batch, ({ item }) =>
              "rootSessionID" in item ? Effect.succeed(item) : Effect.map(rootOf(item.sessionID), (rootSessionID) => ({ ...item, rootSessionID }))
            )
        return Effect.flatMap(items, (items) => log.append(items).pipe(Effect.provideService(WritingClaim, claim), Effect.tap(tell)))
      }

      /** Appends a run of events published under one claim; true when done (stored, or refused to a taken-over holder). */
      const appendOrKeep = (batch: ReadonlyArray<Waiting>, claim: SessionRun | undefined) => {
        const gaveUp = (error: StoreError) =>
          error.reason === "taken-over"
            ? Effect.as(Effect.logWarning(`${batch.length} events were not logged: ${error.message}`), true)
            : Effect.as(Effect.logWarning(`Could not append ${batch.length} events to the event log (kept for the next try): ${error.message}`), false)
        // the retry and its schedule are made only once an append failed (a step's flush is on the hot path)
        const retried = () =>
          appendRun(batch, claim).pipe(
            Effect.retry({ while: (error: StoreError) => error.reason !== "taken-over", schedule: Schedule.exponential("40 millis"), times: 2 }),
            Effect.as(true),
            Effect.catch(gaveUp)
          )
        return appendRun(batch, claim).pipe(
          Effect.as(true),
          Effect.catch((error) => (error.reason === "taken-over" ? gaveUp(error) : Effect.andThen(Effect.sleep("20 millis"), Effect.suspend(retried))))
        )
      }

      // batches taken but not yet stored (in a flush that holds the lock): a flush with nothing waiting waits for them
      let inFlight = 0
      const storeBatch = (batch: ReadonlyArray<Waiting>): Effect.Effect<void> =>
        Effect.gen(function* () {
          // consecutive events of one claim are one transaction; a batch usually has one claim
          let start = 0
          while (start < batch.length) {
            const claim = batch[start]!.claim
            let end = start + 1
            while (end < batch.length && batch[end]!.claim === claim) end++
            if (!(yield* appendOrKeep(batch.slice(start, end), claim))) {
              waiting = [...batch.slice(start), ...waiting]
              pending.openUnsafe()
              return
            }
            start = end
          }
          // a deleted session is not asked about again once its deletion is stored: what is known of it goes (a
          // long-lived server would keep it all)
          for (const { item } of batch)
            if (item.event.type === "session.deleted") {
              roots.delete(item.sessionID)
              parents.delete(item.sessionID)
            }
        })
      const locked: Effect.Effect<void> = lock
        .withPermits(1)(
          Effect.suspend(() => {
            if (waiting.length === 0) return Effect.void
            const batch = waiting
            waiting = []
            pending.closeUnsafe()
            full.closeUnsafe()
            inFlight++
            return Effect.ensuring(
              storeBatch(batch),
              Effect.sync(() => {
                inFlight--
              })
            )
          })
        )
        .pipe(Effect.uninterruptible)
      // nothing waiting and nothing being stored (the batcher after a step's own flush): no lock taken
      const flush: Effect.Effect<void> = Effect.suspend(() => (waiting.length === 0 && inFlight === 0 ? Effect.void : locked))

      // every event of the process passes here: no generator, the claim and the time read off the publisher's fiber
      yield* bus.listen((event) =>
        Effect.withFiber((fiber) => {
          const queued = queue(event, fiber.getRef(WritingClaim), fiber.getRef(Clock.Clock).currentTimeMillisUnsafe())
          return endsStep(event) ? Effect.andThen(queued, flush) : queued
        })
      )
      // the batcher: a batch goes maxDelayMs after its first event was published, or when maxBatch are waiting. The
      // time is counted from the event, not from the last batch: one published while another batch was being stored
      // goes as soon as that one is (it waited long enough), not a whole delay after it.
      yield* Effect.forkScoped(
        Effect.forever(
          Effect.gen(function* () {
            yield* pending.await
            const first = waiting[0]?.item.time
            // never more than the delay: a clock stepped back (NTP, a VM resumed) must not hold the events that long
            const left = first === undefined ? 0 : Math.min(settings.maxDelayMs, first + settings.maxDelayMs - (yield* Clock.currentTimeMillis))
            yield* left > 0 ? Effect.raceFirst(full.await, Effect.sleep(left)) : Effect.yieldNow
            yield* flush
          })
        )
      )
      yield* Effect.addFinalizer(() => flush)
      // retention: a client asking for older events gets server.gap
      const prune = Effect.gen(function* () {
        const pruned = yield* log.prune((yield* Clock.currentTimeMillis) - settings.retentionMs)
        if (pruned > 0) yield* Effect.logDebug(`Pruned ${pruned} events older than the event log's retention.`)
      }).pipe(Effect.catch((error) => Effect.logWarning(`Could not prune the event log: ${error.message}`)))
      yield* Effect.forkScoped(Effect.sleep("1 minute").pipe(Effect.andThen(Effect.repeat(prune, Schedule.spaced("1 hour")))))

      return EventAppender.of({
        offer: (event) =>
          Effect.gen(function* () {
            yield* queue(event, undefined, yield* Clock.currentTimeMillis)
            if (endsStep(event)) yield* flush
          }),
        flush,
        rootOf,
        onAppended: (listener) => {
          tapped.add(listener)
          return () => void tapped.delete(listener)
        }
      })
    })
  )
}
