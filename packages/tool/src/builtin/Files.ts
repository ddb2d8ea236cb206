import { Effect, Result } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { isInside, pathRequests } from "@reins/permission"
import { writeFileSafely } from "./SafeWrite.ts"
import { ToolError, type PermissionNeed, type ToolContext } from "../Tool.ts"

/** A `failed` ToolError; the message tells the model what to do next. */
export const fail = (message: string) => new ToolError({ reason: "failed", message })

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error))

/** Resolves a path the model gave against the working directory. */
export const resolvePath = (ctx: ToolContext, given: string | undefined) => path.resolve(ctx.cwd, given ?? ".")

export { isInside }

/** How a path is shown in titles: relative when inside the working directory. */
export const displayPath = (ctx: ToolContext, target: string) => (isInside(ctx.cwd, target) ? path.relative(ctx.cwd, target) || "." : target)

/**
 * The needs of a tool touching `target`: `external_directory` first when it lies outside the
 * working directory, then the tool's own permission on the absolute path — and on the real
 * location too when a symlink leads elsewhere, so a link to `.env` is judged as `.env`.
 */
export const pathNeeds = (
  ctx: ToolContext,
  permission: string,
  target: string,
  options: { readonly kind: "file" | "directory"; readonly always: ReadonlyArray<string>; readonly title?: string }
): Array<PermissionNeed> => pathRequests(ctx.cwd, permission, target, options)

/** A directory glob for "always allow": everything beside (or below) the target. */
export const dirGlob = (target: string, kind: "file" | "directory") => path.join(kind === "file" ? path.dirname(target) : target, "*")

/** `stat` that answers `undefined` for a missing path. */
export const statPath = (target: string) =>
  Effect.try({
    try: () => fs.statSync(target, { throwIfNoEntry: false }),
    catch: (e) => fail(`Could not stat ${target}: ${describe(e)}`)
  })

/** What a path that is not a regular file is, for messages; undefined for a regular file. */
export const specialKind = (stat: fs.Stats) =>
  stat.isFile()
    ? undefined
    : stat.isDirectory()
      ? "a directory"
      : stat.isFIFO()
        ? "a FIFO (named pipe)"
        : stat.isSocket()
          ? "a socket"
          : stat.isCharacterDevice()
            ? "a character device"
            : stat.isBlockDevice()
              ? "a block device"
              : "not a regular file"

/** The refusal for a path that is not a regular file: reading it could block forever or never end. */
export const notRegular = (target: string, kind: string) =>
  fail(
    `${target} is ${kind}, not a regular file, and is not read: reading it could block forever or never end. ` +
      "Only regular files can be read; use bash with a bounded command (e.g. timeout 5 head -c 1000) if you really need its data."
  )

// O_NONBLOCK: opening a FIFO for reading without a writer returns at once instead of hanging.
const OPEN_FLAGS = fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | fs.constants.O_NOCTTY

/**
 * Reads a whole regular file as bytes. It is opened without blocking and checked on the open
 * descriptor, so a FIFO or device (even one swapped in after a stat) is refused, never waited on.
 */
export const readBytes = (target: string) =>
  Effect.acquireUseRelease(
    Effect.tryPromise({
      try: () => fs.promises.open(target, OPEN_FLAGS),
      catch: (e) => fail(`Could not read ${target}: ${describe(e)}. Check the path and permissions.`)
    }),
    (handle) =>
      Effect.gen(function* () {
        const stat = yield* Effect.tryPromise({ try: () => handle.stat(), catch: (e) => fail(`Could not read ${target}: ${describe(e)}.`) })
        const kind = specialKind(stat)
        if (kind !== undefined) return yield* notRegular(target, kind)
        return yield* Effect.tryPromise({
          try: () => handle.readFile(),
          catch: (e) => fail(`Could not read ${target}: ${describe(e)}. Check the path and permissions.`)
        })
      }),
    (handle) => Effect.ignore(Effect.tryPromise(() => handle.close()))
  )

/** Writes a file, creating its parent directories. */
export const writeText = (target: string, content: string) =>
  Effect.tryPromise({
    // an existing file is replaced whole or not at all, through its symlinks, keeping its mode
    try: () => writeFileSafely(target, content),
    catch: (e) => fail(`Could not write ${target}: ${describe(e)}. Check that the path is writable.`)
  })

const BINARY_EXTENSIONS = new Set(
  (
    "7z a avi bin bmp bz2 class dat db dll dmg doc docx dylib eot exe flac gif gz ico iso jar jpeg jpg lib mkv mov mp3 mp4 " +
    "o obj odp ods odt ogg otf pdf png ppt pptx psd pyc pyo rar so sqlite sqlite3 tar tgz tif tiff ttf wasm wav webm webp " +
    "woff woff2 xls xlsx xz zip zst"
  ).split(" ")
)

/** Binary by extension, or by a NUL byte in the first 8 KiB. */
export const isBinary = (target: string, bytes: Uint8Array) => {
  if (BINARY_EXTENSIONS.has(path.extname(target).slice(1).toLowerCase())) return true
  const head = bytes.subarray(0, 8192)
  return head.includes(0)
}

/** Binary by extension alone, for skipping files before reading them. */
export const hasBinaryExtension = (target: string) => BINARY_EXTENSIONS.has(path.extname(target).slice(1).toLowerCase())

/** Directory names no search descends into. */
export const SEARCH_SKIP = new Set([".git", "node_modules"])

/** One directory entry met during a walk. */
export interface Entry {
  readonly path: string
  /** Relative to the walk's root, `/`-separated. */
  readonly rel: string
  readonly name: string
  readonly isDirectory: boolean
}

/** Lists a directory sorted by name; `undefined` when it cannot be read. */
export const readDirectory = Effect.fnUntraced(function* (dir: string) {
  const read = yield* Effect.result(Effect.tryPromise({ try: () => fs.promises.readdir(dir, { withFileTypes: true }), catch: (e) => fail(describe(e)) }))
  if (Result.isFailure(read)) return undefined
  return read.success
    .map((d) => ({ name: d.name, isDirectory: d.isDirectory(), isFile: d.isFile() }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
})

/** Modification time in ms; a file that vanished or cannot be stat'ed only sorts last. */
export const mtimeOf = (target: string) =>
  Effect.try({ try: () => fs.statSync(target, { throwIfNoEntry: false })?.mtimeMs ?? 0, catch: (e) => fail(describe(e)) }).pipe(Effect.orElseSucceed(() => 0))

/** Checks that `dir` is a directory the search can start from. */
export const searchRoot = Effect.fnUntraced(function* (dir: string) {
  const stat = yield* statPath(dir)
  if (stat === undefined) return yield* fail(`Directory not found: ${dir}. Check the path with the list tool.`)
  if (!stat.isDirectory()) return yield* fail(`${dir} is a file, not a directory. Give a directory as path.`)
  return dir
})

/** For permission needs, which are computed before the call runs: is `target` an existing file? */
export const isExistingFile = (target: string) =>
  // existsSync never throws (it answers false on access errors), so the stat below is safe.
  fs.existsSync(target) && fs.statSync(target, { throwIfNoEntry: false })?.isFile() === true
