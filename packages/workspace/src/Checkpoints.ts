import { DataDir, type FileChange, HomeDir, realPath } from "@reins/domain"
import { Cause, Context, Data, Effect, Layer } from "effect"
import { createHash } from "node:crypto"
import * as path from "node:path"
import { carryObjects, CopyError, realTarget, refuseTarget, writeCopy, writeCopyAtomically } from "./Copy.ts"
import { makeObjectStore, type ObjectStore } from "./ObjectStore.ts"
import { checkpointsRoot, recordDatabase, recordProject } from "./StoreInfo.ts"
import { applyRestore, conflictsOf, planRestore, type RestoreReport, recoverRestore, unrestorable } from "./Restore.ts"
import { lookPath, makeTracker, type Tracker } from "./Tracker.ts"

/**
 * Checkpoint settings: files over `maxFileBytes` are listed as changed but not copied (nor restored); `database`: the
 * identity of the database whose sessions record the changes (recorded in each store used: a prune reading another
 * database's sessions leaves it alone; none recorded, no prune touches it).
 */
export const CheckpointSettings = Context.Reference<{ readonly maxFileBytes: number; readonly enabled: boolean; readonly database?: string }>(
  "reins/workspace/CheckpointSettings",
  { defaultValue: () => ({ maxFileBytes: 8 * 1024 * 1024, enabled: true }) }
)

/**
 * A restore refused before it touched anything: files someone changed since the steps it undoes (or redoes, or
 * between them), or files it could not bring back (not copied).
 */
export class RestoreConflict extends Data.TaggedError("RestoreConflict")<{
  readonly paths: ReadonlyArray<string>
  readonly unrestorable?: ReadonlyArray<{ readonly path: string; readonly reason: string }>
}> {
  override get message() {
    const list = (paths: ReadonlyArray<string>) => `${paths.slice(0, 10).join(", ")}${paths.length > 10 ? ` and ${paths.length - 10} more` : ""}`
    const changed =
      this.paths.length === 0
        ? ""
        : `Changed since those steps (by you or another program), so not overwritten: ${list(this.paths)}. --force overwrites them with the steps' versions (your changes to them are lost). `
    const lost = this.unrestorable ?? []
    const cannot =
      lost.length === 0
        ? ""
        : `Cannot be brought back: ${lost
            .slice(0, 10)
            .map((u) => `${u.path} (${u.reason})`)
            .join(", ")}; the rest would go back without them. --force does that. `
    return `${changed}${cannot}Nothing was changed.`
  }
}

/** What `copyBefore` is asked. */
export interface CopyInput {
  readonly directory: string
  readonly target: string
  readonly undone: ReadonlyArray<FileChange>
  readonly kept: ReadonlyArray<FileChange>
  /** Copy even where a file undone was changed since (its version from the steps is written). */
  readonly force: boolean
}

/** What a copy wrote: where (the real path), how many files, and what it left out and why. */
export interface CopyReport {
  readonly directory: string
  readonly files: number
  readonly skipped: RestoreReport["skipped"]
}

/** A checkpoint begun in a directory: `end` says what changed there since it began. */
export interface Checkpoint {
  /** Done once the checkpoint has begun (the watcher caught up, the point marked): a step's tools wait for it. Never fails. */
  readonly ready: Effect.Effect<void>
  readonly end: Effect.Effect<ReadonlyArray<FileChange>>
}

/**
 * Checkpoints of a project's files: what every step changed, shell commands included, in a git repository or not, and
 * restoring them (undo, redo). A directory's files are copied into a content-addressed store in the data dir once
 * (ignored paths, `.git` and `node_modules` left out; files over the size cap listed, not copied), then a watcher
 * says which paths to look at again; a full scan when it cannot.
 */
export class Checkpoints extends Context.Service<
  Checkpoints,
  {
    /**
     * Starts recording the changes in `directory` (a step's tools are about to run there). The first checkpoint of a
     * directory makes its tracker (a watcher on the tree and a look at every file: long in a large project): given
     * `after` (the server took the step's model call), once that resolves, so the model call does not wait for it;
     * rejected (the step ended before that, so no tool ran), no tracker is made.
     */
    begin(directory: string, options?: { readonly after?: Promise<void> }): Effect.Effect<Checkpoint>
    /** Brings `directory`'s files back to before `changes` (recorded oldest first); stops on a conflict unless `force`. */
    undo(directory: string, changes: ReadonlyArray<FileChange>, force: boolean): Effect.Effect<RestoreReport["skipped"], RestoreConflict>
    /** Re-applies `changes` (undone before). */
    redo(directory: string, changes: ReadonlyArray<FileChange>, force: boolean): Effect.Effect<RestoreReport["skipped"], RestoreConflict>
    /**
     * A copy of `directory`'s files in `target` (a new or empty directory outside it) as they were before `undone`
     * (changes recorded there since, oldest first): the files checkpoints cover. The contents `kept` (the changes of
     * the steps the copy keeps) name go into the copy's store, so those steps can be undone there too.
     */
    copyBefore(input: CopyInput): Effect.Effect<CopyReport, RestoreConflict | CopyError>
    /** Puts the contents `changes` (recorded in `from`) name into the store of `to` as well: undone or copied from there. */
    carry(from: string, to: string, changes: ReadonlyArray<FileChange>): Effect.Effect<void>
  }
>()("reins/workspace/Checkpoints") {
  /** Checkpoints in the data dir (`checkpoints/<project>`); the watchers close with the layer. */
  static readonly layer = Layer.effect(
    Checkpoints,
    Effect.gen(function* () {
      const dataDir = yield* DataDir
      const home = yield* HomeDir
      const settings = yield* CheckpointSettings
      const projects = new Map<string, { readonly store: ObjectStore; readonly dir: string; tracker?: Tracker }>()
      // once closed, a tracker still to make (a step's, waiting for its request to go out) is not made: nothing would close it
      let closed = false
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          closed = true
          for (const p of projects.values()) p.tracker?.close()
        })
      )

      /** The store of `directory`; a restore a killed process left half done there is finished first. */
      const projectOf = (directory: string) => {
        const root = realPath(directory)
        let project = projects.get(root)
        if (project === undefined) {
          const dir = path.join(checkpointsRoot(dataDir), createHash("sha256").update(root).digest("hex").slice(0, 24))
          project = { store: makeObjectStore(dir), dir }
          projects.set(root, project)
          recordProject(dir, root)
          if (settings.database !== undefined) recordDatabase(dir, settings.database)
          const store = project.store
          recoverRestore(dir, store, (at, rel) => lookPath(at, rel, store, settings))
        }
        return { root, project }
      }
      const trackerOf = (directory: string) => {
        const { root, project } = projectOf(directory)
        // the data dir (and so the store) never checkpointed, when reins runs where they are (the home directory)
        if (project.tracker === undefined) project.tracker = makeTracker(root, project.dir, project.store, { ...settings, skip: [dataDir, project.dir] })
        return project.tracker
      }
      const none: Checkpoint = { ready: Effect.void, end: Effect.succeed([]) }
      // the home directory's real path, resolved once (begin asks at every step)
      let realHome: string | undefined
      /** No checkpoints of the whole machine or of a home directory (too much to copy, and not a project), nor when off. */
      const unchecked = (directory: string) =>
        !settings.enabled || directory === path.parse(directory).root || realPath(directory) === (realHome ??= realPath(home))
      /** Checkpointing is best effort: one that fails (a full disk, a permission) is logged; the step goes on unrecorded. */
      const bestEffort =
        <A>(what: string, fallback: A) =>
        (effect: Effect.Effect<A>) =>
          Effect.catchCause(effect, (cause) => Effect.as(Effect.logWarning(`Could not ${what}: ${Cause.pretty(cause).split("\n")[0]}`), fallback))

      const begin = Effect.fn("Checkpoints.begin")(function* (directory: string, options?: { readonly after?: Promise<void> }) {
        if (unchecked(directory)) return none
        return yield* Effect.sync((): Checkpoint => {
          const { project } = projectOf(directory)
          // a tracker still to make is made once `after` resolves (the step's tools wait for it: `ready`); rejected, never
          const after = project.tracker === undefined ? options?.after : undefined
          const tracker =
            after === undefined
              ? Promise.resolve(trackerOf(directory))
              : after.then(() => {
                  if (closed) throw new Error("checkpoints were closed before the step's first checkpoint was made")
                  return trackerOf(directory)
                })
          // what happened before now (a file the user saved a moment ago) is not the step's: the point is marked once
          // the watcher has told it. That wait goes on beside the model call; the step's tools wait for it (`ready`).
          const since = tracker.then((made) => made.settle().then(() => made.mark()))
          // never fails, and handles the rejection at once: a step that runs no tool never asks, and an unhandled
          // rejection of a failed mark would end the process (`end` says the failure)
          const began = since.then(
            () => undefined,
            () => undefined
          )
          return {
            ready: Effect.promise(() => began),
            end: Effect.promise(() =>
              since.then(async (mark) => {
                const made = await tracker
                await made.settle(true)
                return made.changesSince(mark)
              })
            ).pipe(bestEffort("record what the step changed", [] as ReadonlyArray<FileChange>))
          }
        }).pipe(bestEffort(`checkpoint ${directory}`, none))
      })

      const restore = (direction: "undo" | "redo") =>
        Effect.fn(`Checkpoints.${direction}`)(function* (directory: string, changes: ReadonlyArray<FileChange>, force: boolean) {
          const { root, project } = projectOf(directory)
          const ops = planRestore(changes, direction)
          const conflicts = conflictsOf(root, ops, (rel) => lookPath(root, rel, project.store, settings))
          const lost = unrestorable(ops, project.store)
          if ((conflicts.length > 0 || lost.length > 0) && !force) return yield* new RestoreConflict({ paths: conflicts, unrestorable: lost })
          const skipped = yield* Effect.sync(() => applyRestore(root, ops, project.store, project.dir))
          // what the restore wrote is a change like any other: the next checkpoint starts from it
          project.tracker?.touched(ops.map((op) => op.path))
          return skipped
        })

      const copyBefore = Effect.fn("Checkpoints.copyBefore")(function* (input: CopyInput) {
        const target = path.resolve(input.target)
        const directory = input.directory
        if (unchecked(directory)) return yield* new CopyError({ message: `Checkpoints are off for ${directory}: there is nothing to copy the files from.` })
        const refused = refuseTarget(realPath(directory), realTarget(target))
        if (refused !== undefined) return yield* refused
        const failed = (what: string) => (error: unknown) =>
          new CopyError({ message: `Could not ${what}: ${error instanceof Error ? error.message : String(error)}.` })
        const tracker = yield* Effect.try({ try: () => trackerOf(directory), catch: failed(`read the files of ${directory}`) })
        yield* Effect.promise(() => tracker.settle())
        const { root, project } = projectOf(directory)
        const now = yield* Effect.try({ try: () => tracker.snapshot(), catch: failed(`read the files of ${directory}`) })
        const ops = planRestore(input.undone, "undo")
        const conflicts = conflictsOf(root, ops, (rel) => lookPath(root, rel, project.store, settings))
        const lost = unrestorable(ops, project.store)
        if ((conflicts.length > 0 || lost.length > 0) && !input.force) return yield* new RestoreConflict({ paths: conflicts, unrestorable: lost })
        const states = new Map(now)
        for (const op of ops) {
          if (op.to.kind === "absent") states.delete(op.path)
          else states.set(op.path, op.to)
        }
        return yield* Effect.try({
          try: () => {
            const { directory: copy, skipped } = writeCopyAtomically(target, (staging) => writeCopy(root, staging, states, now, project.store))
            carryObjects(input.kept, project.store, projectOf(copy).project.store)
            const files = [...states.values()].filter((s) => s.kind === "file").length
            return { directory: copy, files, skipped } satisfies CopyReport
          },
          catch: failed(`write the copy in ${target} (nothing was left there)`)
        })
      })

      const carry = (from: string, to: string, changes: ReadonlyArray<FileChange>) =>
        Effect.sync((): void => carryObjects(changes, projectOf(from).project.store, projectOf(to).project.store)).pipe(
          bestEffort<void>(`copy checkpointed contents from ${from} to ${to}`, undefined)
        )

      return Checkpoints.of({ begin, undo: restore("undo"), redo: restore("redo"), copyBefore, carry })
    })
  )
}
