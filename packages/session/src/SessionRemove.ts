import { Effect } from "effect"
import { isOpenTool, type Session } from "@reins/domain"
import { SessionStore } from "@reins/storage"
import { Jobs, ProcessGroup } from "@reins/tool"
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

/** Stops a turn running on one session of the tree: here, or elsewhere by asking its holder (refused if it does not let go). */
const stopTurn = (stopHere: (sessionID: string) => Effect.Effect<void>) =>
  Effect.fnUntraced(function* (sessionID: string) {
    const runs = yield* SessionRuns
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
    return place._tag
  })

/**
 * Deletes a session with its messages and its sub-agent sessions, the same for every front end: a turn running on
 * any of them is stopped first (here by `stopHere`, in another process by asking its holder through the lease), and
 * they are deleted once released; commands a dead run left running in any of them are stopped, as its next turn would.
 */
export const removeSession = (stopHere: (sessionID: string) => Effect.Effect<void>) =>
  Effect.fnUntraced(function* (sessionID: string) {
    const store = yield* SessionStore
    const appender = yield* EventAppender
    yield* store.getSession(sessionID)
    // the session first: stopping its turn stops the sub-agents it runs; a sub-agent session prompted on its own is stopped too
    const tree = yield* store.sessionTree(sessionID)
    let stopped: Removed["stopped"] = "idle"
    for (const id of tree) {
      const place = yield* stopTurn(stopHere)(id)
      if (stopped === "idle") stopped = place
    }
    // their background jobs go with them
    const jobs = yield* Jobs
    for (const id of tree) yield* jobs.killSession(id)
    const session = yield* store.getSession(sessionID)
    let messages = 0
    let commands = 0
    for (const id of tree) {
      const stored = yield* store.messages(id)
      if (id === sessionID) messages = stored.length
      for (const part of stored.flatMap((m) => m.parts)) {
        const group = isOpenTool(part) && part.state.status === "running" ? ProcessGroup.recordOf(part.state.metadata) : undefined
        if (group !== undefined && (yield* ProcessGroup.reap(group)) === "killed") commands++
      }
    }
    // each one's root, known while they are stored: their deletions reach the followers of their tree
    for (const id of tree) yield* appender.rootOf(id)
    // nothing else lists or deletes sub-agent sessions: they go with it
    const deleted = yield* store.deleteSession(sessionID)
    // their followers (on any process over the log) learn that nothing more comes
    for (const id of deleted) yield* appender.offer({ type: "session.deleted", sessionID: id })
    return { session, messages, subAgents: deleted.length - 1, stopped, commands } satisfies Removed
  })
