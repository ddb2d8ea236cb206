import type { LogEvent } from "@reins/domain"
import { Context, type Effect, type Stream } from "effect"
import type { StoreError } from "./StoreError.ts"

/** An event as the log stores it: its place in the log, its session (and that session's root) and its number there. */
export interface LoggedEvent {
  /** The global log position: > 0, increasing in commit order (a reader tailing `id > last` never skips one). */
  readonly id: number
  readonly sessionID: string
  /** The top-level session: `sessionID` followed up its `parentID`s (itself for a top-level session). */
  readonly rootSessionID: string
  /** The event's number in its session: 1, 2, … with no gaps. */
  readonly seq: number
  /** When it was appended (ms). */
  readonly time: number
  readonly event: LogEvent
}

/** An event to append: everything of a `LoggedEvent` but the numbers the log gives it. */
export interface EventToAppend {
  readonly sessionID: string
  readonly rootSessionID: string
  readonly time: number
  readonly event: LogEvent
}

/** Which events `read` returns: those after a position, of one session or of one session tree, at most `limit`. */
export interface ReadEventsOptions {
  /** Events with `id > after` (0: from the start). */
  readonly after: number
  readonly sessionID?: string
  readonly rootSessionID?: string
  readonly limit?: number
}

/**
 * The durable event log: every event of every session, in one global order, stored with the
 * session data. Appended in batches (see the runtime's appender); read from any position by any
 * process on the same database; `wakeups` says when there may be more to read.
 */
export class EventLog extends Context.Service<
  EventLog,
  {
    /**
     * Appends a batch in one transaction: ids in batch order, each session's `seq` continuing from its
     * last. Under a `WritingClaim` the claim is checked in the same transaction ("taken-over": nothing is appended).
     */
    append(batch: ReadonlyArray<EventToAppend>): Effect.Effect<ReadonlyArray<LoggedEvent>, StoreError>
    /** The events after `options.after`, in id order (of one session or tree when asked), at most `limit`. */
    read(options: ReadEventsOptions): Effect.Effect<ReadonlyArray<LoggedEvent>, StoreError>
    /** The newest id (0 when the log is empty). */
    last(): Effect.Effect<number, StoreError>
    /** The oldest id still stored (0 when the log is empty): a reader asking for events before it missed some (retention). */
    first(): Effect.Effect<number, StoreError>
    /** Deletes the events appended before `beforeTime` (ms); returns how many. */
    prune(beforeTime: number): Effect.Effect<number, StoreError>
    /**
     * Emits after new events may have been appended, by this process or another on the same database
     * (memory: on append; SQLite: on its own appends and by polling `PRAGMA data_version`). Readers then `read`.
     */
    readonly wakeups: Stream.Stream<void>
  }
>()("reins/storage/EventLog") {}
