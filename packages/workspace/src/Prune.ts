import type { FileChange, Part } from "@reins/domain"
import * as fs from "node:fs"
import * as path from "node:path"
import { usersOf } from "./InUse.ts"
import { JOURNAL } from "./Restore.ts"

/** Where the data dir keeps its checkpoint stores: one directory per project (a hash of its real path). */
export const checkpointsRoot = (dataDir: string) => path.join(dataDir, "checkpoints")

/** What a prune is told: the data dir's `checkpoints`, the copies stored sessions refer to, and how old a copy must be. */
export interface PruneOptions {
  /** The directory of the project stores (`checkpoints` in the data dir). */
  readonly root: string
  /** The contents (hashes) the stored sessions' recorded changes name: never removed. */
  readonly referenced: ReadonlySet<string>
  /** A copy written or used less than this long ago is kept (a step of a process that is not over names it soon). */
  readonly olderThanMs: number
  readonly now: number
  /** Counts what would go, removes nothing. */
  readonly dryRun: boolean
}

/** What a prune did: the stores looked at and those left alone (and why), the copies found, removed and kept. */
export interface PruneReport {
  readonly stores: number
  readonly skipped: ReadonlyArray<{ readonly store: string; readonly reason: string }>
  readonly copies: number
  readonly removed: number
  readonly removedBytes: number
  readonly kept: number
  readonly keptBytes: number
}

/** The contents a part names: the before and after of each file a step changed. */
export const hashesOf = (parts: ReadonlyArray<Part>, into: Set<string>) => {
  const add = (change: FileChange) => {
    for (const state of [change.before, change.after]) if (state.kind === "file" && state.hash !== undefined) into.add(state.hash)
  }
  for (const part of parts) if (part.type === "patch") for (const change of part.files) add(change)
  return into
}

/** The contents a store's index names (the files as its last tracker left them); undefined when it cannot be read. */
const indexed = (store: string): ReadonlySet<string> | undefined => {
  let text: string
  try {
    text = fs.readFileSync(path.join(store, "index.json"), "utf8")
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" ? new Set() : undefined
  }
  try {
    const entries = JSON.parse(text) as Array<[string, { state?: { hash?: unknown } }]>
    if (!Array.isArray(entries)) return undefined
    const hashes = new Set<string>()
    for (const entry of entries) {
      const hash = Array.isArray(entry) ? entry[1]?.state?.hash : undefined
      if (typeof hash === "string") hashes.add(hash)
    }
    return hashes
  } catch {
    return undefined
  }
}

/** Why a store is left alone: a restore to finish, a process using it; else undefined. Marks of processes gone go (unless `dryRun`). */
const whyLeftAlone = (store: string, dryRun: boolean): string | undefined => {
  if (fs.existsSync(path.join(store, JOURNAL))) return "an undo or redo was cut off there: run reins in that project (or reins undo) to finish it first"
  const users = usersOf(store)
  if (!dryRun) for (const user of users) if (user.gone) fs.rmSync(user.file, { force: true })
  const live = users.find((user) => !user.gone)
  if (live !== undefined) return `reins process ${live.pid} on ${live.host} is using it (if that process is gone, delete ${live.file} and prune again)`
  return undefined
}

const isStore = (name: string) => /^[0-9a-f]{24}$/.test(name)
const isObjectDir = (name: string) => /^[0-9a-f]{2}$/.test(name)

/**
 * Removes the copies of file contents that no stored session's recorded changes name, that no store's index names,
 * and that were not written or used for `olderThanMs`; a store with an undo to finish or a process using it is left
 * whole. The temporary files of a copy that was cut off (as old) go too.
 */
export const pruneCheckpoints = (options: PruneOptions): PruneReport => {
  const skipped: Array<{ store: string; reason: string }> = []
  let stores = 0
  let copies = 0
  let removed = 0
  let removedBytes = 0
  let kept = 0
  let keptBytes = 0
  const cutoff = options.now - options.olderThanMs
  let names: Array<string>
  try {
    names = fs.readdirSync(options.root)
  } catch {
    names = []
  }
  for (const name of names.filter(isStore).sort()) {
    const store = path.join(options.root, name)
    stores++
    const why = whyLeftAlone(store, options.dryRun)
    const index = why === undefined ? indexed(store) : undefined
    if (why !== undefined || index === undefined) {
      skipped.push({ store, reason: why ?? `its index.json cannot be read (delete it and the next reins there reads every file again)` })
      continue
    }
    const objects = path.join(store, "objects")
    let dirs: Array<string>
    try {
      dirs = fs.readdirSync(objects).filter(isObjectDir)
    } catch {
      continue
    }
    for (const dir of dirs) {
      let files: Array<string>
      try {
        files = fs.readdirSync(path.join(objects, dir))
      } catch {
        continue
      }
      for (const file of files) {
        const full = path.join(objects, dir, file)
        let stat: fs.Stats
        try {
          stat = fs.lstatSync(full)
        } catch {
          continue
        }
        if (!stat.isFile()) continue
        const temporary = file.endsWith(".tmp")
        const hash = `${dir}${file}`
        if (!temporary) copies++
        const keep = stat.mtimeMs > cutoff || (!temporary && (options.referenced.has(hash) || index.has(hash)))
        if (keep) {
          if (!temporary) {
            kept++
            keptBytes += stat.size
          }
          continue
        }
        if (!options.dryRun) {
          try {
            fs.rmSync(full)
          } catch {
            continue
          }
        }
        if (!temporary) removed++
        removedBytes += stat.size
      }
    }
  }
  return { stores, skipped, copies, removed, removedBytes, kept, keptBytes }
}
