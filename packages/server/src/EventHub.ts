import { Cause, Context, Effect } from "effect"
import type { LogEvent } from "@reins/domain"
import type { LoggedEvent } from "@reins/storage"

/** What `GET /event` streams: every event of the log (the sessions' events, and the end of each turn a server ran). */
export type ServerEvent = LogEvent

/** How much the hub keeps: the replay buffer (events), each client's queue (events), and how many clients at once. */
export const HubLimits = Context.Reference<HubLimits>("reins/server/HubLimits", {
  defaultValue: () => ({ replay: 10_000, replayBytes: 64 * 1024 * 1024, clientQueue: 1_000, clients: 100, backfill: 5_000, backfillBytes: 8 * 1024 * 1024 })
})

/**
 * The replay buffer's bounds (events, and characters of their frames: a tool's large output counts as large),
 * each client's queue (events), and the clients connected at once (each holds a socket and a queue).
 */
export interface HubLimits {
  readonly replay: number
  readonly replayBytes?: number
  readonly clientQueue: number
  readonly clients?: number
  /** The most events (and characters of them) one client's replay reads from the log at once; past it the client is told where to resume. */
  readonly backfill?: number
  readonly backfillBytes?: number
}

/** One logged event as the hub keeps it: its log position, its session and root session, and its SSE frame (encoded once for every client). */
interface Entry {
  readonly id: number
  readonly sessionID: string
  readonly rootSessionID: string
  readonly frame: string
}

/** An SSE frame: `id`, `event` and one line of JSON data. Frames the server says about itself carry no id. */
export const frame = (type: string, data: unknown, id?: number) => `${id === undefined ? "" : `id: ${id}\n`}event: ${type}\ndata: ${JSON.stringify(data)}\n\n`

/** The most characters of frames handed to a client's socket at once (one frame larger than this goes alone). */
export const BATCH_CHARS = 256 * 1024

/** One connected client: the replay it asked for, then a bounded queue of live frames. */
export interface Subscriber {
  /** The next frames waiting (replay first, at most `BATCH_CHARS` of them); waits while none are; ends (Cause.Done) once closed and drained. */
  readonly take: Effect.Effect<ReadonlyArray<string>, Cause.Done>
  /** `take` as a promise (undefined once closed and drained), one call at a time: the SSE body reads it with no fiber between hub and socket. */
  readonly next: () => Promise<ReadonlyArray<string> | undefined>
  /** The client went away: it is forgotten and nothing more is queued for it. */
  readonly close: () => void
  /** Frames waiting now (live queue only). */
  readonly waiting: () => number
}

/** Where a client's replay must come from the log: the events after `after`, up to and including `through`. */
export interface Missing {
  readonly after: number
  readonly through: number
}

/** What the log says when a client connects: its oldest stored id and its newest (both 0 when empty). */
export interface LogBounds {
  readonly first: number
  readonly last: number
}

/**
 * A process's view of the event log for its SSE clients: fed in log order (`publish`) by the one
 * reader the process keeps on the log, it keeps the newest events in a bounded ring (the last
 * `replay` events, fewer when their frames pass `replayBytes`) and hands each client the events
 * after its `Last-Event-ID` (log positions: the same on every process over the database) — from
 * the ring, and what the ring no longer holds from the log (`Missing`, read by `ServerEvents`) —
 * then live ones through a bounded queue: a client whose queue is full when an event arrives is
 * sent `server.disconnected` (with the id to resume from) and closed. `server.gap` only when the
 * log itself no longer has the events asked for (retention). Publishing never waits.
 */
export const makeEventHub = (limits: HubLimits) => {
  const capacity = Math.max(1, limits.replay)
  const maxBytes = limits.replayBytes ?? Number.POSITIVE_INFINITY
  // the ring: entries in id order from `head`; everything after `covered` up to `last` is in it
  let ring: Array<Entry> = []
  let head = 0
  let covered = 0
  let last = 0
  let bytes = 0
  const parents = new Map<string, string>()
  const clients = new Set<Client>()

  interface Client {
    readonly sessionID: string | undefined
    replay: Array<string>
    queue: Array<string>
    ended: boolean
    /** The replay from the log has not arrived yet: nothing is handed over before it. */
    filling: boolean
    delivered: number
    wake: ReturnType<typeof Promise.withResolvers<void>>
  }

  const size = () => ring.length - head

  const entryOf = (logged: LoggedEvent): Entry => {
    const event = logged.event
    if ((event.type === "session.created" || event.type === "session.updated") && event.session.parentID !== undefined)
      parents.set(event.session.id, event.session.parentID)
    return { id: logged.id, sessionID: logged.sessionID, rootSessionID: logged.rootSessionID, frame: frame(event.type, event, logged.id) }
  }

  /** The session or one of its sub-agents' sessions (its tree when it is a root; else followed up to 8 levels). */
  const within = (root: string, entry: Entry) => {
    if (entry.rootSessionID === root) return true
    let id: string | undefined = entry.sessionID
    for (let depth = 0; id !== undefined && depth <= 8; depth++) {
      if (id === root) return true
      id = parents.get(id)
    }
    return false
  }

  const wants = (client: Client, entry: Entry) => client.sessionID === undefined || within(client.sessionID, entry)

  const end = (client: Client) => {
    client.ended = true
    clients.delete(client)
    client.wake.resolve()
  }

  const evictOldest = () => {
    const dropped = ring[head]!
    bytes -= dropped.frame.length
    covered = dropped.id
    head++
    // compact now and then rather than shifting on every event
    if (head > 1024 && head * 2 > ring.length) {
      ring = ring.slice(head)
      head = 0
    }
  }

  /**
   * Adds the next event of the log (in id order; one already seen is ignored) and hands it to every client that wants it.
   * `shown: false` (another project's event): its position is passed, and no client gets it.
   */
  const publish = (logged: LoggedEvent, shown = true): void => {
    if (logged.id <= last) return
    if (!shown) {
      if (size() === 0) covered = logged.id
      last = logged.id
      return
    }
    const entry = entryOf(logged)
    if (size() === 0) covered = last
    last = entry.id
    ring.push(entry)
    bytes += entry.frame.length
    while (size() > capacity || (bytes > maxBytes && size() > 1)) evictOldest()
    for (const client of clients) {
      if (entry.id <= client.delivered && !client.filling) continue
      if (!wants(client, entry)) continue
      if (client.queue.length >= limits.clientQueue) {
        const reason =
          `the client fell behind: ${client.queue.length} events waited to be read (limit ${limits.clientQueue}). ` +
          `Reconnect with Last-Event-ID: ${client.delivered} to get the rest from the event log.`
        client.queue = [frame("server.disconnected", { type: "server.disconnected", reason, lastEventId: client.delivered })]
        client.replay = []
        client.filling = false
        end(client)
        continue
      }
      client.queue.push(entry.frame)
      if (!client.filling) client.wake.resolve()
    }
    // a deleted session's parent is not asked about again once its deletion went out (a long-lived server would keep them all)
    if (logged.event.type === "session.deleted") parents.delete(logged.sessionID)
  }

  /**
   * The frames to write next, replay first: up to `BATCH_CHARS` of them (at least one). A batch is copied
   * into one buffer for the socket, and a client that is not reading keeps it: a whole replay
   * per client that reconnects with an old id would be that much memory each.
   */
  const takeBatch = (client: Client): Array<string> => {
    const batch: Array<string> = []
    let size = 0
    for (const source of [client.replay, client.queue]) {
      let count = 0
      while (count < source.length && (batch.length === 0 || size + source[count]!.length <= BATCH_CHARS)) {
        size += source[count]!.length
        batch.push(source[count]!)
        count++
      }
      source.splice(0, count)
      if (source.length > 0) break
    }
    return batch
  }

  /** The index in the ring of the first entry with `id > after`. */
  const ringAfter = (after: number) => {
    let lo = head
    let hi = ring.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (ring[mid]!.id <= after) lo = mid + 1
      else hi = mid
    }
    return lo
  }

  /**
   * A client: `server.connected` first, then, with `lastEventId`, the events after it (`server.gap` first
   * when the log no longer has some: `bounds.first` is past it; or when the id is past anything the log
   * gave), then live events. The events the ring no longer holds are `missing`: the caller reads them
   * from the log and hands them to `fill` (the client gets nothing before that).
   */
  const subscribe = (options: {
    readonly sessionID?: string | undefined
    readonly lastEventId?: number | undefined
    readonly bounds?: LogBounds | undefined
  }): Subscriber & {
    readonly missing: Missing | undefined
    /** Hands over the events read for `missing`; with `cut`, the replay stopped there: the client is told to resume from it and ends. */
    fill(events: ReadonlyArray<LoggedEvent>, cut?: number): void
  } => {
    const bounds = options.bounds ?? { first: 0, last }
    let after = options.lastEventId
    const client: Client = {
      sessionID: options.sessionID,
      replay: [],
      queue: [],
      ended: false,
      filling: false,
      delivered: last,
      wake: Promise.withResolvers<void>()
    }
    client.replay.push(frame("server.connected", { type: "server.connected", lastEventId: Math.max(last, bounds.last) }))
    let missing: Missing | undefined
    // from now: the log's now, which may be ahead of what this process has read
    if (after === undefined) client.delivered = Math.max(last, bounds.last)
    else {
      if (after > Math.max(last, bounds.last)) {
        // an id the log never gave (another database): from now on
        client.replay.push(frame("server.gap", { type: "server.gap", from: after, oldest: bounds.first }))
      } else if (after > last) {
        // the client saw events this process has not read yet: they come live, the ones it saw skipped
        client.delivered = after
      } else {
        if (bounds.first > 0 && after + 1 < bounds.first) {
          client.replay.push(frame("server.gap", { type: "server.gap", from: after, oldest: bounds.first }))
          after = bounds.first - 1
        }
        client.delivered = after
        if (after < covered) {
          missing = { after, through: covered }
          client.filling = true
        }
        for (let i = ringAfter(after); i < ring.length; i++) {
          const entry = ring[i]!
          if (wants(client, entry)) client.replay.push(entry.frame)
        }
      }
    }
    clients.add(client)
    /** The next batch if there is one, "ended" once closed and drained, else "wait" (after which `client.wake` is resolved). */
    const poll = (): ReadonlyArray<string> | "ended" | "wait" => {
      if (!client.filling && (client.replay.length > 0 || client.queue.length > 0)) {
        const batch = takeBatch(client)
        for (let i = batch.length - 1; i >= 0; i--) {
          const id = /^id: (\d+)\n/.exec(batch[i]!)
          if (id) {
            client.delivered = Number(id[1])
            break
          }
        }
        return batch
      }
      if (client.ended && !client.filling) return "ended"
      client.wake = Promise.withResolvers<void>()
      return "wait"
    }
    // a batch is taken only when asked for: a take interrupted while it waits takes nothing
    const take: Effect.Effect<ReadonlyArray<string>, Cause.Done> = Effect.suspend(function loop(): Effect.Effect<ReadonlyArray<string>, Cause.Done> {
      const got = poll()
      if (got === "ended") return Cause.done()
      if (got !== "wait") return Effect.succeed(got)
      const wait = client.wake.promise
      return Effect.flatMap(
        Effect.promise(() => wait),
        loop
      )
    })
    // one at a time (a web stream's pull is never called again before the last one settled)
    const next = async (): Promise<ReadonlyArray<string> | undefined> => {
      for (;;) {
        const got = poll()
        if (got === "ended") return undefined
        if (got !== "wait") return got
        await client.wake.promise
      }
    }
    return {
      take,
      next,
      missing,
      fill: (events, cut) => {
        if (!client.filling) return
        // after the gap frame (if any), before the ring's part of the replay
        const at = client.replay.findIndex((f) => f.startsWith("id: "))
        const frames = events.flatMap((logged) => {
          if (missing === undefined || logged.id <= missing.after || logged.id > missing.through) return []
          const entry = entryOf(logged)
          return wants(client, entry) ? [entry.frame] : []
        })
        if (cut !== undefined) {
          // the rest of the replay is read by the next connection, from where this one stopped
          const reason = `the replay is larger than one connection reads from the event log. Reconnect with Last-Event-ID: ${cut} to get the rest.`
          client.replay = [
            ...client.replay.slice(0, at === -1 ? client.replay.length : at),
            ...frames,
            frame("server.disconnected", { type: "server.disconnected", reason, lastEventId: cut })
          ]
          client.queue = []
          client.filling = false
          end(client)
          return
        }
        client.replay.splice(at === -1 ? client.replay.length : at, 0, ...frames)
        client.filling = false
        client.wake.resolve()
      },
      close: () => {
        client.queue = []
        client.replay = []
        client.filling = false
        end(client)
      },
      waiting: () => client.queue.length
    }
  }

  /** Ends every client's stream after what it has waiting, with `server.disconnected` and the reason. */
  const closeAll = (reason: string) => {
    for (const client of [...clients]) {
      client.queue.push(frame("server.disconnected", { type: "server.disconnected", reason, lastEventId: last }))
      client.filling = false
      end(client)
    }
  }

  return {
    publish,
    subscribe,
    closeAll,
    /** Starts the hub at a log position: events after it are live (a process starting on a log that already has events). */
    start: (position: number) => {
      if (last === 0 && size() === 0) {
        last = position
        covered = position
      }
    },
    /** The id of the last event this process has read from the log (0: none yet). */
    latest: () => last,
    /** The oldest id still in the ring (the next one when it is empty). */
    oldest: () => (size() > 0 ? ring[head]!.id : last + 1),
    /** Clients connected now. */
    clients: () => clients.size,
    /** Whether as many clients as the limit allows are connected: the next must wait for one to go. */
    full: () => clients.size >= (limits.clients ?? Number.POSITIVE_INFINITY),
    limits
  }
}

export type EventHub = ReturnType<typeof makeEventHub>
