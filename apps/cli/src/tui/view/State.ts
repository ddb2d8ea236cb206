import type { ToolPart } from "@reins/domain"

/** A user's message (its text part), shown as they typed it; `queued` when sent while a turn ran. */
export interface UserItem {
  readonly kind: "user"
  readonly id: string
  readonly messageID: string
  readonly text: string
  readonly queued: boolean
}

/** A file or image attached to a user message. */
export interface FileItem {
  readonly kind: "file"
  readonly id: string
  readonly messageID: string
  readonly name: string
}

/**
 * Answer text of an assistant message. A long streaming answer is cut at paragraph ends into
 * finished chunks (`chunk` > 0 for every piece after the first) so they can be printed once; the
 * live piece keeps the part's id, and `consumed` counts the characters already moved to chunks.
 */
export interface TextItem {
  readonly kind: "text"
  readonly id: string
  readonly partID: string
  readonly messageID: string
  readonly text: string
  readonly done: boolean
  readonly chunk: number
  readonly consumed: number
}

/** The model's reasoning: dimmed, collapsed to one line unless expanded. */
export interface ReasoningItem {
  readonly kind: "reasoning"
  readonly id: string
  readonly messageID: string
  readonly text: string
  readonly done: boolean
  readonly start?: number
  readonly end?: number
}

/** One tool call, as its part says now. */
export interface ToolItem {
  readonly kind: "tool"
  readonly id: string
  readonly part: ToolPart
}

/** A compaction's summary message: collapsed to one line unless expanded. */
export interface SummaryItem {
  readonly kind: "summary"
  readonly id: string
  readonly messageID: string
  readonly text: string
  readonly done: boolean
}

/** A line about the session: compaction, an error, an interrupt, a grant. */
export interface NoticeItem {
  readonly kind: "notice"
  readonly id: string
  readonly tone: "info" | "warn" | "error"
  readonly text: string
  readonly done: boolean
}

export type TranscriptItem = UserItem | FileItem | TextItem | ReasoningItem | ToolItem | SummaryItem | NoticeItem

/** A permission question waiting for a reply: the fields of `permission.asked` (and of permission's `Pending`). */
export interface PendingPermission {
  readonly id: string
  readonly permission: string
  readonly patterns: ReadonlyArray<string>
  readonly always: ReadonlyArray<string>
  readonly callID?: string
  readonly title?: string
  readonly command?: string
  readonly directory?: string
  readonly opaque?: string
  readonly rule?: { readonly permission: string; readonly pattern: string; readonly action: string }
  /** What an edit would change, one diff per file. */
  readonly diffs?: ReadonlyArray<{ readonly path: string; readonly diff: string; readonly created?: boolean }>
}

/** Tokens and cost of the session so far, and the tokens the context held at the last step. */
export interface TranscriptUsage {
  readonly input: number
  readonly output: number
  readonly cacheRead: number
  readonly cacheWrite: number
  readonly cost: number
  readonly contextTokens: number
}

/** What the latest assistant message contributes to `usage` (replaced as it is updated). */
export interface StepUsage {
  readonly messageID: string
  readonly input: number
  readonly output: number
  readonly cacheRead: number
  readonly cacheWrite: number
  readonly cost: number
}

/** What kind of message a part belongs to, for the messages of the running turn. */
export type MessageKind = "user" | "queued" | "hidden" | "assistant" | "summary"

export type TranscriptStatus = "idle" | "thinking" | "streaming" | "tool" | "retry"

/**
 * Everything the screen shows about a session. `items` are finished and never change (what Ink's
 * `<Static>` prints once); `live` are the items still changing — the streaming answer, running
 * tools, and whatever came after the first of them — re-rendered each frame. Together, in order,
 * they are the transcript.
 */
export interface TranscriptState {
  readonly items: ReadonlyArray<TranscriptItem>
  readonly live: ReadonlyArray<TranscriptItem>
  readonly usage: TranscriptUsage
  readonly step?: StepUsage
  readonly status: TranscriptStatus
  /** The open question shown now (the first of `permissions`). */
  readonly permission?: PendingPermission
  /** Every open question, oldest first. */
  readonly permissions: ReadonlyArray<PendingPermission>
  /** The provider error being retried, while status is "retry". */
  readonly retry?: { readonly attempt: number; readonly message: string; readonly next: number }
  /** The running turn's messages seen so far (cleared when it ends). */
  readonly messages: ReadonlyMap<string, MessageKind>
  /** Counter for the ids of notices. */
  readonly seq: number
  /** The tool parts whose spending (a sub-agent's, T19) is in `usage`: counted once. */
  readonly delegated?: ReadonlySet<string>
}

export const emptyUsage: TranscriptUsage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, cost: 0, contextTokens: 0 }

/** A session with nothing in it yet. */
export const initialTranscript: TranscriptState = {
  items: [],
  live: [],
  usage: emptyUsage,
  status: "idle",
  permissions: [],
  messages: new Map(),
  seq: 0
}

/** Whether an item will change no more. */
export const isDone = (item: TranscriptItem): boolean => {
  switch (item.kind) {
    case "user":
    case "file":
      return true
    case "tool":
      return item.part.state.status === "completed" || item.part.state.status === "error"
    default:
      return item.done
  }
}

/** The transcript in order: finished items, then live ones. */
export const allItems = (state: TranscriptState): ReadonlyArray<TranscriptItem> => (state.live.length === 0 ? state.items : [...state.items, ...state.live])

/** Share of the prompt served from the provider's cache, when it reports caching at all. */
export const cacheHitRate = (usage: TranscriptUsage): number | undefined => {
  const prompt = usage.input + usage.cacheRead + usage.cacheWrite
  return usage.cacheRead + usage.cacheWrite > 0 && prompt > 0 ? usage.cacheRead / prompt : undefined
}
