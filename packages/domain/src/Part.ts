import { Schema } from "effect"
import { Usage } from "./Message.ts"

const base = {
  id: Schema.String,
  sessionID: Schema.String,
  messageID: Schema.String
}

const Time = Schema.Struct({ start: Schema.Number, end: Schema.optional(Schema.Number) })
const Metadata = Schema.Record(Schema.String, Schema.Unknown)

export const TextPart = Schema.Struct({
  ...base,
  type: Schema.Literal("text"),
  text: Schema.String,
  synthetic: Schema.optional(Schema.Boolean),
  time: Schema.optional(Time)
})
export type TextPart = typeof TextPart.Type

export const ReasoningPart = Schema.Struct({
  ...base,
  type: Schema.Literal("reasoning"),
  text: Schema.String,
  time: Schema.optional(Time),
  /**
   * The provider's metadata of the reasoning, by provider (`{ anthropic: { signature } }`,
   * `{ openai: { itemId, reasoningEncryptedContent } }`): replayed to the model of its message,
   * dropped for any other (T22).
   */
  providerMetadata: Schema.optional(Schema.Record(Schema.String, Metadata))
})
export type ReasoningPart = typeof ReasoningPart.Type

/**
 * A file given to the model: an image (sent as a file part to models that take images) or a text
 * file (sent as its text, under its path). The data is kept in the session as a data: URL, so the
 * message replays the same whatever happens to the file later.
 */
export const Attachment = Schema.Struct({
  mime: Schema.String,
  /** The path as the user gave it (relative to the project when inside it). */
  filename: Schema.optional(Schema.String),
  /** A data: URL. */
  url: Schema.String
})
export type Attachment = typeof Attachment.Type

export const ToolStatePending = Schema.Struct({
  status: Schema.Literal("pending"),
  input: Schema.Record(Schema.String, Schema.Unknown),
  raw: Schema.String
})
export const ToolStateRunning = Schema.Struct({
  status: Schema.Literal("running"),
  input: Schema.Record(Schema.String, Schema.Unknown),
  title: Schema.optional(Schema.String),
  /** Progress the tool reported while running (e.g. bash: bytes so far and the last lines). */
  metadata: Schema.optional(Metadata),
  time: Schema.Struct({ start: Schema.Number })
})
export const ToolStateCompleted = Schema.Struct({
  status: Schema.Literal("completed"),
  input: Schema.Record(Schema.String, Schema.Unknown),
  /** The whole output; kept when the part is pruned. */
  output: Schema.String,
  title: Schema.String,
  metadata: Metadata,
  /** `compacted`: when pruning hid the output from the model (T9). */
  time: Schema.Struct({ start: Schema.Number, end: Schema.Number, compacted: Schema.optional(Schema.Number) }),
  /** What the model sees instead of `output` once pruned: a placeholder, or the first and last lines. */
  pruned: Schema.optional(Schema.String),
  /** Files the tool gives the model besides its text (read of an image): sent to models that take images, a note to others. */
  attachments: Schema.optional(Schema.Array(Attachment))
})
export const ToolStateError = Schema.Struct({
  status: Schema.Literal("error"),
  input: Schema.Record(Schema.String, Schema.Unknown),
  error: Schema.String,
  interrupted: Schema.optional(Schema.Boolean),
  metadata: Schema.optional(Metadata),
  time: Schema.Struct({ start: Schema.Number, end: Schema.Number })
})
/** pending → running → completed | error; `interrupted` marks a call cut off by Ctrl+C or cleanup. */
export const ToolState = Schema.Union([ToolStatePending, ToolStateRunning, ToolStateCompleted, ToolStateError])
export type ToolState = typeof ToolState.Type

export const ToolPart = Schema.Struct({
  ...base,
  type: Schema.Literal("tool"),
  callID: Schema.String,
  tool: Schema.String,
  state: ToolState,
  /** The provider's metadata of the call (Gemini's thought signature): replayed to the model of its message only (T22). */
  providerMetadata: Schema.optional(Schema.Record(Schema.String, Metadata))
})
export type ToolPart = typeof ToolPart.Type

/** A file or image attached to a user message. */
export const FilePart = Schema.Struct({
  ...base,
  type: Schema.Literal("file"),
  mime: Schema.String,
  filename: Schema.optional(Schema.String),
  /** A data: URL or a file: URL. */
  url: Schema.String
})
export type FilePart = typeof FilePart.Type

export const StepStartPart = Schema.Struct({ ...base, type: Schema.Literal("step-start") })
export type StepStartPart = typeof StepStartPart.Type

export const StepFinishPart = Schema.Struct({
  ...base,
  type: Schema.Literal("step-finish"),
  reason: Schema.String,
  usage: Usage,
  cost: Schema.Number
})
export type StepFinishPart = typeof StepFinishPart.Type

/**
 * What a path of the project was, as a checkpoint records it: nothing there, a directory, a symbolic link, or a file
 * (its content by `hash` in the checkpoint store; no hash, but its `stamp`, when it was not copied: over the size cap, or unreadable).
 */
export const FileState = Schema.Union([
  Schema.Struct({ kind: Schema.Literal("absent") }),
  Schema.Struct({ kind: Schema.Literal("directory"), mode: Schema.Number }),
  Schema.Struct({ kind: Schema.Literal("symlink"), target: Schema.String }),
  Schema.Struct({
    kind: Schema.Literal("file"),
    mode: Schema.Number,
    size: Schema.Number,
    hash: Schema.optional(Schema.String),
    /** For a file not copied (over the size cap, unreadable): its stat (times, inode), which tells that it changed. */
    stamp: Schema.optional(Schema.String)
  })
])
export type FileState = typeof FileState.Type

/** One path a step changed (relative to the session's directory, `/`-separated): what it was before and after. */
export const FileChange = Schema.Struct({ path: Schema.String, before: FileState, after: FileState })
export type FileChange = typeof FileChange.Type

/**
 * What a step's tools changed in the project (every tool: file tools, bash, MCP, hooks, sub-agents), recorded when
 * they are done: what undo restores and redo re-applies.
 */
export const PatchPart = Schema.Struct({
  ...base,
  type: Schema.Literal("patch"),
  files: Schema.Array(FileChange),
  /** The directory the paths are relative to: where the step's tools ran (absent: the session's directory). */
  directory: Schema.optional(Schema.String)
})
export type PatchPart = typeof PatchPart.Type

/** Everything a message is made of. */
export const Part = Schema.Union([TextPart, ReasoningPart, ToolPart, FilePart, StepStartPart, StepFinishPart, PatchPart])
export type Part = typeof Part.Type

/** True while a tool call still waits for an outcome. */
export const isOpenTool = (part: Part): part is ToolPart => part.type === "tool" && (part.state.status === "pending" || part.state.status === "running")
