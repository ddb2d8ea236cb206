import { Context, Effect, Layer, Schema } from "effect"
import { DataDir } from "@reins/domain"
import * as fs from "node:fs"
import * as path from "node:path"

/** Default limits: what the model sees of one tool output. */
export const MAX_LINES = 2_000
export const MAX_BYTES = 51_200

/** Settings with defaults, overridable per runtime. */
export const TruncateLimits = Context.Reference<{ maxLines: number; maxBytes: number }>("reins/truncate/Limits", {
  defaultValue: () => ({ maxLines: MAX_LINES, maxBytes: MAX_BYTES })
})

export type Direction = "head" | "tail"

export interface TruncateOptions {
  readonly direction: Direction
  readonly sessionID: string
  readonly callID: string
  readonly maxLines?: number
  readonly maxBytes?: number
}

export interface TruncateResult {
  readonly content: string
  readonly truncated: boolean
  /** Where the full output was written when it was cut. */
  readonly outputPath?: string
  readonly totalLines: number
  readonly totalBytes: number
}

export class TruncateError extends Schema.TaggedError<TruncateError>()("TruncateError", {
  reason: Schema.Literals(["disk-full", "io"]),
  message: Schema.String
}) {}

const encoder = new TextEncoder()
const byteLength = (s: string) => encoder.encode(s).length

/**
 * Pure cut on line boundaries: keeps whole lines from the head (or tail) within both limits.
 * Returns the kept lines and how many were dropped.
 */
export const cut = (text: string, direction: Direction, maxLines: number, maxBytes: number) => {
  const lines = text.split("\n")
  const totalBytes = byteLength(text)
  if (lines.length <= maxLines && totalBytes <= maxBytes) {
    return { kept: text, truncated: false, droppedLines: 0, totalLines: lines.length, totalBytes }
  }
  const kept: Array<string> = []
  let bytes = 0
  const order = direction === "head" ? lines : [...lines].reverse()
  for (const line of order) {
    const size = byteLength(line) + 1
    if (kept.length >= maxLines || bytes + size > maxBytes) break
    kept.push(line)
    bytes += size
  }
  if (direction === "tail") kept.reverse()
  return {
    kept: kept.join("\n"),
    truncated: true,
    droppedLines: lines.length - kept.length,
    totalLines: lines.length,
    totalBytes
  }
}

const notice = (file: string, droppedLines: number, totalLines: number, totalBytes: number, direction: Direction) =>
  `…${droppedLines} lines truncated…\n\n` +
  `The output was too long (${totalLines} lines, ${totalBytes} bytes); the ${direction === "head" ? "first" : "last"} part is shown. ` +
  `The full output is saved in ${file}: use the read tool with offset/limit, or grep, on that file to see the rest.`

/** Cuts tool output to what the model can take, spilling the full text to a file. */
export class Truncate extends Context.Service<Truncate, {
  apply(text: string, options: TruncateOptions): Effect.Effect<TruncateResult, TruncateError>
  /** The directory spill files are written to. */
  readonly directory: string
}>()("reins/truncate/Truncate") {
  static readonly layer = Layer.effect(
    Truncate,
    Effect.gen(function* () {
      const directory = path.join(yield* DataDir, "tool-output")
      const limits = yield* TruncateLimits
      const apply = Effect.fn("Truncate.apply")(function* (text: string, options: TruncateOptions) {
        const maxLines = options.maxLines ?? limits.maxLines
        const maxBytes = options.maxBytes ?? limits.maxBytes
        const result = cut(text, options.direction, maxLines, maxBytes)
        if (!result.truncated) {
          return { content: text, truncated: false, totalLines: result.totalLines, totalBytes: result.totalBytes }
        }
        const file = path.join(directory, `${options.sessionID}-${options.callID.replace(/[^\w.-]/g, "_")}.txt`)
        yield* Effect.try({
          try: () => {
            fs.mkdirSync(directory, { recursive: true })
            fs.writeFileSync(file, text)
          },
          catch: (e) => {
            const code = (e as NodeJS.ErrnoException).code
            return code === "ENOSPC"
              ? new TruncateError({ reason: "disk-full", message: `The disk is full: could not save the full tool output to ${file}. Free some disk space.` })
              : new TruncateError({ reason: "io", message: `Could not save the full tool output to ${file}: ${(e as Error).message}` })
          }
        })
        const note = notice(file, result.droppedLines, result.totalLines, result.totalBytes, options.direction)
        const content = options.direction === "head" ? `${result.kept}\n\n${note}` : `${note}\n\n${result.kept}`
        yield* Effect.annotateCurrentSpan({ "tool.truncated": true, "tool.output_bytes": result.totalBytes })
        return { content, truncated: true, outputPath: file, totalLines: result.totalLines, totalBytes: result.totalBytes }
      })
      return Truncate.of({ apply, directory })
    })
  )
}
