import { spendingOf, type Message, type Part, type SessionEvent, type Usage } from "@reins/domain"
import { count as thousands } from "../../present/Units.ts"
import { stableEnd } from "./Split.ts"
import {
  emptyUsage,
  initialTranscript,
  isDone,
  type MessageKind,
  type NoticeItem,
  type PendingPermission,
  type StepUsage,
  type TextItem,
  type TranscriptItem,
  type TranscriptState,
  type TranscriptUsage
} from "./State.ts"

/** A streaming answer is cut into printed chunks once its unprinted tail holds at least this many characters. */
export const CHUNK_MIN_CHARS = 200

type CompactionCompleted = Extract<SessionEvent, { type: "compaction.completed" }>

const count = (n: number | undefined) => (typeof n === "number" && Number.isFinite(n) && n > 0 ? n : 0)

/** Tokens the context held at a step (as compaction counts them): input + output + cache read + cache write. */
export const tokenCount = (usage: Usage): number => {
  const sum = count(usage.input) + count(usage.output) + count(usage.cacheRead) + count(usage.cacheWrite)
  return sum === 0 ? count(usage.total) : sum
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`

/** What a compaction did, in one phrase. */
export const compactionPhrase = (e: Pick<CompactionCompleted, "tokensBefore" | "tokensAfter" | "summarised" | "pruned">) =>
  `${thousands(e.tokensBefore)} → ${thousands(e.tokensAfter)} tokens; ${plural(e.summarised.length, "message", "messages")} summarised, ` +
  `${plural(e.pruned.length, "tool output", "tool outputs")} pruned`

export const messageKind = (message: Message): MessageKind => {
  if (message.role === "assistant") return message.summary !== undefined ? "summary" : "assistant"
  if (message.metadata?.compaction_continue === true) return "hidden"
  return message.metadata?.queued === true ? "queued" : "user"
}

/** The item a part shows as, or undefined for parts not shown (step marks, synthetic text, hidden messages). */
export const itemOfPart = (part: Part, kind: MessageKind, settled: boolean): TranscriptItem | undefined => {
  if (kind === "hidden") return undefined
  switch (part.type) {
    case "text":
      if (part.synthetic === true) return undefined
      if (kind === "user" || kind === "queued") return { kind: "user", id: part.id, messageID: part.messageID, text: part.text, queued: kind === "queued" }
      if (kind === "summary") return { kind: "summary", id: part.id, messageID: part.messageID, text: part.text, done: true }
      return {
        kind: "text",
        id: part.id,
        partID: part.id,
        messageID: part.messageID,
        text: part.text,
        done: settled || part.time?.end !== undefined,
        chunk: 0,
        consumed: 0
      }
    case "reasoning":
      return {
        kind: "reasoning",
        id: part.id,
        messageID: part.messageID,
        text: part.text,
        done: settled || part.time?.end !== undefined,
        ...(part.time ? { start: part.time.start, ...(part.time.end !== undefined ? { end: part.time.end } : {}) } : {})
      }
    case "tool":
      return { kind: "tool", id: part.id, part }
    case "file":
      return { kind: "file", id: part.id, messageID: part.messageID, name: part.filename ?? part.url.slice(0, 60) }
    default:
      return undefined
  }
}

/** The notice an assistant message's error shows as: an interrupt, or the error itself. */
export const errorNotice = (id: string, error: { readonly reason: string; readonly message: string }): NoticeItem =>
  error.reason === "interrupted"
    ? { kind: "notice", id, tone: "warn", text: "interrupted", done: true }
    : { kind: "notice", id, tone: "error", text: error.message, done: true }

const stepOf = (message: Extract<Message, { role: "assistant" }>): StepUsage => ({
  messageID: message.id,
  input: count(message.usage.input),
  output: count(message.usage.output),
  cacheRead: count(message.usage.cacheRead),
  cacheWrite: count(message.usage.cacheWrite),
  cost: count(message.cost)
})

/**
 * Session totals after an assistant message's update: its previous contribution (`step`, if it is
 * the same message) is replaced by the new one. An update to an older message changes nothing.
 */
export const addUsage = (
  usage: TranscriptUsage,
  step: StepUsage | undefined,
  message: Extract<Message, { role: "assistant" }>
): { readonly usage: TranscriptUsage; readonly step: StepUsage | undefined } => {
  if (step !== undefined && message.id < step.messageID) return { usage, step }
  const next = stepOf(message)
  const prev = step?.messageID === message.id ? step : undefined
  const tokens = tokenCount(message.usage)
  return {
    step: next,
    usage: {
      input: usage.input + next.input - (prev?.input ?? 0),
      output: usage.output + next.output - (prev?.output ?? 0),
      cacheRead: usage.cacheRead + next.cacheRead - (prev?.cacheRead ?? 0),
      cacheWrite: usage.cacheWrite + next.cacheWrite - (prev?.cacheWrite ?? 0),
      cost: usage.cost + next.cost - (prev?.cost ?? 0),
      contextTokens: tokens > 0 ? tokens : usage.contextTokens
    }
  }
}

// --- the live list: small, so copying it is cheap; finished items leave it from the front ---

const findLive = (live: ReadonlyArray<TranscriptItem>, id: string) => {
  for (let i = live.length - 1; i >= 0; i--) if (live[i]!.id === id) return i
  return -1
}

const replaceAt = (live: ReadonlyArray<TranscriptItem>, index: number, items: ReadonlyArray<TranscriptItem>) => [
  ...live.slice(0, index),
  ...items,
  ...live.slice(index + 1)
]

/** Moves the finished items at the front of `live` to `items` (order is kept: nothing passes an open item). */
const settle = (state: TranscriptState, live: ReadonlyArray<TranscriptItem>): TranscriptState => {
  let n = 0
  while (n < live.length && isDone(live[n]!)) n++
  const status = liveStatus(state.status, live)
  if (n === 0) return { ...state, live, status }
  return { ...state, items: state.items.concat(live.slice(0, n)), live: live.slice(n), status }
}

/** While a tool runs the status is "tool"; once none does, a turn that was running tools is "thinking" again. */
const liveStatus = (status: TranscriptState["status"], live: ReadonlyArray<TranscriptItem>): TranscriptState["status"] => {
  if (status === "retry") return status
  const running = live.some((item) => item.kind === "tool" && !isDone(item))
  if (running) return "tool"
  return status === "tool" ? "thinking" : status
}

/**
 * A live text item whose tail has grown past a paragraph end is split: the stable head becomes a
 * finished chunk, the live item keeps the rest. Only done at the front of `live`, where the chunk
 * can be printed at once.
 */
const chunked = (item: TextItem, front: boolean): ReadonlyArray<TranscriptItem> => {
  if (!front || item.done || item.text.length < CHUNK_MIN_CHARS) return [item]
  const cut = stableEnd(item.text)
  if (cut === 0) return [item]
  const head: TextItem = { ...item, id: `${item.partID}#${item.chunk}`, text: item.text.slice(0, cut), done: true }
  return [head, { ...item, text: item.text.slice(cut), chunk: item.chunk + 1, consumed: item.consumed + cut }]
}

/** An item for a part seen again: its new content, keeping what was already printed out of it. */
const updated = (previous: TranscriptItem, next: TranscriptItem): TranscriptItem => {
  if (previous.kind === "text" && next.kind === "text") {
    return { ...next, text: next.text.slice(previous.consumed), chunk: previous.chunk, consumed: previous.consumed }
  }
  return next
}

const upsertPart = (current: TranscriptState, part: Part): TranscriptState => {
  let state = current
  const kind = state.messages.get(part.messageID) ?? "assistant"
  const item = itemOfPart(part, kind, false)
  if (item === undefined) return state
  // the model answers again after a retry
  if (state.status === "retry" && kind === "assistant") {
    const { retry: _retry, ...rest } = state
    state = { ...rest, status: "thinking" }
  }
  const index = findLive(state.live, item.id)
  if (index === -1) {
    // a part already printed does not change on screen
    if (state.items.length > 0 && isDone(item) && printed(state, item.id)) return state
    return settle(state, [...state.live, item])
  }
  const next = updated(state.live[index]!, item)
  return settle(state, replaceAt(state.live, index, next.kind === "text" ? chunked(next, index === 0) : [next]))
}

// A finished part is updated again only when repaired; looking back a few items is enough.
const printed = (state: TranscriptState, id: string) => {
  for (let i = state.items.length - 1; i >= Math.max(0, state.items.length - 64); i--) if (state.items[i]!.id === id) return true
  return false
}

const appendDelta = (state: TranscriptState, event: Extract<SessionEvent, { type: "part.delta" }>): TranscriptState => {
  const status: TranscriptState["status"] = event.partType === "text" ? "streaming" : "thinking"
  const index = findLive(state.live, event.partID)
  if (index === -1) {
    // its first part.updated was missed: show the text anyway
    const item: TranscriptItem =
      event.partType === "text"
        ? { kind: "text", id: event.partID, partID: event.partID, messageID: "", text: event.delta, done: false, chunk: 0, consumed: 0 }
        : { kind: "reasoning", id: event.partID, messageID: "", text: event.delta, done: false }
    return { ...state, live: [...state.live, item], status }
  }
  const item = state.live[index]!
  if (item.kind !== "text" && item.kind !== "reasoning") return state
  const grown = { ...item, text: item.text + event.delta }
  const items = grown.kind === "text" && event.delta.includes("\n") ? chunked(grown, index === 0) : [grown]
  // text after a retry: the model answers again
  const { retry: _retry, ...rest } = state
  const next = state.status === "retry" ? { ...rest, status } : { ...state, status: liveStatus(status, state.live) }
  return settle(next, replaceAt(state.live, index, items))
}

const notice = (state: TranscriptState, tone: NoticeItem["tone"], text: string, done = true): TranscriptState =>
  settle({ ...state, seq: state.seq + 1 }, [...state.live, { kind: "notice", id: `notice-${state.seq}`, tone, text, done }])

/**
 * The transcript with a line from the app (a slash command's result, a hint): after everything
 * shown so far, printed once nothing live is before it.
 */
export const addNotice = (state: TranscriptState, text: string, tone: NoticeItem["tone"] = "info"): TranscriptState => notice(state, tone, text)

/** The turn is over: whatever is still live is final. */
const endTurn = (state: TranscriptState): TranscriptState => {
  const live = state.live.map(
    (item): TranscriptItem =>
      item.kind === "text" || item.kind === "reasoning" || item.kind === "summary" || item.kind === "notice" ? { ...item, done: true } : item
  )
  const { retry: _retry, ...rest } = state
  return {
    ...rest,
    items: live.length === 0 ? state.items : state.items.concat(live),
    live: [],
    status: "idle",
    messages: new Map(),
    permission: undefined,
    permissions: []
  }
}

const withPermissions = (state: TranscriptState, permissions: ReadonlyArray<PendingPermission>): TranscriptState => ({
  ...state,
  permissions,
  permission: permissions[0]
})

/** What a finished tool call spent on models of its own (a sub-agent, T19), counted into the session's figures once. */
const addDelegated = (state: TranscriptState, part: Part): TranscriptState => {
  if (part.type !== "tool" || part.state.status !== "completed" || state.delegated?.has(part.id)) return state
  const spent = spendingOf(part.state.metadata)
  if (spent === undefined) return state
  const u = state.usage
  return {
    ...state,
    delegated: new Set(state.delegated).add(part.id),
    usage: {
      ...u,
      input: u.input + spent.usage.input,
      output: u.output + spent.usage.output,
      cacheRead: u.cacheRead + spent.usage.cacheRead,
      cacheWrite: u.cacheWrite + spent.usage.cacheWrite,
      cost: u.cost + spent.cost
    }
  }
}

/** The transcript after one event of the session. Pure; costs about the size of the item it changes. */
export const reduceTranscript = (state: TranscriptState, event: SessionEvent): TranscriptState => {
  switch (event.type) {
    case "part.delta":
      return appendDelta(state, event)
    case "part.updated":
      return addDelegated(upsertPart(state, event.part), event.part)
    case "message.updated": {
      const message = event.message
      const kind = messageKind(message)
      const messages = state.messages.get(message.id) === kind ? state.messages : new Map(state.messages).set(message.id, kind)
      let next: TranscriptState = { ...state, messages }
      if (message.role === "assistant") {
        const added = addUsage(state.usage, state.step, message)
        next = { ...next, usage: added.usage, step: added.step }
        // other errors also come as session.error; an interrupt comes only here
        if (message.error?.reason === "interrupted" && state.messages.get(message.id) !== undefined) next = notice(next, "warn", "interrupted")
      }
      return next
    }
    case "session.status":
      if (event.status === "busy") return { ...state, status: state.status === "idle" ? "thinking" : state.status }
      if (event.status === "retry") {
        return { ...state, status: "retry", retry: { attempt: event.attempt ?? 0, message: event.message ?? "provider error", next: event.next ?? 0 } }
      }
      return endTurn(state)
    case "session.error":
      return event.error.reason === "interrupted" ? state : notice(state, "error", event.error.message)
    case "permission.asked": {
      const { type: _type, sessionID: _session, ...request } = event
      return withPermissions(state, [...state.permissions.filter((p) => p.id !== event.id), request])
    }
    case "permission.replied": {
      let next = withPermissions(
        state,
        state.permissions.filter((p) => p.id !== event.id)
      )
      if (event.by === "policy" && event.reply === "reject") next = notice(next, "error", "permission denied by the non-interactive policy")
      if (event.granted) next = notice(next, "info", `always allowed for this ${event.persisted ? "project" : "session"}: ${event.granted.join(", ")}`)
      return next
    }
    case "compaction.started":
      return notice(state, "info", `compacting context (${event.reason}, ~${thousands(event.tokens)} tokens)…`, false)
    case "compaction.completed": {
      const open = state.live.findLastIndex((item) => item.kind === "notice" && !item.done)
      const item: NoticeItem = { kind: "notice", id: `notice-${state.seq}`, tone: "info", text: `compacted: ${compactionPhrase(event)}`, done: true }
      const usage = { ...state.usage, contextTokens: event.tokensAfter }
      if (open === -1) return settle({ ...state, usage, seq: state.seq + 1 }, [...state.live, item])
      return settle({ ...state, usage, seq: state.seq + 1 }, replaceAt(state.live, open, [{ ...item, id: state.live[open]!.id }]))
    }
    case "turn.finished":
      return endTurn(state)
    default:
      return state
  }
}

/** A resumed session's transcript: every stored message, finished. */
export const fromHistory = (messages: ReadonlyArray<{ readonly info: Message; readonly parts: ReadonlyArray<Part> }>): TranscriptState => {
  const items: Array<TranscriptItem> = []
  let usage = emptyUsage
  let step: StepUsage | undefined
  // undone turns (`/undo`, `reins undo`) are kept in the store, not shown: every message of theirs is marked
  for (const message of messages) {
    if (message.info.role === "user" ? message.info.metadata?.reverted != null : message.info.reverted != null) continue
    const kind = messageKind(message.info)
    for (const part of message.parts) {
      const item = itemOfPart(part, kind, true)
      if (item !== undefined) items.push(item)
    }
    if (message.info.role === "assistant") {
      const added = addUsage(usage, step, message.info)
      usage = added.usage
      step = added.step
      if (message.info.error) items.push(errorNotice(`error-${message.info.id}`, message.info.error))
    }
  }
  // the sub-agents' spending, as the live view counts it
  let state: TranscriptState = { ...initialTranscript, items, usage, ...(step ? { step } : {}) }
  for (const message of messages) {
    if (message.info.role !== "assistant" || message.info.reverted != null) continue
    for (const part of message.parts) state = addDelegated(state, part)
  }
  return state
}

/** The text of the last answer (the last assistant message with text), for /copy. */
export const lastAnswer = (state: TranscriptState): string | undefined => {
  const lists = [state.live, state.items]
  let messageID: string | undefined
  const pieces: Array<string> = []
  for (const list of lists) {
    for (let i = list.length - 1; i >= 0; i--) {
      const item = list[i]!
      if (item.kind !== "text") continue
      if (messageID === undefined) messageID = item.messageID
      else if (item.messageID !== messageID) return pieces.reverse().join("")
      pieces.push(item.text)
    }
  }
  return messageID === undefined ? undefined : pieces.reverse().join("")
}
