import { Context, Effect } from "effect"
import { fail, isBinary, readBytes } from "./builtin/Files.ts"
import { writeFileSafely } from "./builtin/SafeWrite.ts"
import { sniffImage } from "./Media.ts"
import type { ToolError } from "./Tool.ts"

/**
 * Where the file tools (read, edit, write, apply_patch) read and write a file's contents. The
 * default is the disk; an editor connected over ACP gives its own, so the agent sees and changes
 * the editor's unsaved buffers. Checks on the path itself (stat, kind, mode) stay on the disk.
 */
export interface FileAccessService {
  /** The bytes of a regular file (a FIFO or device is refused, never waited on). */
  readonly read: (path: string) => Effect.Effect<Uint8Array, ToolError>
  /** Replaces a file's content whole (through its symlinks, keeping its mode), or creates it with its parent directories. */
  readonly write: (path: string, content: string | Uint8Array) => Effect.Effect<void, ToolError>
}

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error))

/** The files on disk. */
export const diskFiles: FileAccessService = {
  read: readBytes,
  write: (target, content) =>
    Effect.tryPromise({
      try: () => writeFileSafely(target, content),
      catch: (e) => fail(`Could not write ${target}: ${describe(e)}. Check that the path is writable.`)
    })
}

/** The file access the tools use: the disk unless a caller (the ACP agent) provides another for a turn. */
export const FileAccess = Context.Reference<FileAccessService>("reins/tool/FileAccess", { defaultValue: () => diskFiles })

/** Whether bytes read from `path` are text an editor holds as a buffer (not an image, not binary). */
export const isTextContent = (path: string, bytes: Uint8Array) => sniffImage(bytes) === undefined && !isBinary(path, bytes)
