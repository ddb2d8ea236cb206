import { Effect } from "effect"
import type { Attachment, Bus, Ids, Part, Session } from "@reins/domain"
import type { SessionRun, SessionStore } from "@reins/storage"
import type { PromptInput } from "./SessionService.ts"
import type { Turn } from "./Turn.ts"
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

/**
 * Starts a turn on the message of `input`, holding the session as `run`: chooses the agent and its model, stores
 * and announces the message, the session's title and agent, says `busy`, then runs the turn.
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

  return Effect.fnUntraced(function* (input: PromptInput, run: SessionRun, known: Set<string>) {
    let session = yield* store.getSession(input.sessionID)
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
    const { message: user, part: text } = yield* turns.userMessage(session.id, input.text)
    const parts = [text, ...(yield* fileParts(ids, session.id, user.id, input.files))]
    yield* store.putMessage(user)
    yield* store.putParts(parts)
    yield* turns.announce(user, parts)
    const now = user.time.created
    const isFirst = session.title === "New session"
    session = {
      ...session,
      title: isFirst ? input.text.replace(/\s+/g, " ").slice(0, 60) : session.title,
      agent: agent.name,
      time: { ...session.time, updated: now }
    }
    yield* store.updateSession(session)
    yield* bus.publish({ type: "session.updated", session })
    yield* bus.publish({ type: "session.status", sessionID: session.id, status: "busy" })
    // the agent is held in memory only while its turn runs (a server runs many sessions)
    return yield* turns.run(session, { info: user, parts }, input.model, run, known).pipe(Effect.ensuring(Effect.sync(() => agents.release(session.id))))
  })
}
