import { DataDir, type FileChange, realPath } from "@reins/domain"
import { Context, Data, Effect, Layer } from "effect"
import { createHash } from "node:crypto"
import * as path from "node:path"
import { makeObjectStore, type ObjectStore } from "./ObjectStore.ts"
import { applyRestore, conflictsOf, planRestore, type RestoreReport, recoverRestore } from "./Restore.ts"
import { lookPath, makeTracker, type Tracker } from "./Tracker.ts"

/** Checkpoint settings: files over `maxFileBytes` are listed as changed but not copied (nor restored). */
export const CheckpointSettings = Context.Reference<{ readonly maxFileBytes: number; readonly enabled: boolean }>("reins/workspace/CheckpointSettings", {
  defaultValue: () => ({ maxFileBytes: 8 * 1024 * 1024, enabled: true })
})

/** A restore that would overwrite what someone changed since the steps it undoes (or redoes). */
export class RestoreConflict extends Data.TaggedError("RestoreConflict")<{ readonly paths: ReadonlyArray<string> }> {
  override get message() {
    const shown = this.paths.slice(0, 10).join(", ")
    const more = this.paths.length > 10 ? ` and ${this.paths.length - 10} more` : ""
    return `Changed since those steps, so not overwritten: ${shown}${more}. Keep them (leave things as they are), or run again with --force to overwrite them.`
  }
}

/** A checkpoint begun in a directory: `end` says what changed there since it began. */
export interface Checkpoint {
  readonly end: Effect.Effect<ReadonlyArray<FileChange>>
  /** Paths (relative to the directory) a tool is about to write or has written: looked at even if the watcher is slow. */
  readonly touched: (paths: ReadonlyArray<string>) => void
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
    /** Starts recording the changes in `directory` (a step's tools are about to run there). */
    begin(directory: string): Effect.Effect<Checkpoint>
    /** Brings `directory`'s files back to before `changes` (recorded oldest first); stops on a conflict unless `force`. */
    undo(directory: string, changes: ReadonlyArray<FileChange>, force: boolean): Effect.Effect<RestoreReport["skipped"], RestoreConflict>
    /** Re-applies `changes` (undone before). */
    redo(directory: string, changes: ReadonlyArray<FileChange>, force: boolean): Effect.Effect<RestoreReport["skipped"], RestoreConflict>
  }
>()("reins/workspace/Checkpoints") {
  /** Checkpoints in the data dir (`checkpoints/<project>`); the watchers close with the layer. */
  static readonly layer = Layer.effect(
    Checkpoints,
    Effect.gen(function* () {
      const dataDir = yield* DataDir
      const settings = yield* CheckpointSettings
      const projects = new Map<string, { readonly store: ObjectStore; readonly dir: string; tracker?: Tracker }>()
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          for (const p of projects.values()) p.tracker?.close()
        })
      )

      /** The store of `directory`; a restore a killed process left half done there is finished first. */
      const projectOf = (directory: string) => {
        const root = realPath(directory)
        let project = projects.get(root)
        if (project === undefined) {
          const dir = path.join(dataDir, "checkpoints", createHash("sha256").update(root).digest("hex").slice(0, 24))
          project = { store: makeObjectStore(dir), dir }
          projects.set(root, project)
          recoverRestore(dir, project.store)
        }
        return { root, project }
      }
      const trackerOf = (directory: string) => {
        const { root, project } = projectOf(directory)
        if (project.tracker === undefined) project.tracker = makeTracker(root, project.dir, project.store, settings)
        return project.tracker
      }

      const begin = Effect.fn("Checkpoints.begin")(function* (directory: string) {
        if (!settings.enabled) return { end: Effect.succeed([]), touched: () => {} } satisfies Checkpoint
        const tracker = yield* Effect.sync(() => trackerOf(directory))
        // no barrier here: what happened before now reached the watcher long ago but for the last moment (the last
        // step's end waited for it); the end waits for everything its tools did
        const since = tracker.mark()
        return {
          end: Effect.promise(() => tracker.settle()).pipe(Effect.andThen(Effect.sync(() => tracker.changesSince(since)))),
          touched: tracker.touched
        } satisfies Checkpoint
      })

      const restore = (direction: "undo" | "redo") =>
        Effect.fn(`Checkpoints.${direction}`)(function* (directory: string, changes: ReadonlyArray<FileChange>, force: boolean) {
          const { root, project } = projectOf(directory)
          const ops = planRestore(changes, direction)
          const conflicts = conflictsOf(root, ops, (rel) => lookPath(root, rel, project.store, settings))
          if (conflicts.length > 0 && !force) return yield* new RestoreConflict({ paths: conflicts })
          const skipped = yield* Effect.sync(() => applyRestore(root, ops, project.store, project.dir))
          // what the restore wrote is a change like any other: the next checkpoint starts from it
          project.tracker?.touched(ops.map((op) => op.path))
          return skipped
        })

      return Checkpoints.of({ begin, undo: restore("undo"), redo: restore("redo") })
    })
  )
}
