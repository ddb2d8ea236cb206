import { Effect } from "effect"
import { type Attachment, Bus, type Ids, type Part, type Session } from "@reins/domain"
import { type MessageWithParts, type SessionRun, SessionStore } from "@reins/storage"
import type { PromptInput } from "./SessionService.ts"
import { type Turn, turnDone } from "./Turn.ts"
import { turnResult } from "./TurnDecision.ts"
import { finalizeUndo } from "./SessionUndo.ts"
import { type AgentsService, MAX_AGENT_DEPTH, type SessionAgent } from "./agent/Agents.ts"

/** What starting a turn needs, resolved when the session service is built. */
export interface StartDeps {
  readonly store: SessionStore["Service"]
  readonly bus: Bus["Service"]
  readonly ids: Ids["Service"]
  readonly turns: Turn["Service"]
  readonly agents: AgentsService
}

/** A user message's file parts (after its text part). */
export const fileParts = (ids: Ids["Service"], sessionID: string, messageID: string, files: ReadonlyArray<Attachment> | undefined) =>
  Effect.forEach(files ?? [], (file) => Effect.map(ids.next("prt"), (id): Part => ({ id, sessionID, messageID, type: "file", ...file })))

/** The user message of the session that carries the prompt id `requestID` (`PromptInput.requestID`), if any. */
export const requestMessage = (messages: ReadonlyArray<MessageWithParts>, requestID: string) =>
  messages.find((m) => m.info.role === "user" && m.info.metadata?.request === requestID)

/** A user message that starts a turn of its own (not one queued into a running turn, nor a compaction's continuation). */
const startsTurn = (m: MessageWithParts) => m.info.role === "user" && m.info.metadata?.queued !== true && m.info.metadata?.compaction_continue !== true

/**
 * The answer to `message`, if its turn ended: that turn's messages run from it to the next user message that starts
 * a turn (compaction summaries left out: a summary is not an answer); ended as T1 says (`turnDone`), cleanly or
 * stopped for a doom loop. A turn that ended on an error it goes on from or that a retry may clear (an interrupt as
 * its session moved or its runner stopped, an overflow being compacted, a provider's failure) is resumed instead.
 */
const answerTo = (sessionID: string, messages: ReadonlyArray<MessageWithParts>, message: MessageWithParts) => {
  const from = messages.indexOf(message)
  const next = messages.findIndex((m, i) => i > from && startsTurn(m))
  const turn = messages.slice(from, next < 0 ? undefined : next).filter((m) => m.info.role !== "assistant" || m.info.summary === undefined)
  const last = turn.findLast((m) => m.info.role === "assistant")
  if (last?.info.role !== "assistant" || !turnDone(turn)) return undefined
  if (last.info.error !== undefined && last.info.error.reason !== "doom_loop" && last.info.error.reason !== "budget") return undefined
  return turnResult(sessionID, 0, turn)
}

/**
 * Starts a turn on the message of `input`, holding the session as `run`: chooses the agent and its model, stores
 * and announces the message, the session's title and agent, says `busy`, then runs the turn. A prompt whose id
 * (`input.requestID`) is in `window` already is not stored again: answered, its answer is given without a step
 * (`steps` 0); else its turn goes on from what is stored (the steps done are not run again; a tool call left running
 * was closed as interrupted, and the model sees that).
 */
export const makeStartTurn = ({ store, bus, ids, turns, agents }: StartDeps) => {
  /** A session's agent from its record: the agent its last turn ran, its parent session and how deep it is. */
  const rememberedAgent = Effect.fnUntraced(function* (session: Session) {
    let depth = 0
    for (let id = session.parentID; id !== undefined && depth <= MAX_AGENT_DEPTH; depth++) {
      id = (yield* store.getSession(id).pipe(Effect.orElseSucceed(() => undefined)))?.parentID
    }
    const agent = session.agent !== undefined ? agents.get(session.agent) : undefined
    if (agent === undefined && session.parentID === undefined) return undefined
    return { agent: agent ?? agents.primary, depth, ...(session.parentID !== undefined ? { parent: session.parentID } : {}) } satisfies SessionAgent
  })

  /** The message of `input`, stored and announced. */
  const storeMessage = Effect.fnUntraced(function* (input: PromptInput, session: Session) {
    const { message: user, part: text } = yield* turns.userMessage(
      session.id,
      input.text,
      input.requestID === undefined ? undefined : { request: input.requestID }
    )
    const parts = [text, ...(yield* fileParts(ids, session.id, user.id, input.files))]
    yield* store.putMessage(user)
    yield* store.putParts(parts)
    yield* turns.announce(user, parts)
    return { info: user, parts } satisfies MessageWithParts
  })

  return Effect.fnUntraced(function* (input: PromptInput, run: SessionRun, known: Set<string>, window: ReadonlyArray<MessageWithParts>) {
    let session = yield* store.getSession(input.sessionID)
    const stored = input.requestID === undefined ? undefined : requestMessage(window, input.requestID)
    // answered already (the reply was lost with the runner that gave it): that answer, no step
    const answered = stored === undefined ? undefined : answerTo(session.id, window, stored)
    if (answered !== undefined) return answered
    // the agent the turn runs, and its model: a sub-agent's session was assigned them by `task`;
    // otherwise the one chosen, else the one its last turn ran (kept on the session), else `build`
    const assigned = agents.of(session.id) ?? (yield* rememberedAgent(session))
    const chosen = input.agent !== undefined ? agents.get(input.agent) : undefined
    const agent = chosen ?? assigned?.agent ?? agents.primary
    agents.assign(session.id, {
      agent,
      depth: assigned?.depth ?? 0,
      model: input.model,
      ...(assigned?.parent !== undefined ? { parent: assigned.parent } : {})
    })
    const turnStart = stored ?? (yield* storeMessage(input, session))
    const now = Math.max(turnStart.info.time.created, session.time.updated)
    const isFirst = session.title === "New session"
    // a prompt after an undo: what was undone stays undone (kept, not sent), and can no longer be redone
    if (session.revert !== undefined && session.revert.conversation !== false)
      yield* finalizeUndo(session.id).pipe(Effect.provideService(SessionStore, store), Effect.provideService(Bus, bus))
    const { revert: _undone, ...current } = session
    session = {
      ...current,
      title: isFirst ? input.text.replace(/\s+/g, " ").slice(0, 60) : session.title,
      agent: agent.name,
      time: { ...session.time, updated: now }
    }
    yield* store.updateSession(session)
    yield* bus.publish({ type: "session.updated", session })
    yield* bus.publish({ type: "session.status", sessionID: session.id, status: "busy" })
    if (input.onBusy !== undefined) yield* input.onBusy
    // the agent is held in memory only while its turn runs (a server runs many sessions)
    return yield* turns.run(session, turnStart, input.model, run, known).pipe(Effect.ensuring(Effect.sync(() => agents.release(session.id))))
  })
}
