import { Context, Effect, Layer } from "effect"
import { DataDir } from "@reins/domain"
import { byteLength, countLines, cut, type Direction } from "./Cut.ts"
import { TruncateSettings, type OutputSettings } from "./Settings.ts"
import type { Dropped } from "./CappedFile.ts"
import { defaultSinkOptions, Sink, type SinkOptions } from "./Sink.ts"
import { spillDirectory, spillError, spillPath, type TruncateError, writeSpill } from "./Spill.ts"

export interface TruncateOptions {
  readonly direction: Direction
  readonly sessionID: string
  readonly callID: string
  readonly maxLines?: number
  readonly maxBytes?: number
  /** The full output when `text` is a reduction of it: that is what gets spilled. */
  readonly original?: string
  /** The full output is already on disk (streamed while the command ran), less `dropped` if it was capped. */
  readonly spilled?: { readonly file: string; readonly totalLines: number; readonly totalBytes: number; readonly dropped?: Dropped | undefined }
  /** A line shown before the output, e.g. a reducer's evidence. */
  readonly header?: string
  /** What the model sees, when `text` is already a view of the full output. */
  readonly shown?: string
}

export interface TruncateResult {
  /** What the model sees. */
  readonly content: string
  readonly truncated: boolean
  /** Where the full output was written when the model sees less than all of it. */
  readonly outputPath?: string
  /** Of the full output. */
  readonly totalLines: number
  readonly totalBytes: number
}

/** Room a view should leave for the header and notice, so apply does not cut it again. */
export const NOTICE_RESERVE = { lines: 8, bytes: 2048 }

const shown = (direction: Direction) =>
  direction === "head" ? "the first part is shown" : direction === "tail" ? "the last part is shown" : "the first and last parts are shown"

/** The instruction after a cut: where the rest is and how to get at it (and what even the file lacks). */
export const notice = (file: string, totalLines: number, totalBytes: number, what: string, dropped?: Dropped) =>
  (dropped
    ? `The output (${totalLines} lines, ${totalBytes} bytes) was too large to keep whole: ${file} holds its start and its end, ` +
      `and ${dropped.bytes} bytes (${dropped.lines} lines) in the middle were dropped (a marker line stands in their place); ${what}. `
    : `The full output (${totalLines} lines, ${totalBytes} bytes) is saved in ${file}; ${what}. `) +
  `Use the read tool with offset/limit, or grep, on that file to see the rest.`

/** Cuts tool output to what the model can take, spilling the full text to a file. */
export class Truncate extends Context.Service<
  Truncate,
  {
    apply(text: string, options: TruncateOptions): Effect.Effect<TruncateResult, TruncateError>
    /** A streaming sink whose spill file is this call's. */
    sink(sessionID: string, callID: string, options?: SinkOptions): Sink
    readonly settings: OutputSettings
  }
>()("reins/truncate/Truncate") {
  static readonly layer = Layer.effect(
    Truncate,
    Effect.gen(function* () {
      const directory = spillDirectory(yield* DataDir)
      const settings = yield* TruncateSettings
      const apply = Effect.fn("Truncate.apply")(function* (text: string, options: TruncateOptions) {
        const maxLines = options.maxLines ?? settings.maxLines
        const maxBytes = options.maxBytes ?? settings.maxBytes
        const full = options.original ?? text
        const totals = options.spilled ?? { totalLines: countLines(full), totalBytes: byteLength(full) }
        const file = options.spilled?.file ?? spillPath(directory, options.sessionID, options.callID)
        const header = options.header ? `${options.header}\n` : ""
        // Reserve room for the header and the notice so the whole answer fits the limits.
        const reserve = `${header + notice(file, totals.totalLines, totals.totalBytes, shown("head_tail"), options.spilled?.dropped)}\n\n`
        const body = cut(text, {
          direction: options.direction,
          maxLines: Math.max(1, maxLines - countLines(reserve)),
          maxBytes: Math.max(64, maxBytes - byteLength(reserve))
        })
        const partial = body.truncated || options.original !== undefined || options.spilled !== undefined
        if (!partial) return { content: text, truncated: false, totalLines: totals.totalLines, totalBytes: totals.totalBytes }
        if (!options.spilled) {
          yield* Effect.tryPromise({ try: () => writeSpill(file, full), catch: (e) => spillError(e, file) })
        }
        const what = body.truncated ? shown(options.direction) : (options.shown ?? "a reduced view is shown")
        const note = notice(file, totals.totalLines, totals.totalBytes, what, options.spilled?.dropped)
        const content = options.direction === "tail" ? `${header}${note}\n\n${body.text}` : `${header}${body.text}\n\n${note}`
        yield* Effect.annotateCurrentSpan({ "tool.truncated": body.truncated, "tool.output_bytes": totals.totalBytes })
        return { content, truncated: true, outputPath: file, totalLines: totals.totalLines, totalBytes: totals.totalBytes }
      })
      const sink = (sessionID: string, callID: string, options: SinkOptions = defaultSinkOptions) =>
        new Sink(spillPath(directory, sessionID, callID), { maxFileBytes: settings.spillMaxBytes, ...options })
      return Truncate.of({ apply, sink, settings })
    })
  )
}
