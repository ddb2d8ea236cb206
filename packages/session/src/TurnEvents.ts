import { Cause, Context, Effect, Exit, Fiber, Stream } from "effect"
import type { Bus, Event, SessionEvent, TurnResult } from "@reins/domain"

/** How many events a turn consumed as a stream keeps waiting for its consumer (see `TurnBuffer`). */
export const TurnStreamSettings = Context.Reference<{ readonly buffer: number }>("reins/session/TurnStreamSettings", {
  defaultValue: () => ({ buffer: 1024 })
})

type PartDelta = Extract<Event, { type: "part.delta" }>

/**
 * Whether a bus event belongs to the session's turn. A `part.delta` names only its part, so the
 * parts the session announced are remembered in `parts`. `within`: the session and its sub-agents'
 * sessions, whose progress is the turn's too.
 */
export const ofSession =
  (sessionID: string, parts: Set<string>, within: (id: string) => boolean = (id) => id === sessionID) =>
  (event: Event): boolean => {
    switch (event.type) {
      case "session.created":
      case "session.updated":
        return within(event.session.id) || (event.session.parentID !== undefined && within(event.session.parentID))
      case "message.updated":
        return within(event.message.sessionID)
      case "part.updated":
        if (!within(event.part.sessionID)) return false
        parts.add(event.part.id)
        return true
      case "part.delta":
        return parts.has(event.partID)
      default:
        return "sessionID" in event && within(event.sessionID)
    }
  }

/** The id an update is about: a later update of the same part or message supersedes it. */
const updateKey = (event: SessionEvent): string | undefined =>
  event.type === "part.updated" ? `p:${event.part.id}` : event.type === "message.updated" ? `m:${event.message.id}` : undefined

/**
 * The bounded buffer between a running turn and its consumer. At most `capacity` events wait.
 *
 * - A `part.delta` joins the delta of the same part waiting last in the buffer, at any fill.
 * - When the buffer is full, a `part.delta` joins the newest waiting delta of its part (its text
 *   then arrives earlier relative to other parts' events, never out of order within its part), and
 *   a `part.updated` / `message.updated` replaces the waiting update of the same part or message
 *   in its place (a slow consumer sees a tool go from pending straight to completed; the newest
 *   state always), unless deltas of that part wait after it.
 * - Only an event that joins or replaces nothing waits for room, suspending the fiber that
 *   publishes it (the step's stream reader, or a tool announcing a new part). Tool updates of a
 *   part whose update still waits never wait, so a consumer that never reads costs at most
 *   `capacity` events of memory, and a turn fits as long as it makes fewer new parts and messages.
 *
 * Once closed (the consumer stopped), offers are dropped and nothing waits.
 */
export const makeTurnBuffer = (capacity: number) => {
  const waiting: Array<SessionEvent> = []
  let closed = false
  let end: Exit.Exit<void, unknown> | undefined
  // woken when an event arrives (the consumer) or when room is made (the producers)
  let arrived = Promise.withResolvers<void>()
  let room = Promise.withResolvers<void>()
  let largest = 0

  const joinDelta = (event: PartDelta, from: number) => {
    for (let i = waiting.length - 1; i >= Math.max(from, 0); i--) {
      const w = waiting[i]!
      if (w.type === "part.delta" && w.partID === event.partID) {
        waiting[i] = { ...w, delta: w.delta + event.delta }
        return true
      }
      // the part's own update after its deltas ends them: nothing joins across it
      if (w.type === "part.updated" && w.part.id === event.partID) return false
    }
    return false
  }

  const replace = (event: SessionEvent) => {
    const key = updateKey(event)
    if (key === undefined) return false
    const at = waiting.findLastIndex((w) => updateKey(w) === key)
    if (at < 0) return false
    // a part whose deltas wait after its update keeps that update: its whole text must not come first
    if (event.type === "part.updated" && waiting.some((w, i) => i > at && w.type === "part.delta" && w.partID === event.part.id)) return false
    waiting[at] = event
    return true
  }

  const push = (event: SessionEvent) => {
    waiting.push(event)
    largest = Math.max(largest, waiting.length)
    arrived.resolve()
  }

  /** Places the event, or says it must wait for room. */
  const place = (event: SessionEvent): boolean => {
    if (closed) return true
    if (event.type === "part.delta" && joinDelta(event, waiting.length - 1)) return true
    if (waiting.length < capacity) {
      push(event)
      return true
    }
    if (event.type === "part.delta" && joinDelta(event, 0)) return true
    return replace(event)
  }

  const offer = (event: SessionEvent): Effect.Effect<void> =>
    Effect.suspend(function loop(): Effect.Effect<void> {
      if (place(event)) return Effect.void
      const wait = room.promise
      return Effect.flatMap(
        Effect.promise(() => wait),
        loop
      )
    })

  /** Everything waiting, at once; waits while nothing is; fails with Done once the producer ended and all was taken. */
  const take: Effect.Effect<readonly [SessionEvent, ...Array<SessionEvent>], unknown> = Effect.suspend(function loop(): Effect.Effect<
    readonly [SessionEvent, ...Array<SessionEvent>],
    unknown
  > {
    if (waiting.length > 0) {
      const batch = waiting.splice(0) as unknown as readonly [SessionEvent, ...Array<SessionEvent>]
      const freed = room
      room = Promise.withResolvers<void>()
      freed.resolve()
      return Effect.succeed(batch)
    }
    if (end !== undefined) return Exit.isSuccess(end) ? Cause.done() : Effect.failCause(end.cause)
    arrived = Promise.withResolvers<void>()
    const wait = arrived.promise
    return Effect.flatMap(
      Effect.promise(() => wait),
      loop
    )
  })

  return {
    offer,
    take,
    /** The producer ended: the consumer gets what waits, then the end. */
    finish: (exit: Exit.Exit<void, unknown>) =>
      Effect.sync(() => {
        end = exit
        arrived.resolve()
      }),
    /** The consumer stopped: offers are dropped and waiting producers go on. */
    close: Effect.sync(() => {
      closed = true
      waiting.length = 0
      room.resolve()
    }),
    /** How many events wait now, and the most that ever waited. */
    size: () => waiting.length,
    largest: () => largest
  }
}

export type TurnBuffer = ReturnType<typeof makeTurnBuffer>

/**
 * One turn as a stream: the session's events from the bus, through a bounded buffer, then
 * `turn.finished`. The turn runs in a fiber of the stream's scope: a consumer that stops (an
 * interrupt, `Stream.take`) interrupts it, and the stream ends only once its cleanup is done.
 */
export const turnStream = <E>(
  bus: Bus["Service"],
  sessionID: string,
  capacity: number,
  turn: Effect.Effect<TurnResult, E>,
  observe?: (buffer: TurnBuffer) => void,
  within?: (id: string) => boolean
): Stream.Stream<SessionEvent, E> =>
  Stream.unwrap(
    Effect.gen(function* () {
      const buffer = makeTurnBuffer(capacity)
      observe?.(buffer)
      const mine = ofSession(sessionID, new Set(), within)
      yield* bus.listen((event) => (mine(event) ? buffer.offer(event) : Effect.void))
      const producer = turn.pipe(
        Effect.flatMap((result) => buffer.offer({ type: "turn.finished", result })),
        Effect.exit,
        Effect.flatMap(buffer.finish)
      )
      const fiber = yield* Effect.forkScoped(producer)
      // Runs before the fiber's own finalizer: nothing the interrupted turn publishes waits for room.
      yield* Effect.addFinalizer(() => Effect.andThen(buffer.close, Fiber.interrupt(fiber)))
      return Stream.fromPull(Effect.succeed(buffer.take as Effect.Effect<readonly [SessionEvent, ...Array<SessionEvent>], E | Cause.Done>))
    })
  )
