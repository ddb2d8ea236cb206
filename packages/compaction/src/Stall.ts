import { CompactionError } from "./CompactionError.ts"

/** Compactions in a row after which the next request still overflowed, before the turn stops with `no-progress`. */
export const MAX_FUTILE_COMPACTIONS = 3

/**
 * How a turn's compactions are going (a pure fold over its steps): how many compactions in a row
 * left the context too full for the very next request, and whether the last thing done was one.
 */
export interface Stall {
  readonly futile: number
  readonly compacted: boolean
}

export const noStall: Stall = { futile: 0, compacted: false }

/** A step whose context fitted: compaction is working, the count starts again. */
export const stepFitted = (_: Stall): Stall => noStall

/** A step (or a provider's refusal) over the limit: futile when it comes right after a compaction. */
export const stepOverflowed = (stall: Stall): Stall => ({ futile: stall.futile + (stall.compacted ? 1 : 0), compacted: false })

/** A compaction that summarised something. */
export const compacted = (stall: Stall): Stall => ({ ...stall, compacted: true })

/** A compaction that found nothing to summarise: the context cannot shrink, which counts against it. */
export const nothingCompacted = (stall: Stall): Stall => ({ futile: stall.futile + 1, compacted: false })

/** Whether the turn must stop: compacting again would only repeat itself (and re-bill the summary). */
export const isStalled = (stall: Stall): boolean => stall.futile >= MAX_FUTILE_COMPACTIONS

const n = (x: number) => Math.round(x).toLocaleString("en-US")

/** The error that ends a stalled turn: what does not fit, and what to change. */
export const stallError = (input: {
  readonly sessionID: string
  readonly model: string
  /** The model's input limit (else its context). */
  readonly limit: number
  readonly usable: number
  /** Tokens the last request held, as counted. */
  readonly tokens: number
  /** Estimated tokens of what every request carries (system prompt and tool definitions), when known. */
  readonly fixed?: number | undefined
}): CompactionError =>
  new CompactionError({
    reason: "no-progress",
    message:
      `The context of ${input.model} stays full however often it is compacted (${MAX_FUTILE_COMPACTIONS} times in a row compacting left no room for the next request): ` +
      `the model takes ${n(input.limit)} tokens, ${n(input.usable)} of them for the conversation after the reserve for its answer, and the request still held ~${n(input.tokens)} ` +
      `(system prompt, tool definitions, the pinned request, the summary and the newest step${input.fixed !== undefined ? `; the system prompt and tool definitions alone ~${n(input.fixed)}` : ""}). ` +
      `Use a model with a larger context, make tool results smaller ` +
      `("tool_output": {"max_bytes": …, "max_lines": …} in reins.json), use fewer tools or shorter instructions, or lower "compaction.reserved". ` +
      `The session is kept: reins sessions show ${input.sessionID}.`
  })
