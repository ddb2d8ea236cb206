import { type FileChange, type FileState, processAlive } from "@reins/domain"
import * as fs from "node:fs"
import * as path from "node:path"
import { makeTreeIgnore } from "./Ignore.ts"
import { markInUse } from "./InUse.ts"
import type { ObjectStore } from "./ObjectStore.ts"
import { unsafePath } from "./Paths.ts"
import { readIndex, type Seen, saveIndex } from "./StoreIndex.ts"

/** The settings of a tracker: files larger than `maxFileBytes` are not copied (their changes are listed, not undone). */
export interface TrackerSettings {
  readonly maxFileBytes: number
  /** Directories (absolute) never checkpointed when they lie in the tree: the data dir, the store. */
  readonly skip?: ReadonlyArray<string>
}

/**
 * The files of one project directory as checkpoints know them: what each path is now (its content in the object
 * store), and what it was at each point a checkpoint began (`mark`), so that `changesSince` says what changed in
 * between, however many checkpoints overlapped. Learns of changes from a watcher on the tree (only the paths it
 * names are looked at), and by a full scan at start, when the watcher failed, or when told to.
 */
export interface Tracker {
  /**
   * Waits until the watcher has caught up with what happened so far: call before `mark` and `changesSince`. `waited`:
   * the caller waits for nothing else (a step's end), so its barrier is made at once rather than off the main thread.
   */
  readonly settle: (waited?: boolean) => Promise<void>
  /** Brings the known states up to date (what the watcher saw, or a full scan); the point reached. */
  readonly mark: () => number
  /** The paths that changed between point `since` and now (brought up to date first), before and after. */
  readonly changesSince: (since: number) => ReadonlyArray<FileChange>
  /** Says that these paths (relative) may have changed: a file tool's targets, seen without waiting for the watcher. */
  readonly touched: (paths: ReadonlyArray<string>) => void
  /** What `rel` is now, as last brought up to date. */
  readonly stateOf: (rel: string) => FileState
  /** Every path tracked and what it is now (brought up to date first). */
  readonly snapshot: () => ReadonlyMap<string, FileState>
  /** The watcher is on (false: every mark is a full scan). */
  readonly watching: () => boolean
  readonly close: () => void
}

const ABSENT: FileState = { kind: "absent" }

export const sameState = (a: FileState, b: FileState): boolean => {
  if (a.kind !== b.kind) return false
  switch (a.kind) {
    case "absent":
      return true
    case "directory":
      return b.kind === "directory" && a.mode === b.mode
    case "symlink":
      return b.kind === "symlink" && a.target === b.target
    case "file":
      // a file not copied is the same only with the same stat (its content unknown)
      return b.kind === "file" && a.mode === b.mode && a.size === b.size && a.hash === b.hash && (a.hash !== undefined || a.stamp === b.stamp)
  }
}

const posix = (rel: string) => rel.split(path.sep).join("/")

/** What `rel` (below `root`) is on disk now, its content put in `store`; `previous` spares reading a file whose stat did not change. */
const seenAt = (root: string, rel: string, previous: Seen | undefined, store: ObjectStore, settings: TrackerSettings): Seen => {
  const full = path.join(root, rel)
  let stat: fs.Stats
  try {
    stat = fs.lstatSync(full)
  } catch {
    return { state: ABSENT, stamp: "" }
  }
  const stamp = `${stat.mtimeMs}:${stat.ctimeMs}:${stat.size}:${stat.ino}:${stat.mode}`
  if (previous !== undefined && previous.stamp === stamp) return previous
  const mode = stat.mode & 0o7777
  if (stat.isDirectory()) return { state: { kind: "directory", mode }, stamp }
  if (stat.isSymbolicLink()) {
    try {
      return { state: { kind: "symlink", target: fs.readlinkSync(full) }, stamp }
    } catch {
      return { state: ABSENT, stamp: "" }
    }
  }
  if (!stat.isFile()) return { state: ABSENT, stamp: "" }
  // not copied: over the cap, or it cannot be read or stored (never taken for absent: undo would delete it)
  const uncopied: Seen = { state: { kind: "file", mode, size: stat.size, stamp }, stamp }
  if (stat.size > settings.maxFileBytes) return uncopied
  try {
    const bytes = fs.readFileSync(full)
    return { state: { kind: "file", mode, size: bytes.length, hash: store.put(bytes) }, stamp }
  } catch {
    return uncopied
  }
}

/** What `rel` (below `root`) is on disk now (a file's content put in `store`): what a restore compares with. */
export const lookPath = (root: string, rel: string, store: ObjectStore, settings: TrackerSettings): FileState =>
  seenAt(root, rel, undefined, store, settings).state

/** Barrier files (`s<pid>-<n>`) of processes gone: a process that ended before its last removal was done leaves one. */
const sweepBarriers = (dir: string) => {
  let names: Array<string>
  try {
    names = fs.readdirSync(dir)
  } catch {
    return
  }
  for (const name of names) {
    const pid = Number(/^s(\d+)-/.exec(name)?.[1])
    if (!Number.isInteger(pid) || pid === process.pid) continue
    if (!processAlive(pid)) fs.rmSync(path.join(dir, name), { force: true })
  }
}

/** How long the watcher's barrier is waited for before a full scan is done instead. */
const SETTLE_MS = 500

/** A tracker of `root`, its contents in `store`; `sideRoot` (the store's directory) holds the watcher's barrier. */
export const makeTracker = (root: string, sideRoot: string, store: ObjectStore, settings: TrackerSettings): Tracker => {
  const ignores = makeTreeIgnore(root)
  // the data dir and the store, when they lie inside the tree (reins run in the home directory): never checkpointed
  const own = (settings.skip ?? [])
    .map((dir) => path.relative(root, dir))
    .filter((rel) => rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel))
    .map(posix)
  const skipped = (rel: string) => ignores.skips(rel, false) || own.some((dir) => rel === dir || rel.startsWith(`${dir}/`))
  const known = new Map<string, Seen>()
  /** Per path that changed while tracked: its states, each from the point it was seen at. */
  const history = new Map<string, Array<{ readonly point: number; readonly state: FileState }>>()
  let point = 0
  let dirty = new Set<string>()
  let rescan = true

  // what an earlier process saw (its stat stamps and states): a file whose stamp is the same is not read again
  // while it lives, a prune leaves the store alone (what it knows of the files names copies no session refers to yet)
  const release = markInUse(sideRoot)
  const hints = new Map(readIndex(sideRoot)?.files ?? [])
  let initial = true
  const lookAt = (rel: string, previous: Seen | undefined) => seenAt(root, rel, previous ?? (initial ? hints.get(rel) : undefined), store, settings)

  const record = (rel: string, seen: Seen) => {
    const before = known.get(rel)
    const was = before?.state ?? ABSENT
    if (seen.state.kind === "absent") known.delete(rel)
    else known.set(rel, seen)
    // the first scan is where every later point starts from: no history
    if (initial) return
    if (sameState(was, seen.state)) return
    let states = history.get(rel)
    if (states === undefined) history.set(rel, (states = [{ point: 0, state: was }]))
    states.push({ point, state: seen.state })
  }

  /** Looks at `rel` and, for a directory, everything below it that is not skipped; a path gone takes what was below it. */
  const visit = (rel: string) => {
    if (rel === "" || skipped(rel)) {
      // a path now ignored leaves what is tracked, with no change recorded (it was not undone nor redone); only one
      // tracked before costs anything (the watcher names every path of an `npm install` in node_modules)
      const was = known.get(rel)
      if (was === undefined) return
      known.delete(rel)
      if (was.state.kind === "directory") for (const below of [...known.keys()]) if (below.startsWith(`${rel}/`)) known.delete(below)
      return
    }
    const previous = known.get(rel)
    // under a directory that is a link now: not a path of the project any more (never read through the link)
    const seen = unsafePath(root, rel) === undefined ? lookAt(rel, previous) : { state: ABSENT, stamp: "" }
    if (seen.state.kind === "directory" && ignores.skips(rel, true)) return
    record(rel, seen)
    if (seen.state.kind === "directory") walk(rel)
    // a directory gone (or replaced): what was below it went with it
    else if (previous?.state.kind === "directory")
      for (const below of [...known.keys()]) if (below.startsWith(`${rel}/`)) record(below, { state: ABSENT, stamp: "" })
  }

  const walk = (dir: string) => {
    let names: Array<string>
    try {
      names = fs.readdirSync(path.join(root, dir))
    } catch {
      return
    }
    for (const name of names) visit(dir === "" ? name : `${dir}/${name}`)
  }

  const fullScan = () => {
    ignores.forgetAll()
    const before = new Set(known.keys())
    walk("")
    for (const rel of before) {
      if (skipped(rel)) known.delete(rel)
      else if (!existsHere(rel)) record(rel, { state: ABSENT, stamp: "" })
    }
  }
  /** Whether `rel` is there itself (a dangling link is), reached without going through a link. */
  const existsHere = (rel: string) => {
    if (unsafePath(root, rel) !== undefined) return false
    try {
      fs.lstatSync(path.join(root, rel))
      return true
    } catch {
      return false
    }
  }

  // the barrier: a file written beside the store, under a watcher of its own, whose event comes after every event of
  // the tree that happened before it (one inotify queue); waited for before the dirty paths are read
  const sideDir = path.join(sideRoot, "watch")
  let sideWatcher: fs.FSWatcher | undefined
  let sentinel = 0
  const arrived = new Map<string, () => void>()
  let watcher: fs.FSWatcher | undefined
  try {
    fs.mkdirSync(sideDir, { recursive: true })
    sweepBarriers(sideDir)
    sideWatcher = fs.watch(sideDir, (_event, name) => {
      if (name !== null) arrived.get(String(name))?.()
    })
    watcher = fs.watch(root, { recursive: true }, (_event, name) => {
      if (name === null) rescan = true
      else dirty.add(posix(String(name)))
    })
    watcher.on("error", () => {
      rescan = true
      watcher?.close()
      watcher = undefined
    })
  } catch {
    watcher?.close()
    watcher = undefined
  }

  /** Closed: a mark or settle still pending (a step's checkpoint that began as the runtime ended) does no more work. */
  let closed = false

  /**
   * Waits until the watcher has told everything that happened before this call (else the next update is a full scan).
   * The barrier file is removed off the main thread, and made there too unless `waited` (a file made and removed on
   * the main thread cost ~0.5 ms of it a barrier): made later, it still comes after everything before the call. A
   * step's end waits for its barrier and nothing else: made at once, it comes sooner than through the thread pool.
   */
  const settle = (waited = false): Promise<void> => {
    if (closed || watcher === undefined || sideWatcher === undefined) return Promise.resolve()
    const name = `s${process.pid}-${sentinel++}`
    const file = path.join(sideDir, name)
    return new Promise<void>((resolve) => {
      let made = false
      let over = false
      const remove = () => fs.rm(file, { force: true }, () => {})
      const done = () => {
        if (over) return
        over = true
        clearTimeout(timer)
        arrived.delete(name)
        // a barrier not made yet is removed once it is (below)
        if (made) remove()
        // the rest of the batch the barrier came in (the tree's events dispatched after it) first
        setImmediate(resolve)
      }
      const timer = setTimeout(() => {
        rescan = true
        done()
      }, SETTLE_MS)
      arrived.set(name, done)
      const madeOrNot = (error: unknown) => {
        made = true
        if (error !== null) {
          rescan = true
          done()
        } else if (over) remove()
      }
      if (!waited) return fs.writeFile(file, "", madeOrNot)
      try {
        fs.writeFileSync(file, "")
        madeOrNot(null)
      } catch (error) {
        madeOrNot(error)
      }
    })
  }

  const update = () => {
    if (closed) return
    point++
    if (rescan || watcher === undefined) {
      rescan = false
      dirty = new Set()
      fullScan()
      return
    }
    const names = dirty
    dirty = new Set()
    // the paths changed so far are looked at again whatever the watcher said: it drops an event on a path that had one
    // a moment before (a file the user saves right after a step wrote it)
    for (const rel of history.keys()) names.add(rel)
    for (const rel of names) if (rel.endsWith(".gitignore")) ignores.forget(path.posix.dirname(rel) === "." ? "" : path.posix.dirname(rel))
    for (const rel of names) visit(rel)
  }

  const stateAt = (rel: string, at: number): FileState => {
    const states = history.get(rel)
    if (states === undefined) return known.get(rel)?.state ?? ABSENT
    let state = states[0]!.state
    for (const entry of states) if (entry.point <= at) state = entry.state
    return state
  }

  // the first scan: the tree as it is when checkpoints start (the files copied into the store once)
  fullScan()
  initial = false
  hints.clear()
  // the watcher was on before the scan began: what changed since is in `dirty`, no second scan needed
  rescan = watcher === undefined

  return {
    settle,
    mark: () => {
      update()
      return point
    },
    changesSince: (since) => {
      update()
      const out: Array<FileChange> = []
      for (const [rel, states] of history) {
        if (states.at(-1)!.point <= since) continue
        const before = stateAt(rel, since)
        const after = known.get(rel)?.state ?? ABSENT
        if (!sameState(before, after)) out.push({ path: rel, before, after })
      }
      return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    },
    touched: (paths) => {
      for (const p of paths) dirty.add(posix(p))
    },
    stateOf: (rel) => known.get(rel)?.state ?? ABSENT,
    snapshot: () => {
      update()
      return new Map([...known].map(([rel, seen]) => [rel, seen.state]))
    },
    watching: () => watcher !== undefined,
    close: () => {
      closed = true
      // with the contents its steps changed from and to: the changes that name them may be stored after a prune
      // running now read the sessions
      const changed = new Set<string>()
      for (const states of history.values()) for (const { state } of states) if (state.kind === "file" && state.hash !== undefined) changed.add(state.hash)
      // once its index is saved a prune from then on keeps what it names; not saved (a full disk), the mark stays
      release(!saveIndex(sideRoot, known, changed, Date.now()))
      watcher?.close()
      sideWatcher?.close()
      watcher = undefined
      // a settle still waiting for its barrier ends now: its event will not come, and its timer would hold the process
      for (const done of [...arrived.values()]) done()
    }
  }
}
