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
  /** Says the content under `hash` is used now (its time renewed: a prune keeps it); false when it is not there. */
  readonly touch: (hash: string) => boolean
}

export const hashOf = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")

const objectsOf = (dir: string) => path.join(dir, "objects")
const fileIn = (objects: string, hash: string) => path.join(objects, hash.slice(0, 2), hash.slice(2))

export const makeObjectStore = (dir: string): ObjectStore => {
  const objects = objectsOf(dir)
  const fileOf = (hash: string) => fileIn(objects, hash)
  let temp = 0
  const has = (hash: string) => fs.existsSync(fileOf(hash)) || fs.existsSync(asideOf(fileOf(hash)))
  const touch = (hash: string) => {
    const file = fileOf(hash)
    try {
      const now = new Date()
      fs.utimesSync(file, now, now)
      return true
    } catch (error) {
      // there, but its time cannot be set (a read-only store): still there
      return (error as NodeJS.ErrnoException).code !== "ENOENT" && fs.existsSync(file)
    }
  }
  return {
    has,
    touch,
    put: (bytes) => {
      const hash = hashOf(bytes)
      // stored already: its time says it was used now (a prune keeps what was used lately)
      if (touch(hash)) return hash
      const file = fileOf(hash)
      fs.mkdirSync(path.dirname(file), { recursive: true })
      const tmp = `${file}.${process.pid}-${temp++}.tmp`
      fs.writeFileSync(tmp, bytes, { mode: 0o600 })
      fs.renameSync(tmp, file)
      return hash
    },
    get: (hash) => {
      // set aside by a prune that was killed as it looked at it: still the content
      for (const file of [fileOf(hash), asideOf(fileOf(hash))])
        try {
          return fs.readFileSync(file)
        } catch {
          // the next name
        }
      return undefined
    }
  }
}

/** One file of a store's `objects`: a content (by its hash), a temporary file of a write, or one a prune set aside. */
export type StoredFile =
  | { readonly kind: "object"; readonly hash: string; readonly file: string }
  | { readonly kind: "temporary"; readonly file: string }
  | { readonly kind: "aside"; readonly hash: string; readonly file: string }

const HASH_REST = /^[0-9a-f]{62}$/
const TEMPORARY = /^[0-9a-f]{62}\.\d+-\d+\.tmp$/
const ASIDE = /^([0-9a-f]{62})\.pruning$/

/** A name set aside by a prune while it checks the content is still unused: `<file>.pruning`. */
export const asideOf = (file: string) => `${file}.pruning`

/**
 * The files of the store in `dir` (a directory it cannot read is named in `unreadable`); names that are none of a
 * store's are left out (never touched).
 */
export const storedFiles = (dir: string): { readonly files: ReadonlyArray<StoredFile>; readonly unreadable: ReadonlyArray<string> } => {
  const objects = objectsOf(dir)
  const files: Array<StoredFile> = []
  const unreadable: Array<string> = []
  const read = (at: string) => {
    try {
      return fs.readdirSync(at)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") unreadable.push(at)
      return []
    }
  }
  for (const sub of read(objects)) {
    if (!/^[0-9a-f]{2}$/.test(sub)) continue
    for (const name of read(path.join(objects, sub))) {
      const file = path.join(objects, sub, name)
      const aside = ASIDE.exec(name)
      if (HASH_REST.test(name)) files.push({ kind: "object", hash: `${sub}${name}`, file })
      else if (TEMPORARY.test(name)) files.push({ kind: "temporary", file })
      else if (aside !== null) files.push({ kind: "aside", hash: `${sub}${aside[1]}`, file })
    }
  }
  return { files, unreadable }
}
