import { type FileChange, type Part, processAlive } from "@reins/domain"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { LIVE_MS, usersOf } from "./InUse.ts"
import { asideOf, type StoredFile, storedFiles } from "./ObjectStore.ts"
import { JOURNAL } from "./Restore.ts"
import { databasesOf, projectOfStore, UNRECORDED, unrecordedFile } from "./StoreInfo.ts"
import { indexedHashes } from "./StoreIndex.ts"

/** Copies written or used within this long are kept whatever `olderThanMs` says: a step may be under way. */
export const MIN_AGE_MS = 60 * 60_000

/** What a prune is told: the data dir's `checkpoints`, the copies stored sessions refer to, and how old a copy must be. */
export interface PruneOptions {
  /** The directory of the project stores (`checkpoints` in the data dir). */
  readonly root: string
  /** The contents (hashes) the stored sessions' recorded changes name: never removed. */
  readonly referenced: ReadonlySet<string>
  /** The database those sessions are from (`databaseIdentity`): a store another database uses is left alone. */
  readonly database: string
  /** A copy written or used less than this long ago is kept (never less than `MIN_AGE_MS`). */
  readonly olderThanMs: number
  readonly now: number
  /** Counts what would go, changes nothing. */
  readonly dryRun: boolean
}

/** A store left whole, the project it copies (when recorded) and why. */
export interface LeftAlone {
  readonly store: string
  readonly project?: string
  readonly reason: string
}

/** What a prune did: the stores looked at and those left alone, the copies found, removed and kept. */
export interface PruneReport {
  readonly stores: number
  readonly skipped: ReadonlyArray<LeftAlone>
  readonly copies: number
  readonly removed: number
  readonly removedBytes: number
  readonly kept: number
  readonly keptBytes: number
  /** Temporary files of copies cut off (a process killed as it wrote one), removed. */
  readonly temporaries: number
  /** Copies that could not be removed (kept). */
  readonly failed: number
}

/** The contents a part names: the before and after of each file a step changed. */
export const hashesOf = (parts: ReadonlyArray<Part>, into: Set<string>) => {
  const add = (change: FileChange) => {
    for (const state of [change.before, change.after]) if (state.kind === "file" && state.hash !== undefined) into.add(state.hash)
  }
  for (const part of parts) if (part.type === "patch") for (const change of part.files) add(change)
  return into
}

/** Why a store is left whole (a restore to finish, a process using it, its databases): undefined when it may be pruned. */
const whyLeftAlone = (store: string, options: PruneOptions): string | undefined => {
  if (fs.existsSync(path.join(store, JOURNAL))) return "an undo or redo was cut off there: run reins in that project (or reins undo) to finish it first"
  const users = usersOf(store, options.now)
  const live = users.find((user) => !user.gone)
  if (live !== undefined)
    return live.pid === 0
      ? `a reins process is using it (${live.file}; a mark not renewed for an hour is taken for one left by a process gone)`
      : `reins process ${live.pid} on ${live.host} is using it (a mark not renewed for an hour is taken for one left by a process gone)`
  if (!options.dryRun)
    for (const user of users)
      try {
        fs.rmSync(user.file, { force: true })
      } catch {
        // stale whatever happens
      }
  const databases = databasesOf(store)
  if (databases === undefined) return "the databases that use it cannot be read"
  if (databases.length === 0) return "no database is recorded as using it"
  if (databases.includes(UNRECORDED))
    return `it was used by a reins that did not record which database's sessions use it: if only the sessions of ${options.database} ever did, delete ${unrecordedFile(store)} and prune again`
  const other = databases.find((database) => database !== options.database)
  if (other !== undefined) return `sessions of another database use it too (${other}), which this prune does not read`
  return undefined
}

/** Puts back what a prune killed half way set aside (unless the copy was written anew since). */
const restoreAside = (files: ReadonlyArray<StoredFile>) => {
  for (const f of files) {
    if (f.kind !== "aside") continue
    const file = f.file.slice(0, -".pruning".length)
    try {
      if (fs.existsSync(file)) fs.rmSync(f.file)
      else fs.renameSync(f.file, file)
    } catch {
      // looked at again next time; `get` reads it meanwhile
    }
  }
}

/** Takes a copy out by renaming it aside first: one used meanwhile (its time renewed) is put back. True when removed. */
export const removeUnused = (file: string, cutoff: number): boolean => {
  const aside = asideOf(file)
  fs.renameSync(file, aside)
  if (fs.lstatSync(aside).mtimeMs <= cutoff) {
    fs.rmSync(aside)
    return true
  }
  // stored again while it was looked at: back in place, unless it was written anew meanwhile
  if (fs.existsSync(file)) fs.rmSync(aside)
  else fs.renameSync(aside, file)
  return false
}

/**
 * Removes the copies of file contents that no stored session's recorded changes name, that no store's index names
 * (the files as last seen, and what recent steps changed from and to), and that were not written or used for
 * `olderThanMs`. A store with an undo to finish, a process using it, sessions of another database (or none recorded),
 * or an index an older reins saved is left whole; so is one that cannot be read in full. A copy is renamed aside before
 * it is removed, so one a process stores again meanwhile (its time renewed) is put back; what a prune killed half way
 * set aside comes back first. Temporary files of copies cut off (as old) go too. One prune at a time. Throws when
 * `root` exists but cannot be read or locked, or another prune is running.
 */
export const pruneCheckpoints = (options: PruneOptions): PruneReport => {
  const skipped: Array<LeftAlone> = []
  const counts = { stores: 0, copies: 0, removed: 0, removedBytes: 0, kept: 0, keptBytes: 0, temporaries: 0, failed: 0 }
  const cutoff = options.now - Math.max(options.olderThanMs, MIN_AGE_MS)
  let names: Array<string>
  try {
    names = fs.readdirSync(options.root)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") names = []
    else throw new Error(`Cannot read ${options.root}: ${(error as Error).message}`)
  }
  const lock = names.length === 0 || options.dryRun ? { renew: () => {}, unlock: () => {} } : lockPrune(options.root, options.now)
  try {
    sweep(names, options, cutoff, counts, skipped, lock.renew)
  } finally {
    lock.unlock()
  }
  return { ...counts, skipped }
}

/**
 * One prune at a time (each would take the copies the other set aside for ones a prune killed left): `prune.lock` in
 * `root`, renewed as the prune goes (the returned `renew`), or an error naming it. A lock left by a prune that is gone
 * (of this host and not running, or not renewed for `LIVE_MS`) is taken over: renamed away first, and taken only if
 * it is still the one judged gone.
 */
const lockPrune = (root: string, now: number): { readonly renew: () => void; readonly unlock: () => void } => {
  const file = path.join(root, "prune.lock")
  const me = `${process.pid}@${os.hostname()}`
  const held = {
    renew: () => {
      try {
        const at = new Date()
        fs.utimesSync(file, at, at)
      } catch {
        // gone: the prune still ends, its lock with it
      }
    },
    unlock: () => fs.rmSync(file, { force: true })
  }
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      fs.writeFileSync(file, me, { flag: "wx" })
      return held
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw new Error(`Cannot lock ${root} for the prune (${file}): ${(error as Error).message}`)
    }
    let holder: string
    let since: number
    try {
      holder = fs.readFileSync(file, "utf8")
      since = fs.statSync(file).mtimeMs
    } catch {
      continue
    }
    const at = holder.indexOf("@")
    const pid = Number(holder.slice(0, at))
    const running = holder.slice(at + 1) === os.hostname() ? Number.isInteger(pid) && pid > 0 && processAlive(pid) : now - since < LIVE_MS
    if (running)
      throw new Error(`Another reins checkpoints prune is running (${holder}): wait for it to end, then prune again (if it is gone, delete ${file}).`)
    // the stale lock renamed away, then checked: another prune may have taken it over meanwhile
    const away = `${file}.${randomUUID()}`
    try {
      fs.renameSync(file, away)
    } catch {
      continue
    }
    const same = (() => {
      try {
        return fs.readFileSync(away, "utf8") === holder && fs.statSync(away).mtimeMs === since
      } catch {
        return false
      }
    })()
    if (same) fs.rmSync(away, { force: true })
    else {
      // another prune's fresh lock: back in place, and that prune runs
      if (!fs.existsSync(file)) fs.renameSync(away, file)
      else fs.rmSync(away, { force: true })
      throw new Error(`Another reins checkpoints prune took over ${file} meanwhile: wait for it to end, then prune again.`)
    }
  }
  throw new Error(`Cannot lock ${root} for the prune (${file}): it keeps changing; prune again.`)
}

type Counts = { -readonly [K in keyof Omit<PruneReport, "skipped">]: number }

/** Looks at each store of `names` (below `options.root`): left alone, or its unused copies removed. */
const sweep = (names: ReadonlyArray<string>, options: PruneOptions, cutoff: number, counts: Counts, skipped: Array<LeftAlone>, renew: () => void) => {
  for (const name of names.filter((n) => /^[0-9a-f]{24}$/.test(n)).sort()) {
    renew()
    const store = path.join(options.root, name)
    counts.stores++
    const project = projectOfStore(store)
    const leave = (reason: string) => skipped.push({ store, ...(project !== undefined ? { project } : {}), reason })
    const { files, unreadable } = storedFiles(store)
    // what a prune killed half way set aside goes back first, whatever this one does with the store
    if (!options.dryRun) restoreAside(files)
    const why = whyLeftAlone(store, options)
    if (why !== undefined) {
      leave(why)
      continue
    }
    const indexed = indexedHashes(store, options.now)
    if (indexed === undefined) {
      leave("its index cannot be read (delete index.json and recent/: the next reins there reads every file again)")
      continue
    }
    if (indexed.older) {
      leave(
        `its index was last saved by an older reins, which does not say what its steps changed: run a turn there with this one first, or delete ${path.join(store, "index.json")} (the next reins there reads every file again) and prune again`
      )
      continue
    }
    const index = indexed.hashes
    if (unreadable.length > 0) {
      leave(`${unreadable[0]} cannot be read`)
      continue
    }
    for (const f of files) {
      let stat: fs.Stats
      try {
        stat = fs.lstatSync(f.file)
      } catch {
        continue
      }
      if (!stat.isFile()) continue
      // set aside by a prune killed half way (put back above), or by another prune at work now: not this one's
      if (f.kind === "aside") continue
      if (f.kind === "temporary") {
        if (stat.mtimeMs > cutoff) continue
        try {
          if (!options.dryRun) fs.rmSync(f.file)
          counts.temporaries++
        } catch {
          // left for the next prune
        }
        continue
      }
      counts.copies++
      const unused = stat.mtimeMs <= cutoff && !options.referenced.has(f.hash) && !index.has(f.hash)
      let removed = false
      if (unused) {
        try {
          removed = options.dryRun || removeUnused(f.file, cutoff)
        } catch {
          counts.failed++
        }
      }
      if (removed) {
        counts.removed++
        counts.removedBytes += stat.size
      } else {
        counts.kept++
        counts.keptBytes += stat.size
      }
    }
  }
}
