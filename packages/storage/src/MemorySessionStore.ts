import { addUsage, emptyUsage, type AssistantMessage, type Message, type MessageWithParts, type Part, type Session } from "@reins/domain"
import { Effect } from "effect"
import { MAX_SUBAGENT_DEPTH, utf8Order, type MemoryState } from "./Database.ts"
import type { ListSessionsOptions, MessagesOptions, SessionStore, SessionTotals } from "./SessionStore.ts"
import { fencePasses, takenOver, WritingClaim } from "./Claim.ts"
import { refersToMissing as missing, sessionNotFound, StoreError } from "./StoreError.ts"

const byId = (a: { readonly id: string }, b: { readonly id: string }) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

// Same order as SQLite: time_updated DESC, id DESC.
const newestFirst = (a: Session, b: Session) => b.time.updated - a.time.updated || byId(b, a)

/** The SessionStore over the memory database's Maps; behaves like the SQLite one (constraints, cascades, order). */
export const makeMemorySessionStore = (state: MemoryState): SessionStore["Service"] => {
  const { sessions, messages: messagesById, parts: partsById, runs } = state

  // Like SQLite: a write under a claim checks it first (one process: nothing comes in between).
  const checkClaim = (sessionIDs: ReadonlyArray<string>) =>
    Effect.flatMap(WritingClaim, (claim) => {
      if (claim === undefined || !sessionIDs.includes(claim.sessionID)) return Effect.void
      const holder = runs.get(claim.sessionID)
      return holder !== undefined && fencePasses(holder, claim) ? Effect.void : Effect.fail(takenOver(claim, holder))
    })

  const createSession = Effect.fn("SessionStore.createSession")(function* (session: Session) {
    if (sessions.has(session.id)) {
      return yield* new StoreError({
        reason: "io",
        message: `Could not create session ${session.id} in memory: one with that id is already stored.`
      })
    }
    sessions.set(session.id, session)
  })

  const updateSession = Effect.fn("SessionStore.updateSession")(function* (session: Session) {
    yield* checkClaim([session.id])
    if (!sessions.has(session.id)) return yield* sessionNotFound(session.id)
    sessions.set(session.id, session)
  })

  const getSession = Effect.fn("SessionStore.getSession")(function* (id: string) {
    const session = sessions.get(id)
    if (session === undefined) return yield* sessionNotFound(id)
    return session
  })

  const listSessions = Effect.fn("SessionStore.listSessions")(function* (options: ListSessionsOptions = {}) {
    const all = [...sessions.values()].filter((session) => options.directory === undefined || session.directory === options.directory).sort(newestFirst)
    const limit = options.limit
    return limit === undefined || limit < 0 ? all : all.slice(0, Math.floor(limit))
  })

  const latestSession = Effect.fn("SessionStore.latestSession")(function* (directory: string) {
    return [...sessions.values()].filter((session) => session.directory === directory && session.parentID === undefined).sort(newestFirst)[0]
  })

  const putMessage = Effect.fnUntraced(function* (message: Message) {
    yield* checkClaim([message.sessionID])
    if (!sessions.has(message.sessionID)) return yield* missing(`save message ${message.id}`, "session")
    messagesById.set(message.id, message)
  })

  // Hot path (every streamed delta): no span.
  const putPart = Effect.fnUntraced(function* (part: Part) {
    yield* checkClaim([part.sessionID])
    if (!messagesById.has(part.messageID)) return yield* missing(`save part ${part.id}`, "message")
    partsById.set(part.id, part)
  })

  const putParts = Effect.fn("SessionStore.putParts")(function* (parts: ReadonlyArray<Part>) {
    // All or nothing, like the SQLite transaction.
    yield* checkClaim(parts.map((part) => part.sessionID))
    const orphan = parts.find((part) => !messagesById.has(part.messageID))
    if (orphan !== undefined) return yield* missing(`save ${parts.length} parts`, "message")
    for (const part of parts) partsById.set(part.id, part)
  })

  const messages = Effect.fn("SessionStore.messages")(function* (sessionID: string, options: MessagesOptions = {}) {
    const from = options.from
    const include = new Set(options.include ?? [])
    const selected = (message: Message) => from === undefined || utf8Order(message.id, from) >= 0 || include.has(message.id)
    const partsByMessage = new Map<string, Array<Part>>()
    for (const part of partsById.values()) {
      if (part.sessionID !== sessionID) continue
      const list = partsByMessage.get(part.messageID)
      if (list === undefined) partsByMessage.set(part.messageID, [part])
      else list.push(part)
    }
    return [...messagesById.values()]
      .filter((message) => message.sessionID === sessionID && selected(message))
      .sort(byId)
      .map((info): MessageWithParts => ({ info, parts: (partsByMessage.get(info.id) ?? []).sort(byId) }))
  })

  const latestSummary = Effect.fn("SessionStore.latestSummary")(function* (sessionID: string) {
    return [...messagesById.values()]
      .filter(
        (m): m is AssistantMessage =>
          m.sessionID === sessionID &&
          m.role === "assistant" &&
          m.summary !== undefined &&
          m.time.completed !== undefined &&
          m.error === undefined &&
          m.reverted == null
      )
      .sort((a, b) => byId(b, a))[0]
  })

  const totals = Effect.fn("SessionStore.totals")(function* (sessionIDs: ReadonlyArray<string>) {
    const own = ownTotals(new Set(sessionIDs))
    // each session's sub-agent sessions, at any depth (bounded like the SQLite query)
    const children = new Map<string, Array<string>>()
    for (const s of sessions.values()) if (s.parentID !== undefined) children.set(s.parentID, [...(children.get(s.parentID) ?? []), s.id])
    const below = new Map<string, Array<string>>()
    for (const id of sessionIDs) {
      const found: Array<string> = []
      let level = children.get(id) ?? []
      for (let depth = 0; level.length > 0 && depth < MAX_SUBAGENT_DEPTH; depth++) {
        found.push(...level)
        level = level.flatMap((c) => children.get(c) ?? [])
      }
      if (found.length > 0) below.set(id, found)
    }
    const theirs = ownTotals(new Set([...below.values()].flat()))
    const out = new Map(own)
    for (const [id, found] of below) {
      let usage = emptyUsage
      let cost = 0
      for (const c of found) {
        const t = theirs.get(c)
        if (t === undefined) continue
        usage = addUsage(usage, t.usage)
        cost += t.cost
      }
      out.set(id, { ...(own.get(id) ?? { messages: 0, steps: 0, usage: emptyUsage, cost: 0 }), subAgents: { sessions: found.length, usage, cost } })
    }
    return out as ReadonlyMap<string, SessionTotals>
  })

  const ownTotals = (wanted: ReadonlySet<string>) => {
    const out = new Map<string, SessionTotals>()
    for (const message of [...messagesById.values()].sort(byId)) {
      if (!wanted.has(message.sessionID)) continue
      const t = out.get(message.sessionID) ?? { messages: 0, steps: 0, usage: emptyUsage, cost: 0 }
      if (message.role === "user") {
        out.set(message.sessionID, { ...t, messages: t.messages + 1 })
        continue
      }
      const u = message.usage
      out.set(message.sessionID, {
        messages: t.messages + 1,
        steps: t.steps + 1,
        usage: {
          input: t.usage.input + u.input,
          output: t.usage.output + u.output,
          reasoning: t.usage.reasoning + u.reasoning,
          cacheRead: t.usage.cacheRead + u.cacheRead,
          cacheWrite: t.usage.cacheWrite + u.cacheWrite
        },
        cost: t.cost + message.cost,
        model: message.model
      })
    }
    return out
  }

  /** The session and its sub-agent sessions, depth-bounded as the stores' queries, each once (even in a cycle of parents). */
  const treeOf = (id: string) => {
    if (!sessions.has(id)) return []
    const found = new Set([id])
    let level = [id]
    for (let depth = 0; level.length > 0 && depth < MAX_SUBAGENT_DEPTH; depth++) {
      const parents = new Set(level)
      level = [...sessions.values()].filter((s) => s.parentID !== undefined && parents.has(s.parentID) && !found.has(s.id)).map((s) => s.id)
      for (const child of level) found.add(child)
    }
    return [...found]
  }
  const sessionTree = Effect.fn("SessionStore.sessionTree")(function* (id: string) {
    return treeOf(id)
  })

  const deleteSession = Effect.fn("SessionStore.deleteSession")(function* (id: string) {
    if (!sessions.has(id)) return yield* sessionNotFound(id)
    const ids = treeOf(id)
    const doomed = new Set(ids)
    for (const one of ids) {
      sessions.delete(one)
      runs.delete(one)
    }
    state.eventLog.events = state.eventLog.events.filter((event) => !doomed.has(event.sessionID))
    for (const question of state.questions.values())
      if (doomed.has(question.sessionID) || doomed.has(question.rootSessionID)) state.questions.delete(question.id)
    const gone = new Set<string>()
    for (const message of messagesById.values()) {
      if (doomed.has(message.sessionID)) gone.add(message.id)
    }
    for (const messageID of gone) messagesById.delete(messageID)
    for (const part of partsById.values()) {
      if (gone.has(part.messageID)) partsById.delete(part.id)
    }
    return ids
  })

  return {
    createSession,
    updateSession,
    getSession,
    listSessions,
    latestSession,
    putMessage,
    putPart,
    putParts,
    messages,
    latestSummary,
    totals,
    sessionTree,
    deleteSession
  }
}
