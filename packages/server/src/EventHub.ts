import { Cause, Context, Effect } from "effect"
import type { SessionEvent } from "@reins/domain"

/** What `GET /event` streams: every session event, plus the end of each turn the server ran. */
export type ServerEvent =
  | SessionEvent
  | { readonly type: "turn.failed"; readonly sessionID: string; readonly error: { readonly tag: string; readonly message: string } }

/** How much the hub keeps: the replay buffer (events), each client's queue (events), and how many clients at once. */
export const HubLimits = Context.Reference<HubLimits>("reins/server/HubLimits", {
  defaultValue: () => ({ replay: 10_000, replayBytes: 64 * 1024 * 1024, clientQueue: 1_000, clients: 100 })
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
}

/** One published event: its server-wide id, the session it belongs to, and its SSE frame (encoded once for every client). */
interface Entry {
  readonly id: number
  readonly sessionID: string | undefined
  readonly frame: string
}

/** An SSE frame: `id`, `event` and one line of JSON data. Frames the server says about itself carry no id. */
export const frame = (type: string, data: unknown, id?: number) => `${id === undefined ? "" : `id: ${id}\n`}event: ${type}\ndata: ${JSON.stringify(data)}\n\n`

/** The most characters of frames handed to a client's socket at once (one frame larger than this goes alone). */
export const BATCH_CHARS = 256 * 1024

/** Part ids remembered to place a `part.delta` (which names only its part) in its session; the oldest are forgotten past this. */
const PART_MEMORY = 100_000

/** One connected client: the replay it asked for, then a bounded queue of live frames. */
export interface Subscriber {
  /** The next frames waiting (replay first, at most `BATCH_CHARS` of them); waits while none are; ends (Cause.Done) once closed and drained. */
  readonly take: Effect.Effect<ReadonlyArray<string>, Cause.Done>
  /** The client went away: it is forgotten and nothing more is queued for it. */
  readonly close: () => void
  /** Frames waiting now (live queue only). */
  readonly waiting: () => number
}

/**
 * The server's event stream: every event gets the next server-wide id and is kept in a bounded
 * replay buffer (a ring of the last `replay` events, fewer when their frames pass `replayBytes`). Clients get the events after their
 * `Last-Event-ID` from it (a `server.gap` frame first when some of those are gone), then live
 * ones through a bounded queue: a client whose queue is full when an event arrives is sent
 * `server.disconnected` (with the id to resume from) and closed. Publishing never waits.
 */
export const makeEventHub = (limits: HubLimits) => {
  const ring: Array<Entry | undefined> = new Array(Math.max(1, limits.replay))
  const maxBytes = limits.replayBytes ?? Number.POSITIVE_INFINITY
  let last = 0
  // the oldest id kept: the ring's size bounds it, and so do the bytes it holds
  let floor = 1
  let bytes = 0
  const parents = new Map<string, string>()
  const partSession = new Map<string, string>()
  const clients = new Set<Client>()

  interface Client {
    readonly sessionID: string | undefined
    replay: Array<string>
    queue: Array<string>
    ended: boolean
    delivered: number
    wake: ReturnType<typeof Promise.withResolvers<void>>
  }

  const oldest = () => Math.max(floor, last - ring.length + 1)

  const remember = (partID: string, sessionID: string) => {
    partSession.set(partID, sessionID)
    if (partSession.size > PART_MEMORY) {
      for (const key of partSession.keys()) {
        partSession.delete(key)
        if (partSession.size <= PART_MEMORY * 0.9) break
      }
    }
  }

  const sessionOf = (event: ServerEvent): string | undefined => {
    switch (event.type) {
      case "session.created":
      case "session.updated":
        if (event.session.parentID !== undefined) parents.set(event.session.id, event.session.parentID)
        return event.session.id
      case "message.updated":
        return event.message.sessionID
      case "part.updated":
        remember(event.part.id, event.part.sessionID)
        return event.part.sessionID
      case "part.delta":
        return partSession.get(event.partID)
      case "turn.finished":
        return event.result.sessionID
      default:
        return "sessionID" in event ? event.sessionID : undefined
    }
  }

  /** The session or one of its sub-agents' sessions (followed up to 8 levels). */
  const within = (root: string, sessionID: string | undefined) => {
    let id = sessionID
    for (let depth = 0; id !== undefined && depth <= 8; depth++) {
      if (id === root) return true
      id = parents.get(id)
    }
    return false
  }

  const wants = (client: Client, entry: Entry) => client.sessionID === undefined || within(client.sessionID, entry.sessionID)

  const end = (client: Client) => {
    client.ended = true
    clients.delete(client)
    client.wake.resolve()
  }

  /** Publishes an event to the buffer and every client that wants it; returns its id. */
  const publish = (event: ServerEvent): number => {
    const entry: Entry = { id: ++last, sessionID: sessionOf(event), frame: frame(event.type, event, last) }
    const replaced = ring[entry.id % ring.length]
    if (replaced !== undefined && replaced.id >= floor) bytes -= replaced.frame.length
    ring[entry.id % ring.length] = entry
    bytes += entry.frame.length
    floor = Math.max(floor, last - ring.length + 1)
    while (bytes > maxBytes && floor < last) {
      const dropped = ring[floor % ring.length]
      if (dropped !== undefined && dropped.id === floor) {
        bytes -= dropped.frame.length
        ring[floor % ring.length] = undefined
      }
      floor++
    }
    for (const client of clients) {
      if (!wants(client, entry)) continue
      if (client.queue.length >= limits.clientQueue) {
        const reason =
          `the client fell behind: ${client.queue.length} events waited to be read (limit ${limits.clientQueue}). ` +
          `Reconnect with Last-Event-ID: ${client.delivered} to get the rest from the replay buffer.`
        client.queue = [frame("server.disconnected", { type: "server.disconnected", reason, lastEventId: client.delivered })]
        client.replay = []
        end(client)
        continue
      }
      client.queue.push(entry.frame)
      client.wake.resolve()
    }
    return entry.id
  }

  /**
   * The frames to write next, replay first: up to `BATCH_CHARS` of them (at least one). A batch is copied
   * into one buffer for the socket, and a client that is not reading keeps it: a whole replay buffer (64 MiB)
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

  /**
   * A client: `server.connected` first, then, with `lastEventId`, the events after it still in the
   * buffer (`server.gap` first when some are gone, or the id is not one of this server's), then live events.
   */
  const subscribe = (options: { readonly sessionID?: string | undefined; readonly lastEventId?: number | undefined }): Subscriber => {
    const client: Client = {
      sessionID: options.sessionID,
      replay: [],
      queue: [],
      ended: false,
      delivered: options.lastEventId ?? last,
      wake: Promise.withResolvers<void>()
    }
    client.replay.push(frame("server.connected", { type: "server.connected", lastEventId: last }))
    const after = options.lastEventId
    if (after !== undefined) {
      const first = oldest()
      if (after > last || (after + 1 < first && last > 0))
        client.replay.push(frame("server.gap", { type: "server.gap", from: after, oldest: last === 0 ? 0 : first }))
      // an id this server never gave (a client of an earlier run of it): everything it has
      for (let id = after > last ? first : Math.max(after + 1, first); id <= last; id++) {
        const entry = ring[id % ring.length]
        if (entry !== undefined && entry.id === id && wants(client, entry)) client.replay.push(entry.frame)
      }
    }
    clients.add(client)
    const take: Effect.Effect<ReadonlyArray<string>, Cause.Done> = Effect.suspend(function loop(): Effect.Effect<ReadonlyArray<string>, Cause.Done> {
      if (client.replay.length > 0 || client.queue.length > 0) {
        const batch = takeBatch(client)
        for (let i = batch.length - 1; i >= 0; i--) {
          const id = /^id: (\d+)\n/.exec(batch[i]!)
          if (id) {
            client.delivered = Number(id[1])
            break
          }
        }
        return Effect.succeed(batch)
      }
      if (client.ended) return Cause.done()
      client.wake = Promise.withResolvers<void>()
      const wait = client.wake.promise
      return Effect.flatMap(
        Effect.promise(() => wait),
        loop
      )
    })
    return {
      take,
      close: () => {
        client.queue = []
        client.replay = []
        end(client)
      },
      waiting: () => client.queue.length
    }
  }

  /** Ends every client's stream after what it has waiting, with `server.disconnected` and the reason. */
  const closeAll = (reason: string) => {
    for (const client of [...clients]) {
      client.queue.push(frame("server.disconnected", { type: "server.disconnected", reason, lastEventId: last }))
      end(client)
    }
  }

  return {
    publish,
    subscribe,
    closeAll,
    /** The id of the last event published (0: none yet). */
    latest: () => last,
    /** The oldest id still in the replay buffer. */
    oldest,
    /** Clients connected now. */
    clients: () => clients.size,
    /** Whether as many clients as the limit allows are connected: the next must wait for one to go. */
    full: () => clients.size >= (limits.clients ?? Number.POSITIVE_INFINITY),
    limits
  }
}

export type EventHub = ReturnType<typeof makeEventHub>
