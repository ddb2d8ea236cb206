import type { AssistantMessage, Message, MessageWithParts, ModelRef, Part, Session, Usage } from "@reins/domain"
import { Context, type Effect } from "effect"
import type { StoreError } from "./StoreError.ts"

/** Filters for `SessionStore.listSessions`. */
export interface ListSessionsOptions {
  /** Only sessions started in this directory. */
  readonly directory?: string
  /** At most this many sessions (the newest). */
  readonly limit?: number
}

/** Which messages `SessionStore.messages` reads: all of them unless `from` is set. */
export interface MessagesOptions {
  /** Only messages whose id is ≥ this one (a compaction boundary)… */
  readonly from?: string
  /** …and, whatever their id, these (the pinned messages before the boundary). */
  readonly include?: ReadonlyArray<string>
}

/** What a session has cost so far: its messages, and the tokens and cost of its assistant messages (one per step). */
export interface SessionTotals {
  /** User and assistant messages. */
  readonly messages: number
  /** Assistant messages, i.e. model steps (compaction summaries included). */
  readonly steps: number
  readonly usage: Usage
  readonly cost: number
  /** The model of the newest assistant message; absent before the first. */
  readonly model?: ModelRef
  /**
   * The sessions its `task` calls started, at any depth (T19), and what they used; absent when it
   * started none. Not in `usage` and `cost`, which are its own steps'.
   */
  readonly subAgents?: { readonly sessions: number; readonly usage: Usage; readonly cost: number }
}

/**
 * Sessions, messages and parts; every write is atomic. Under a `WritingClaim`, writes to that
 * claim's session also check the claim (stored by `RunClaims` in the same database: every adapter of `Storage` builds all its services over one connection) in the same transaction.
 */
export class SessionStore extends Context.Service<
  SessionStore,
  {
    /** Stores a new session; fails if the id is taken. */
    createSession(session: Session): Effect.Effect<void, StoreError>
    /** Replaces a stored session (title, times, …); "not-found" if it is not stored. */
    updateSession(session: Session): Effect.Effect<void, StoreError>
    /** The session with this id; "not-found" if there is none. */
    getSession(id: string): Effect.Effect<Session, StoreError>
    /** Sessions, most recently updated first. */
    listSessions(options?: ListSessionsOptions): Effect.Effect<ReadonlyArray<Session>, StoreError>
    /** The most recently updated top-level session (no parent) of a directory, if any. */
    latestSession(directory: string): Effect.Effect<Session | undefined, StoreError>
    /** Inserts or replaces a message; its session must be stored. Leaves its parts alone. */
    putMessage(message: Message): Effect.Effect<void, StoreError>
    /** Inserts or replaces one part (one cheap prepared statement: called on every streamed delta). */
    putPart(part: Part): Effect.Effect<void, StoreError>
    /** Inserts or replaces many parts in one transaction: all are saved or none. */
    putParts(parts: ReadonlyArray<Part>): Effect.Effect<void, StoreError>
    /** A session's messages (all, or those `options` selects) ordered by id, each with its parts ordered by id. */
    messages(sessionID: string, options?: MessagesOptions): Effect.Effect<ReadonlyArray<MessageWithParts>, StoreError>
    /** A session's newest complete compaction summary (finished, no error, not undone), without parts; indexed. */
    latestSummary(sessionID: string): Effect.Effect<AssistantMessage | undefined, StoreError>
    /**
     * The totals of these sessions, read from their messages without their parts, with their
     * sub-agents' sessions summed apart; a session with no message and no sub-agent has none.
     */
    totals(sessionIDs: ReadonlyArray<string>): Effect.Effect<ReadonlyMap<string, SessionTotals>, StoreError>
    /** Deletes a session with its messages and parts; "not-found" if it is not stored. */
    /** A session's id and its sub-agent sessions' (at any depth, bounded like the totals), each once, the session's first; none when it is not stored. */
    sessionTree(id: string): Effect.Effect<ReadonlyArray<string>, StoreError>
    /**
     * Deletes a session and its sub-agent sessions (at any depth, bounded like the totals) with their messages,
     * parts, leases, events and waiting questions, in one transaction: the ids deleted, the session's first.
     */
    deleteSession(id: string): Effect.Effect<ReadonlyArray<string>, StoreError>
  }
>()("reins/storage/SessionStore") {}
