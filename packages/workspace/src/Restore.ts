import { type FileChange, type FileState, noteTemp } from "@reins/domain"
import * as fs from "node:fs"
import * as path from "node:path"
import type { ObjectStore } from "./ObjectStore.ts"
import { unsafePath } from "./Paths.ts"
import { sameState } from "./Tracker.ts"

/** One path to bring to `to`, expected to be `from` now (what the undone or redone steps left). */
export interface RestoreOp {
  readonly path: string
  readonly from: FileState
  readonly to: FileState
  /**
   * Someone else changed the path between two of the steps (one left it otherwise than the next found it): restoring
   * it to `to` would undo that change too. A conflict, named, unless forced.
   */
  readonly gap?: true
}

/**
 * What undoing (or redoing) `changes` (recorded oldest first) does to each path: undo brings it back to what it was
 * before the first change, expecting what the last left; redo the other way round.
 */
export const planRestore = (changes: ReadonlyArray<FileChange>, direction: "undo" | "redo"): ReadonlyArray<RestoreOp> => {
  const byPath = new Map<string, { first: FileState; last: FileState; gap: boolean }>()
  for (const change of changes) {
    const seen = byPath.get(change.path)
    if (seen === undefined) byPath.set(change.path, { first: change.before, last: change.after, gap: false })
    else byPath.set(change.path, { first: seen.first, last: change.after, gap: seen.gap || !sameState(seen.last, change.before) })
  }
  const ops: Array<RestoreOp> = []
  for (const [p, { first, last, gap }] of byPath) {
    if (sameState(first, last) && !gap) continue
    const op = direction === "undo" ? { path: p, from: last, to: first } : { path: p, from: first, to: last }
    ops.push(gap ? { ...op, gap: true } : op)
  }
  return ops
}

/** The paths a restore cannot bring back (their content was not copied, or its copy is gone): why, by path. */
export const unrestorable = (ops: ReadonlyArray<RestoreOp>, store: ObjectStore): ReadonlyArray<{ readonly path: string; readonly reason: string }> =>
  ops.flatMap((op) => {
    if (op.to.kind !== "file") return []
    if (op.to.hash === undefined) return [{ path: op.path, reason: "it was not copied (over the size cap, or unreadable)" }]
    return store.has(op.to.hash) ? [] : [{ path: op.path, reason: "its copy is missing from the checkpoint store" }]
  })

/** What stops a restore, or is left as it was: a path changed since (not overwritten without force), or not restorable. */
export interface RestoreReport {
  /** Paths whose state now is neither what the steps left nor the target: someone changed them since. */
  readonly conflicts: ReadonlyArray<string>
  /** Paths not restored: a file over the size cap (not copied), a directory that still holds files not checkpointed. */
  readonly skipped: ReadonlyArray<{ readonly path: string; readonly reason: string }>
}

/** The journal of a restore under way, beside the store: a prune leaves a store with one alone. */
export const JOURNAL = "restore.journal.json"

/** Paths deepest first (removals), or shallowest first (creations). */
const byDepth = (ops: ReadonlyArray<RestoreOp>, deepestFirst: boolean) =>
  [...ops].sort((a, b) => (b.path.split("/").length - a.path.split("/").length) * (deepestFirst ? 1 : -1) || (a.path < b.path ? -1 : 1))

/** Brings one path to `to`: what it holds now (a file, a link, an empty directory) is replaced. */
const applyOne = (root: string, op: RestoreOp, store: ObjectStore, skipped: Array<{ path: string; reason: string }>) => {
  const unsafe = unsafePath(root, op.path)
  if (unsafe !== undefined) {
    skipped.push({ path: op.path, reason: unsafe })
    return
  }
  const full = path.join(root, op.path)
  const current = (() => {
    try {
      return fs.lstatSync(full)
    } catch {
      return undefined
    }
  })()
  const clear = () => {
    if (current === undefined) return true
    if (current.isDirectory()) {
      try {
        fs.rmdirSync(full)
      } catch {
        skipped.push({ path: op.path, reason: "it is a directory that holds files not checkpointed (ignored, or over the size cap)" })
        return false
      }
      return true
    }
    fs.rmSync(full, { force: true })
    return true
  }
  switch (op.to.kind) {
    case "absent":
      clear()
      return
    case "directory":
      if (current?.isDirectory() !== true && !clear()) return
      fs.mkdirSync(full, { recursive: true })
      fs.chmodSync(full, op.to.mode)
      return
    case "symlink":
      if (current?.isDirectory() === true && !clear()) return
      fs.mkdirSync(path.dirname(full), { recursive: true })
      fs.rmSync(full, { force: true })
      fs.symlinkSync(op.to.target, full)
      return
    case "file": {
      const bytes = op.to.hash === undefined ? undefined : store.get(op.to.hash)
      if (bytes === undefined) {
        skipped.push({
          path: op.path,
          reason: op.to.hash === undefined ? "it was over the size cap and not copied" : "its copy is missing from the checkpoint store"
        })
        return
      }
      if (current?.isDirectory() === true && !clear()) return
      fs.mkdirSync(path.dirname(full), { recursive: true })
      const tmp = `${full}.reins-restore-${process.pid}`
      noteTemp(tmp)
      // made anew (a link planted at the name is removed, never written through)
      fs.rmSync(tmp, { force: true })
      fs.writeFileSync(tmp, bytes, { flag: "wx" })
      fs.chmodSync(tmp, op.to.mode)
      fs.renameSync(tmp, full)
      return
    }
  }
}

/**
 * Applies `ops` under `root`, journaled in `journalDir`: the plan is written (and synced) before the first path is
 * touched and removed after the last, so a process killed half way is finished by `recover` (every op brings a path
 * to a state, whatever it was: applying twice is applying once). Removals go deepest first, then the rest shallowest
 * first (a directory before what goes in it).
 */
export const applyRestore = (root: string, ops: ReadonlyArray<RestoreOp>, store: ObjectStore, journalDir: string): RestoreReport["skipped"] => {
  fs.mkdirSync(journalDir, { recursive: true })
  const journal = path.join(journalDir, JOURNAL)
  const tmp = `${journal}.tmp`
  const fd = fs.openSync(tmp, "w", 0o600)
  fs.writeSync(fd, JSON.stringify({ root, ops }))
  fs.fsyncSync(fd)
  fs.closeSync(fd)
  fs.renameSync(tmp, journal)
  const skipped = runOps(root, ops, store)
  fs.rmSync(journal, { force: true })
  return skipped
}

/** Brings each path of `ops` to its target under `root`, without a journal (a new tree: nothing to finish); what was skipped and why. */
export const runOps = (root: string, ops: ReadonlyArray<RestoreOp>, store: ObjectStore): RestoreReport["skipped"] => {
  const skipped: Array<{ path: string; reason: string }> = []
  // one path that cannot be written (no permission, a full disk, a file where a directory was) is said, the rest go on
  const one = (op: RestoreOp) => {
    try {
      applyOne(root, op, store, skipped)
    } catch (error) {
      skipped.push({ path: op.path, reason: `it could not be written (${error instanceof Error ? error.message : String(error)})` })
    }
  }
  for (const op of byDepth(
    ops.filter((op) => op.to.kind === "absent"),
    true
  ))
    one(op)
  for (const op of byDepth(
    ops.filter((op) => op.to.kind !== "absent"),
    false
  ))
    one(op)
  return skipped
}

/**
 * Finishes a restore a killed process left half done (its journal in `journalDir`): each path still as the steps
 * left it (`from`) is brought to its target; one changed since (neither) is left as it is. The journal is gone after,
 * whatever happened (a journal that cannot be read is set aside as `.failed`); the root it was for, or undefined.
 */
export const recoverRestore = (journalDir: string, store: ObjectStore, look: (root: string, rel: string) => FileState): string | undefined => {
  const journal = path.join(journalDir, JOURNAL)
  let text: string
  try {
    text = fs.readFileSync(journal, "utf8")
  } catch {
    return undefined
  }
  try {
    const { root, ops } = JSON.parse(text) as { root: string; ops: ReadonlyArray<RestoreOp> }
    const changed = new Set(conflictsOf(root, ops, (rel) => look(root, rel)))
    runOps(
      root,
      ops.filter((op) => !changed.has(op.path)),
      store
    )
    fs.rmSync(journal, { force: true })
    return root
  } catch {
    fs.renameSync(journal, `${journal}.failed`)
    return undefined
  }
}

/**
 * The paths whose state now (`look`) is neither the one the steps left (`from`) nor already the target, and those
 * someone changed between the steps (`gap`) not already at the target.
 */
export const conflictsOf = (root: string, ops: ReadonlyArray<RestoreOp>, look: (rel: string) => FileState): ReadonlyArray<string> =>
  ops
    .filter((op) => {
      // never looked at: skipped when applied, and said why
      if (unsafePath(root, op.path) !== undefined) return false
      const now = look(op.path)
      if (op.gap === true) return !sameState(now, op.to)
      return !sameState(now, op.from) && !sameState(now, op.to)
    })
    .map((op) => op.path)
