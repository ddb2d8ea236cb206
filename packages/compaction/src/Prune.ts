import type { Part, ToolPart } from "@reins/domain"
import { prunedPlaceholder } from "@reins/provider"
import type { MessageWithParts } from "@reins/storage"
import { lastTurnsStart } from "./Turns.ts"

/** How old tool outputs are pruned (T9). */
export interface PruneOptions {
  /** Tools whose outputs are never pruned (default `["skill"]`). */
  readonly protectedTools?: ReadonlyArray<string>
  /** Keep this many first and last lines of a long output instead of dropping it all (default 0: dropped). */
  readonly keepLines?: number
  /** User turns at the end of the history whose outputs are never pruned (default 2). */
  readonly protectTurns?: number
  /** The time stamped as `time.compacted`. */
  readonly now: number
}

/** Tools whose outputs are never pruned unless configured otherwise. */
export const DEFAULT_PROTECTED_TOOLS: ReadonlyArray<string> = ["skill"]

type CompletedTool = ToolPart & { readonly state: Extract<ToolPart["state"], { status: "completed" }> }

const isCompleted = (part: Part): part is CompletedTool => part.type === "tool" && part.state.status === "completed"

/**
 * What the model sees of a pruned output: the first and last `keepLines` lines around a note of
 * how many were cleared when the output is longer than twice that, else the tool's placeholder.
 */
export const prunedText = (tool: string, output: string, keepLines: number): string => {
  if (keepLines <= 0) return prunedPlaceholder(tool)
  const lines = output.replace(/\n$/, "").split("\n")
  if (lines.length <= 2 * keepLines) return prunedPlaceholder(tool)
  const cleared = lines.length - 2 * keepLines
  return [...lines.slice(0, keepLines), `[… ${cleared} lines cleared to save context …]`, ...lines.slice(-keepLines)].join("\n")
}

/** A completed tool part hidden from the model: stamped `time.compacted`, with its pruned text; `output` is kept. */
export const prunePart = (part: CompletedTool, now: number, keepLines = 0): ToolPart => ({
  ...part,
  state: { ...part.state, time: { ...part.state.time, compacted: now }, pruned: prunedText(part.tool, part.state.output, keepLines) }
})

/**
 * T9: the tool parts to store pruned. Completed outputs not pruned yet, in messages older than the
 * last `protectTurns` user turns, of tools not protected.
 */
export const planPrune = (messages: ReadonlyArray<MessageWithParts>, options: PruneOptions): ReadonlyArray<ToolPart> => {
  const protectedTools = new Set(options.protectedTools ?? DEFAULT_PROTECTED_TOOLS)
  const end = lastTurnsStart(messages, options.protectTurns ?? 2)
  const out: Array<ToolPart> = []
  for (const message of messages.slice(0, end)) {
    for (const part of message.parts) {
      if (!isCompleted(part) || part.state.time.compacted !== undefined || protectedTools.has(part.tool)) continue
      out.push(prunePart(part, options.now, options.keepLines ?? 0))
    }
  }
  return out
}

/** Messages with the given parts swapped in (by id); the rest untouched. */
export const applyParts = (messages: ReadonlyArray<MessageWithParts>, parts: ReadonlyArray<Part>): ReadonlyArray<MessageWithParts> => {
  if (parts.length === 0) return messages
  const byId = new Map(parts.map((p) => [p.id, p]))
  return messages.map((m) => (m.parts.some((p) => byId.has(p.id)) ? { ...m, parts: m.parts.map((p) => byId.get(p.id) ?? p) } : m))
}

// An output the model sees as more than its placeholder: not pruned, or pruned to its first and last lines.
const isVisible = (part: Part): part is CompletedTool =>
  isCompleted(part) && (part.state.time.compacted === undefined || (part.state.pruned !== undefined && part.state.pruned !== prunedPlaceholder(part.tool)))

/** How many tool outputs of these messages the model would still see in more than a placeholder. */
export const visibleOutputs = (messages: ReadonlyArray<MessageWithParts>): number => messages.reduce((n, m) => n + m.parts.filter(isVisible).length, 0)

/**
 * A copy of the messages in which only the newest `keep` visible tool outputs remain; older ones
 * become placeholders. For shrinking a summariser's input; nothing is stored.
 */
export const dropOldestOutputs = (messages: ReadonlyArray<MessageWithParts>, keep: number, now: number): ReadonlyArray<MessageWithParts> => {
  let drop = Math.max(0, visibleOutputs(messages) - keep)
  return messages.map((m) => {
    if (drop === 0) return m
    return {
      ...m,
      parts: m.parts.map((p) => {
        if (drop === 0 || !isVisible(p)) return p
        drop--
        return prunePart(p, now)
      })
    }
  })
}
