import { Effect } from "effect"
import { isOpenTool, type Session } from "@reins/domain"
import { SessionStore } from "@reins/storage"
import { ProcessGroup } from "@reins/tool"
import { SessionBusyError } from "./Errors.ts"
import { EventAppender } from "./EventAppender.ts"
import { busyMessage } from "./Runs.ts"
import { SessionRuns } from "./SessionRuns.ts"
import { placeOf, waitReleased } from "./SessionPlace.ts"

/** What `remove` did: the session deleted, after its running turn was stopped where it ran. */
export interface Removed {
  readonly session: Session
  /** How many messages went with it (its own). */
  readonly messages: number
  /** How many sub-agent sessions (at any depth) went with it. */
  readonly subAgents: number
  /** Where a running turn was stopped first: in this process, in another one, or none ran ("idle"). */
  readonly stopped: "here" | "elsewhere" | "idle"
  /** Commands a run that died left running (bash's process groups), stopped. */
  readonly commands: number
}

/**
 * Deletes a session with its messages, the same for every front end: a turn running on it is
 * stopped first (here by `stopHere`, in another process by asking its holder through the lease), and the session
 * is deleted once released; commands a dead run left running are stopped, as its next turn would.
 */
export const removeSession = (stopHere: (sessionID: string) => Effect.Effect<void>) =>
  Effect.fnUntraced(function* (sessionID: string) {
    const store = yield* SessionStore
    const runs = yield* SessionRuns
    yield* store.getSession(sessionID)
    const place = yield* placeOf(sessionID)
    if (place._tag === "here") yield* stopHere(sessionID)
    if (place._tag === "elsewhere") {
      const busy = busyMessage(place.run, runs.self)
      // its holder sees the request within a second and stops its turn (its lease released), as Ctrl+C there would
      yield* runs.abort(sessionID)
      if (!(yield* waitReleased(sessionID)))
        return yield* new SessionBusyError({
          sessionID,
          message: `${busy} It was asked to stop but still holds the session (is it frozen?): stop it there, or try again once its lease has expired.`
        })
    }
    const session = yield* store.getSession(sessionID)
    const messages = yield* store.messages(sessionID)
    let commands = 0
    for (const part of messages.flatMap((m) => m.parts)) {
      const group = isOpenTool(part) && part.state.status === "running" ? ProcessGroup.recordOf(part.state.metadata) : undefined
      if (group !== undefined && (yield* ProcessGroup.reap(group)) === "killed") commands++
    }
    // its sub-agent sessions go with it: nothing else lists or deletes them
    const deleted = yield* store.deleteSession(sessionID)
    // their followers (on any process over the log) learn that nothing more comes
    const appender = yield* EventAppender
    for (const id of deleted) yield* appender.offer({ type: "session.deleted", sessionID: id })
    return { session, messages: messages.length, subAgents: deleted.length - 1, stopped: place._tag, commands } satisfies Removed
  })
