import { Effect } from "effect"
import { evidenceLine, runReducers, type Evidence, type Reducer } from "@reins/reduce"
import { countLines, joinEnds, NOTICE_RESERVE, limitsFor, type Truncate, TruncateError, type Capture, type Direction } from "@reins/truncate"
import * as fs from "node:fs"

/** A streamed output up to this size is read back so reducers see all of it. */
export const READBACK_MAX_BYTES = 8 * 1024 * 1024
/** `full_output` returns at most this much; beyond it the output is cut as usual. */
export const FULL_OUTPUT_MAX_BYTES = 16 * 1024 * 1024

export interface ShapeInput {
  readonly tool: string
  readonly sessionID: string
  readonly callID: string
  /** The tool's own direction; config may override it per tool. */
  readonly direction: Direction
  readonly reduce: boolean
  readonly fullOutput: boolean
  /** The output, or the capture of a streamed one. */
  readonly output: string | Capture
  readonly command?: string
  readonly exitCode?: number | null
  /** Text the caller appends after the result (e.g. the exit code): counted in the limits. */
  readonly trailer?: string
}

export interface Shaped {
  readonly content: string
  readonly truncated: boolean
  readonly outputPath?: string
  readonly reduction?: Evidence
  readonly totalBytes: number
  readonly totalLines: number
}

const readBack = (file: string) =>
  Effect.tryPromise({
    try: () => fs.promises.readFile(file, "utf8"),
    catch: (e) => new TruncateError({ reason: "io", message: `Could not read the saved output ${file} back: ${(e as Error).message}` })
  })

/**
 * What the model sees of one tool output (SPEC T15 + reducers): the full text when asked for
 * with `full_output`; else the first reducer that helps, then truncation to the limits, with
 * the full output spilled to disk whenever the model sees less than all of it.
 */
export const shapeOutput = (truncate: Truncate["Service"], reducers: ReadonlyArray<Reducer>, input: ShapeInput): Effect.Effect<Shaped, TruncateError> =>
  Effect.gen(function* () {
    const own = limitsFor(truncate.settings, input.tool, { direction: input.direction })
    const extra = input.trailer ? { lines: countLines(input.trailer) + 1, bytes: Buffer.byteLength(input.trailer) + 2 } : { lines: 0, bytes: 0 }
    const limits = { ...own, maxLines: Math.max(1, own.maxLines - extra.lines), maxBytes: Math.max(256, own.maxBytes - extra.bytes) }
    const base = { direction: limits.direction, sessionID: input.sessionID, callID: input.callID, maxLines: limits.maxLines, maxBytes: limits.maxBytes }
    // views made here leave room for the notice, so apply does not cut them again
    const room = { maxLines: Math.max(1, limits.maxLines - NOTICE_RESERVE.lines), maxBytes: Math.max(256, limits.maxBytes - NOTICE_RESERVE.bytes) }
    const capture = typeof input.output === "string" ? undefined : input.output
    if (capture?.error) return yield* capture.error
    const spilled = capture?.file ? { file: capture.file, totalLines: capture.totalLines, totalBytes: capture.totalBytes, dropped: capture.dropped } : undefined
    const readable = !capture?.file || capture.totalBytes <= (input.fullOutput ? FULL_OUTPUT_MAX_BYTES : READBACK_MAX_BYTES)
    if (!readable) {
      // Too large to hold: a head+tail view from what the sink kept in memory.
      // Evidence as if head_tail had run, which is what this is.
      const view = joinEnds(capture!.head, capture!.tail, capture!.totalLines, room.maxLines, room.maxBytes)
      const evidence: Evidence = {
        reducer: "head_tail",
        originalBytes: capture!.totalBytes,
        compactedBytes: Buffer.byteLength(view),
        reasons: ["middle_dropped"]
      }
      const refused = input.fullOutput
        ? `\n[full_output was not honoured: ${capture!.totalBytes} bytes is more than the ${FULL_OUTPUT_MAX_BYTES} a tool result may carry]`
        : ""
      const cut = yield* truncate.apply(view, {
        ...base,
        direction: "head_tail",
        spilled: spilled!,
        header: evidenceLine(evidence) + refused,
        shown: "the first and last parts are shown"
      })
      return { ...cut, reduction: evidence }
    }
    const text = typeof input.output === "string" ? input.output : (capture!.text ?? (yield* readBack(capture!.file!)))
    if (input.fullOutput) {
      return {
        content: text,
        truncated: false,
        ...(spilled ? { outputPath: spilled.file } : {}),
        totalBytes: capture?.totalBytes ?? Buffer.byteLength(text),
        totalLines: capture?.totalLines ?? countLines(text)
      }
    }
    const reduced =
      input.reduce && limits.reducers
        ? runReducers(reducers, {
            text,
            ...(input.command !== undefined ? { command: input.command } : {}),
            ...(input.exitCode !== undefined ? { exitCode: input.exitCode } : {}),
            ...room
          })
        : undefined
    if (reduced) {
      const cut = yield* truncate.apply(reduced.text, { ...base, original: text, header: evidenceLine(reduced.evidence), ...(spilled ? { spilled } : {}) })
      return { ...cut, reduction: reduced.evidence }
    }
    return yield* truncate.apply(text, { ...base, ...(spilled ? { spilled } : {}) })
  })
