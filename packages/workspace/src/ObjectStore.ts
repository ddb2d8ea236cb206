import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"

/**
 * File contents by their SHA-256, one file each under `dir/objects/ab/cdef…`: what a checkpoint keeps of a file, and
 * what undo writes back. A content is stored once however many paths and steps hold it; each is written to a temp
 * file and renamed, so a crash never leaves a torn object under its hash. An object's time is when it was last stored
 * (written, or found there already): what `pruneCheckpoints` goes by.
 */
export interface ObjectStore {
  /** Stores `bytes`; their hash. */
  readonly put: (bytes: Uint8Array) => string
  /** The content stored under `hash`; undefined when it is not there. */
  readonly get: (hash: string) => Uint8Array | undefined
  readonly has: (hash: string) => boolean
}

export const hashOf = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")

export const makeObjectStore = (dir: string): ObjectStore => {
  const objects = path.join(dir, "objects")
  const fileOf = (hash: string) => path.join(objects, hash.slice(0, 2), hash.slice(2))
  let temp = 0
  const has = (hash: string) => fs.existsSync(fileOf(hash))
  return {
    has,
    put: (bytes) => {
      const hash = hashOf(bytes)
      const file = fileOf(hash)
      // stored already: its time says it was used now (a prune keeps what was used lately)
      try {
        const now = new Date()
        fs.utimesSync(file, now, now)
        return hash
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOENT" && fs.existsSync(file)) return hash
      }
      fs.mkdirSync(path.dirname(file), { recursive: true })
      const tmp = `${file}.${process.pid}-${temp++}.tmp`
      fs.writeFileSync(tmp, bytes, { mode: 0o600 })
      fs.renameSync(tmp, file)
      return hash
    },
    get: (hash) => {
      try {
        return fs.readFileSync(fileOf(hash))
      } catch {
        return undefined
      }
    }
  }
}
