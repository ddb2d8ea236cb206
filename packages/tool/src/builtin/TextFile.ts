import { Effect, Semaphore } from "effect"
import * as fs from "node:fs"
import { specialKind } from "./Files.ts"

/** A text file as the edit tools see it: the text with LF endings, and how to write it back. */
export interface TextFile {
  /** The content with `\r\n` turned into `\n` and without a byte-order mark. */
  readonly text: string
  readonly bom: boolean
  readonly crlf: boolean
}

const BOM = "\uFEFF"

/** Splits raw file content into LF text plus the BOM and line-ending style to restore on write. */
export const decodeText = (raw: string): TextFile => {
  const bom = raw.startsWith(BOM)
  const body = bom ? raw.slice(1) : raw
  // Only a file whose every line ends in CRLF is converted; mixed endings are left exactly as they are.
  const crlf = body.includes("\r\n") && !/(^|[^\r])\n/.test(body)
  return { text: crlf ? body.replace(/\r\n/g, "\n") : body, bom, crlf }
}

/** Decodes file bytes as UTF-8, keeping a BOM visible to `decodeText`. */
export const decodeBytes = (bytes: Uint8Array): TextFile => decodeText(new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes))

/**
 * The bytes to write for `text` (LF) in the file's original style. Only the line breaks become
 * CRLF: a `\r` that is part of a line's content (`foo\r\r\n`) stays where it was.
 */
export const encodeText = (file: Pick<TextFile, "bom" | "crlf">, text: string) => (file.bom ? BOM : "") + (file.crlf ? text.replace(/\n/g, "\r\n") : text)

/**
 * Why an existing path must not be written, with what to do instead; undefined when it may be.
 * Not a regular file (opening a FIFO for writing waits for a reader, forever if none comes),
 * read-only (no write bit at all, which even root respects here), or no write access for this process.
 */
export const unwritableReason = (target: string, stat: fs.Stats): Effect.Effect<string | undefined> => {
  const kind = stat.isDirectory() ? undefined : specialKind(stat)
  if (kind !== undefined) {
    return Effect.succeed(`it is ${kind}, not a regular file, and is not written: writing to it could block forever. Write a regular file instead`)
  }
  if (stat.isFile() && (stat.mode & 0o222) === 0) {
    return Effect.succeed(
      `it is read-only (mode ${(stat.mode & 0o7777).toString(8).padStart(4, "0")}). Leave it unchanged, or ask the user to make it writable`
    )
  }
  return Effect.tryPromise(() => fs.promises.access(target, fs.constants.W_OK)).pipe(
    Effect.as(undefined),
    Effect.orElseSucceed(() => "this process may not write it. Leave it unchanged, or ask the user to make it writable")
  )
}

/**
 * Gives `updated` the final-newline state of `original`: an edit never adds or drops the newline
 * at the end of a file (an emptied file stays empty).
 */
export const keepFinalNewline = (original: string, updated: string) => {
  if (updated === "" || original === "") return updated
  const had = original.endsWith("\n")
  const has = updated.endsWith("\n")
  if (had && !has) return `${updated}\n`
  if (!had && has) return updated.slice(0, -1)
  return updated
}

// One lock per absolute path, shared by every tool that rewrites files.
const locks = new Map<string, Semaphore.Semaphore>()

const lockFor = (target: string) =>
  Effect.suspend(() => {
    const existing = locks.get(target)
    if (existing) return Effect.succeed(existing)
    return Effect.map(Semaphore.make(1), (made) => {
      const raced = locks.get(target)
      if (raced) return raced
      locks.set(target, made)
      return made
    })
  })

/**
 * Runs `effect` holding the lock of every path in `targets` (taken in sorted order, so two callers
 * locking overlapping sets never deadlock): one rewrite of a file at a time.
 */
export const withFileLocks = <A, E, R>(targets: ReadonlyArray<string>, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.suspend(() => {
    const sorted = [...new Set(targets)].sort()
    return sorted.reduceRight<Effect.Effect<A, E, R>>((inner, target) => Effect.flatMap(lockFor(target), (lock) => lock.withPermits(1)(inner)), effect)
  })
