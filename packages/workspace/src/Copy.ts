import { type FileChange, type FileState, noteTemp } from "@reins/domain"
import { Data } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import type { ObjectStore } from "./ObjectStore.ts"
import { unsafePath } from "./Paths.ts"
import { type RestoreOp, type RestoreReport, runOps } from "./Restore.ts"

/** A copy refused (where it would go is not a new or empty directory, or lies in the project), or failed while written. */
export class CopyError extends Data.TaggedError("CopyError")<{ readonly message: string }> {}

const ABSENT: FileState = { kind: "absent" }

/** `target` with its nearest existing directory's links resolved (it may not exist yet). */
export const realTarget = (target: string): string => {
  const resolved = path.resolve(target)
  try {
    return fs.realpathSync(resolved)
  } catch {
    const parent = path.dirname(resolved)
    return parent === resolved ? resolved : path.join(realTarget(parent), path.basename(resolved))
  }
}

/**
 * Why `target` cannot take a copy of the project at `root`, if so: it holds something already, is a file, or lies
 * inside the project (its files would become the project's) or the project inside it.
 */
export const refuseTarget = (root: string, target: string): CopyError | undefined => {
  const inside = (dir: string, parent: string) => dir === parent || dir.startsWith(`${parent}${path.sep}`)
  if (inside(target, root) || inside(root, target))
    return new CopyError({ message: `${target} is inside the project ${root} (or holds it): give a directory outside it, e.g. ${root}-fork.` })
  let stat: fs.Stats | undefined
  try {
    stat = fs.statSync(target)
  } catch {
    return undefined
  }
  if (!stat.isDirectory()) return new CopyError({ message: `${target} is a file: give a new directory, or an empty one.` })
  if (fs.readdirSync(target).length > 0) return new CopyError({ message: `${target} is not empty: give a new directory, or an empty one.` })
  return undefined
}

/**
 * Writes the project's files as `states` says (each path's state at the point copied) under `target`: contents from
 * the store; a file not copied into it (over the size cap) from the project itself when it is as it is now there.
 */
export const writeCopy = (
  root: string,
  target: string,
  states: ReadonlyMap<string, FileState>,
  now: ReadonlyMap<string, FileState>,
  store: ObjectStore
): RestoreReport["skipped"] => {
  const ops: Array<RestoreOp> = []
  const uncopied: Array<string> = []
  for (const [rel, state] of states) {
    if (state.kind === "file" && state.hash === undefined && now.get(rel) === state) uncopied.push(rel)
    else ops.push({ path: rel, from: ABSENT, to: state })
  }
  const skipped = [...runOps(target, ops, store)]
  for (const rel of uncopied) {
    // never through a link, in the project or in the copy (a directory made a link since would lead elsewhere)
    const unsafe = unsafePath(target, rel) ?? unsafePath(root, rel)
    if (unsafe !== undefined) {
      skipped.push({ path: rel, reason: unsafe })
      continue
    }
    try {
      if (!fs.lstatSync(path.join(root, rel)).isFile()) throw new Error("it is not a regular file now")
      fs.mkdirSync(path.dirname(path.join(target, rel)), { recursive: true })
      fs.copyFileSync(path.join(root, rel), path.join(target, rel), fs.constants.COPYFILE_EXCL)
    } catch (error) {
      skipped.push({ path: rel, reason: `it could not be written (${error instanceof Error ? error.message : String(error)})` })
    }
  }
  return skipped
}

/**
 * Writes the copy beside `target` first and renames it into place once whole: a copy cut off half way, or with a file
 * that could not be written (a full disk), leaves no `target` behind, and the fork is not made. The real path written.
 */
export const writeCopyAtomically = (
  target: string,
  write: (staging: string) => RestoreReport["skipped"]
): { directory: string; skipped: RestoreReport["skipped"] } => {
  const parent = path.dirname(target)
  fs.mkdirSync(parent, { recursive: true })
  const staging = path.join(parent, `.${path.basename(target)}.reins-copy-${process.pid}`)
  noteTemp(staging)
  fs.rmSync(staging, { recursive: true, force: true })
  fs.mkdirSync(staging)
  try {
    const skipped = write(fs.realpathSync(staging))
    const failed = skipped.filter((s) => s.reason.startsWith("it could not be written"))
    if (failed.length > 0) throw new Error(`${failed.length} file(s) could not be written, ${failed[0]!.path} first: ${failed[0]!.reason}`)
    // an empty directory given as the target makes way for the copy
    if (fs.existsSync(target)) fs.rmdirSync(target)
    fs.renameSync(staging, target)
    return { directory: fs.realpathSync(target), skipped }
  } catch (error) {
    fs.rmSync(staging, { recursive: true, force: true })
    throw error
  }
}

/** Puts into `to` the contents `changes` name that `from` holds: what undo and redo in the copy will need. */
export const carryObjects = (changes: ReadonlyArray<FileChange>, from: ObjectStore, to: ObjectStore) => {
  for (const change of changes)
    for (const state of [change.before, change.after]) {
      // there already: used now (a prune running meanwhile keeps it until the sessions naming it are stored)
      if (state.kind !== "file" || state.hash === undefined || to.touch(state.hash)) continue
      const bytes = from.get(state.hash)
      if (bytes !== undefined) to.put(bytes)
    }
}
