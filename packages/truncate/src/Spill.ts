import { Schema } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"

/** Saving a full output failed; the message says what to do. */
export class TruncateError extends Schema.TaggedError<TruncateError>()("TruncateError", {
  reason: Schema.Literals(["disk-full", "io"]),
  message: Schema.String
}) {}

/** The spill directory inside the data directory. */
export const spillDirectory = (dataDir: string) => path.join(dataDir, "tool-output")

const safe = (s: string) => s.replace(/[^\w.-]/g, "_")

/**
 * One folder per session, `<dir>/<sessionID>`: the permission rules let a session read its own
 * folder without a question, and nobody else's.
 */
export const spillFolder = (directory: string, sessionID: string) =>
  path.join(
    directory,
    safe(sessionID).replace(/^\.*$/, (dots) => `_${"_".repeat(dots.length)}`)
  )

/** One file per session and call: `<dir>/<sessionID>/<callID>.txt`. */
export const spillPath = (directory: string, sessionID: string, callID: string) => path.join(spillFolder(directory, sessionID), `${safe(callID)}.txt`)

/** A filesystem error while saving output, as a message the user (or model) can act on. */
export const spillError = (error: unknown, file: string) => {
  const code = (error as NodeJS.ErrnoException).code
  return code === "ENOSPC" || code === "EDQUOT"
    ? new TruncateError({
        reason: "disk-full",
        message: `The disk is full: could not save the full tool output to ${file}. Free some disk space, then run the tool again.`
      })
    : new TruncateError({ reason: "io", message: `Could not save the full tool output to ${file}: ${(error as Error).message}` })
}

/** Writes a whole output to its spill file, without blocking the event loop (an output can be megabytes). */
export const writeSpill = async (file: string, text: string) => {
  await fs.promises.mkdir(path.dirname(file), { recursive: true })
  await fs.promises.writeFile(file, text)
}
