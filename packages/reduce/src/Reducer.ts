import { byteLength } from "@reins/truncate"

/** What a reducer sees: the full output and, for shell tools, the command that produced it. */
export interface ReduceInput {
  readonly text: string
  /** The shell command, when the output came from one (e.g. `go test ./...`). */
  readonly command?: string
  readonly exitCode?: number | null
  /** The truncation budget the result will face; head_tail reduces to it. */
  readonly maxLines: number
  readonly maxBytes: number
}

/** A reducer's own answer: the compact text and stable reason codes for what it did. */
export interface Reduction {
  readonly text: string
  readonly reasons: ReadonlyArray<ReasonCode>
}

/**
 * Stable reason codes. They appear in tool metadata, JSON events and span attributes, so they
 * never change meaning; add new ones rather than reuse.
 */
export type ReasonCode =
  | "passing_tests_counted"
  | "failures_kept"
  | "stack_trimmed"
  | "noise_dropped"
  | "progress_dropped"
  | "repeats_grouped"
  | "snippets_kept"
  | "paths_sampled"
  | "hunks_cut"
  | "commits_cut"
  | "middle_dropped"
  | (string & {})

/** Evidence attached to every reduced result. */
export interface Evidence {
  readonly reducer: string
  readonly originalBytes: number
  readonly compactedBytes: number
  readonly reasons: ReadonlyArray<string>
}

/**
 * A deterministic output reducer. `matches` is cheap (a look at the command and the first
 * lines); `reduce` may decline by returning `undefined`.
 */
export interface Reducer {
  readonly name: string
  matches(input: ReduceInput): boolean
  reduce(input: ReduceInput): Reduction | undefined
}

/** Outputs at or under this size are left to truncation alone. */
export const REDUCE_MIN_BYTES = 8 * 1024

/**
 * Runs the first reducer that matches and helps. A reduction that does not make the text smaller
 * once its evidence line is put before it (what the model reads) is discarded.
 */
export const runReducers = (
  reducers: ReadonlyArray<Reducer>,
  input: ReduceInput,
  options: { readonly minBytes?: number } = {}
): { readonly text: string; readonly evidence: Evidence } | undefined => {
  const originalBytes = byteLength(input.text)
  if (originalBytes <= (options.minBytes ?? REDUCE_MIN_BYTES)) return undefined
  for (const reducer of reducers) {
    if (!reducer.matches(input)) continue
    const result = reducer.reduce(input)
    if (!result) continue
    const compactedBytes = byteLength(result.text)
    const evidence: Evidence = { reducer: reducer.name, originalBytes, compactedBytes, reasons: [...result.reasons] }
    if (compactedBytes + byteLength(evidenceLine(evidence)) + 1 >= originalBytes) continue
    return { text: result.text, evidence }
  }
  return undefined
}

/** One line the model reads first, so it knows the text was reduced and by what. */
export const evidenceLine = (e: Evidence) => `[reduced by ${e.reducer}: ${e.originalBytes} → ${e.compactedBytes} bytes; ${e.reasons.join(", ")}]`
