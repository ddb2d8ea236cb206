import type { AssistantMessage, Message, Part, PermissionGrant, Session, UserMessage } from "@reins/domain"
import { Effect } from "effect"
import type { ListSessionsOptions, MessagesOptions, MessageWithParts, RunIsLive, SessionRun, SessionStore } from "./SessionStore.ts"
import { sameClaim, takenOver, WritingClaim } from "./Claim.ts"
import { sessionNotFound, StoreError } from "./StoreError.ts"

const byId = (a: { readonly id: string }, b: { readonly id: string }) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

// Same order as SQLite: time_updated DESC, id DESC.
const newestFirst = (a: Session, b: Session) => b.time.updated - a.time.updated || byId(b, a)

// SQLite compares TEXT as UTF-8 bytes (code point order); JS `<` compares UTF-16 code units.
const utf8Order = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b))

// Same order as SQLite: project, time_created, id.
const grantOrder = (a: PermissionGrant, b: PermissionGrant) =>
  utf8Order(a.project, b.project) || a.time.created - b.time.created || utf8Order(a.id, b.id)

const grantKey = (grant: PermissionGrant) => JSON.stringify([grant.project, grant.permission, grant.pattern])

const missing = (action: string, what: string) =>
  new StoreError({ reason: "io", message: `Could not ${action} in memory: it refers to a ${what} that is not stored.` })

/** A SessionStore over Maps that behaves like the SQLite one (constraints, cascades, order). */
export const makeMemoryStore = (): SessionStore["Service"] => {
  const sessions = new Map<string, Session>()
  const messagesById = new Map<string, Message>()
  const partsById = new Map<string, Part>()
  const grantsById = new Map<string, PermissionGrant>()
  const runs = new Map<string, SessionRun>()

  // Like SQLite: a write under a claim checks it first (one process: nothing comes in between).
  const checkClaim = (sessionIDs: ReadonlyArray<string>) =>
    Effect.flatMap(WritingClaim, (claim) => {
      if (claim === undefined || !sessionIDs.includes(claim.sessionID)) return Effect.void
      const holder = runs.get(claim.sessionID)
      return holder !== undefined && sameClaim(holder, claim) ? Effect.void : Effect.fail(takenOver(claim, holder))
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
    const all = [...sessions.values()]
      .filter((session) => options.directory === undefined || session.directory === options.directory)
      .sort(newestFirst)
    const limit = options.limit
    return limit === undefined || limit < 0 ? all : all.slice(0, Math.floor(limit))
  })

  const latestSession = Effect.fn("SessionStore.latestSession")(function* (directory: string) {
    return [...sessions.values()]
      .filter((session) => session.directory === directory && session.parentID === undefined)
      .sort(newestFirst)[0]
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
      .filter((m): m is AssistantMessage => m.sessionID === sessionID && m.role === "assistant" && m.summary !== undefined && m.time.completed !== undefined && m.error === undefined)
      .sort((a, b) => byId(b, a))[0]
  })

  const claimRun = Effect.fn("SessionStore.claimRun")(function* (run: SessionRun, isLive: RunIsLive) {
    if (!sessions.has(run.sessionID)) return yield* missing(`claim session ${run.sessionID}`, "session")
    const held = runs.get(run.sessionID)
    if (held !== undefined && !sameClaim(held, run) && isLive(held)) return held
    runs.set(run.sessionID, run)
    return undefined
  })

  const getRun = Effect.fn("SessionStore.getRun")(function* (sessionID: string) {
    return runs.get(sessionID)
  })

  const heartbeatRun = Effect.fnUntraced(function* (run: SessionRun, time: number) {
    const held = runs.get(run.sessionID)
    if (held === undefined || !sameClaim(held, run)) return false
    runs.set(run.sessionID, { ...held, time: { ...held.time, heartbeat: time } })
    return true
  })

  const releaseRun = Effect.fn("SessionStore.releaseRun")(function* (run: SessionRun, seen: number) {
    const held = runs.get(run.sessionID)
    if (held === undefined || !sameClaim(held, run)) return true
    if (held.queued > seen) return false
    runs.delete(run.sessionID)
    return true
  })

  const queueMessage = Effect.fn("SessionStore.queueMessage")(function* (message: UserMessage, parts: ReadonlyArray<Part>, isLive: RunIsLive) {
    const held = runs.get(message.sessionID)
    if (held === undefined || held.queued < 0 || !isLive(held)) return undefined
    if (parts.some((part) => part.messageID !== message.id)) return yield* missing(`queue message ${message.id}`, "message")
    messagesById.set(message.id, message)
    for (const part of parts) partsById.set(part.id, part)
    const queued = { ...held, queued: held.queued + 1 }
    runs.set(message.sessionID, queued)
    return queued
  })

  const deleteSession = Effect.fn("SessionStore.deleteSession")(function* (id: string) {
    if (!sessions.delete(id)) return yield* sessionNotFound(id)
    runs.delete(id)
    const gone = new Set<string>()
    for (const message of messagesById.values()) {
      if (message.sessionID === id) gone.add(message.id)
    }
    for (const messageID of gone) messagesById.delete(messageID)
    for (const part of partsById.values()) {
      if (gone.has(part.messageID)) partsById.delete(part.id)
    }
  })

  const listGrants = Effect.fn("SessionStore.listGrants")(function* (project?: string) {
    return [...grantsById.values()].filter((grant) => project === undefined || grant.project === project).sort(grantOrder)
  })

  const addGrant = Effect.fn("SessionStore.addGrant")(function* (grant: PermissionGrant) {
    // Checked in this order so that it matches SQLite's ON CONFLICT on the unique index.
    const key = grantKey(grant)
    if ([...grantsById.values()].some((stored) => grantKey(stored) === key)) return
    if (grantsById.has(grant.id)) {
      return yield* new StoreError({
        reason: "io",
        message: `Could not save permission grant ${grant.id} in memory: one with that id is already stored.`
      })
    }
    grantsById.set(grant.id, grant)
  })

  const revokeGrants = Effect.fn("SessionStore.revokeGrants")(function* (ids: ReadonlyArray<string>) {
    let deleted = 0
    for (const id of new Set(ids)) if (grantsById.delete(id)) deleted++
    return deleted
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
    claimRun,
    getRun,
    heartbeatRun,
    releaseRun,
    queueMessage,
    deleteSession,
    listGrants,
    addGrant,
    revokeGrants
  }
}
