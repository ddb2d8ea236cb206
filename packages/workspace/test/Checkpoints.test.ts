// Checkpoints on real directories: what a step's commands change (any command: the watcher sees them) undone and
// redone byte for byte — contents, modes, types — in a git repository and in a plain directory; a path someone
// changed after the step stops undo unless forced; a restore cut off half way is finished by the next process.
import { describe, expect, test } from "bun:test"
import { DataDir, type FileChange } from "@reins/domain"
import { treeSnapshot } from "@reins/testkit"
import { Effect, Layer } from "effect"
import { execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { CheckpointSettings, Checkpoints, RestoreConflict } from "../src/Checkpoints.ts"
import { writeCopyAtomically } from "../src/Copy.ts"
import { makeObjectStore } from "../src/ObjectStore.ts"
import { applyRestore, planRestore, recoverRestore } from "../src/Restore.ts"
import { lookPath, makeTracker } from "../src/Tracker.ts"
import { tempDir } from "./support.ts"

const snapshot = treeSnapshot

/** A project with a few files, a git repository when `git`. */
const project = (git: boolean) => {
  const root = tempDir("reins-ckpt-")
  fs.mkdirSync(path.join(root, "src/deep"), { recursive: true })
  fs.writeFileSync(path.join(root, "src/a.ts"), "export const a = 1\n")
  fs.writeFileSync(path.join(root, "src/deep/b.ts"), "export const b = 2\n")
  fs.writeFileSync(path.join(root, "run.sh"), "#!/bin/sh\necho hi\n", { mode: 0o644 })
  fs.writeFileSync(path.join(root, ".gitignore"), "build/\n")
  fs.mkdirSync(path.join(root, "build"))
  fs.writeFileSync(path.join(root, "build/out.js"), "ignored\n")
  if (git) execFileSync("sh", ["-c", "git init -q && git add -A && git -c user.email=t@t -c user.name=t commit -qm init"], { cwd: root })
  return root
}

const sh = (root: string, command: string) => execFileSync("sh", ["-c", command], { cwd: root })

const layer = (dataDir: string) => Checkpoints.layer.pipe(Layer.provide(Layer.succeed(DataDir, dataDir)))
const run = <A, E>(dataDir: string, body: Effect.Effect<A, E, Checkpoints>) => Effect.runPromise(Effect.scoped(Effect.provide(body, layer(dataDir))))

/** One step: a checkpoint begun, `command` run (as a tool would), its changes. */
const step = (root: string, command: string) =>
  Effect.gen(function* () {
    const checkpoints = yield* Checkpoints
    const checkpoint = yield* checkpoints.begin(root)
    yield* checkpoint.ready
    sh(root, command)
    return yield* checkpoint.end
  })

const commands: ReadonlyArray<readonly [string, string]> = [
  ["write a new file", "printf 'new\\n' > src/new.ts"],
  ["edit a file", "printf 'export const a = 42\\n' > src/a.ts"],
  ["remove a file", "rm src/deep/b.ts"],
  ["move a file (apply_patch's move)", "mv src/a.ts src/renamed.ts"],
  ["make nested directories with files", "mkdir -p gen/x/y && printf 'g\\n' > gen/x/y/g.ts && printf 'h\\n' > gen/h.ts"],
  ["remove a directory", "rm -r src/deep"],
  ["chmod", "chmod 755 run.sh"],
  ["a symbolic link", "ln -s src/a.ts link.ts"],
  ["replace a file by a directory", "rm run.sh && mkdir run.sh && printf 'x\\n' > run.sh/inner"],
  ["an ignored file (not undone, not copied)", "printf 'again\\n' > build/out.js"]
]

for (const git of [true, false]) {
  describe(`checkpoints in ${git ? "a git repository" : "a plain directory"}`, () => {
    for (const [name, command] of commands)
      test(`${name}: undo gives the tree before, byte for byte, mode and type; redo the tree after`, async () => {
        const root = project(git)
        const dataDir = tempDir("reins-ckpt-data-")
        const before = snapshot(root)
        const out = await run(
          dataDir,
          Effect.gen(function* () {
            const changes = yield* step(root, command)
            const after = snapshot(root)
            const checkpoints = yield* Checkpoints
            yield* checkpoints.undo(root, changes, false)
            const undone = snapshot(root)
            yield* checkpoints.redo(root, changes, false)
            return { changes, after, undone, redone: snapshot(root) }
          })
        )
        expect(out.undone).toEqual(name.startsWith("an ignored") ? out.after : before)
        expect(out.redone).toEqual(out.after)
        if (name.startsWith("an ignored")) expect(out.changes).toEqual([])
        else expect(out.changes.length).toBeGreaterThan(0)
      })

    test("several steps undone together go back to before the first; a file changed after them stops undo, named, until forced", async () => {
      const root = project(git)
      const dataDir = tempDir("reins-ckpt-data-")
      const before = snapshot(root)
      const out = await run(
        dataDir,
        Effect.gen(function* () {
          const checkpoints = yield* Checkpoints
          const changes: Array<FileChange> = []
          for (const [, command] of commands.slice(0, 5)) changes.push(...(yield* step(root, command)))
          // the user edits a file the steps wrote
          fs.writeFileSync(path.join(root, "src/new.ts"), "the user's\n")
          const refused = yield* Effect.flip(checkpoints.undo(root, changes, false))
          const untouched = fs.readFileSync(path.join(root, "src/new.ts"), "utf8")
          yield* checkpoints.undo(root, changes, true)
          return { refused, untouched, undone: snapshot(root) }
        })
      )
      expect(out.refused).toBeInstanceOf(RestoreConflict)
      expect(out.refused.paths).toEqual(["src/new.ts"])
      expect(out.refused.message).toContain("--force")
      expect(out.untouched).toBe("the user's\n")
      expect(out.undone).toEqual(before)
    })
  })
}

describe("a restore cut off half way", () => {
  test("the journal written before the first path is touched: the next process finishes it (never a mix)", async () => {
    const root = project(false)
    const dataDir = tempDir("reins-ckpt-data-")
    const before = snapshot(root)
    const changes = await run(dataDir, step(root, 'for i in $(seq 1 300); do printf "$i\\n" > f$i.txt; done; rm src/a.ts; chmod 700 run.sh'))
    const after = snapshot(root)
    // a process applying the undo killed -9 while it runs
    const store = path.join(dataDir, "checkpoints")
    const projectDir = path.join(store, fs.readdirSync(store)[0]!)
    const script = tempDir("reins-ckpt-child-")
    fs.writeFileSync(
      path.join(script, "undo.ts"),
      `import { applyRestore, planRestore } from ${JSON.stringify(path.resolve(import.meta.dir, "../src/Restore.ts"))}
import { makeObjectStore } from ${JSON.stringify(path.resolve(import.meta.dir, "../src/ObjectStore.ts"))}
const changes = JSON.parse(await Bun.file(process.argv[2]).text())
process.stdout.write("start\\n")
for (;;) applyRestore(process.argv[3], planRestore(changes, "undo"), makeObjectStore(process.argv[4]), process.argv[4])
`
    )
    fs.writeFileSync(path.join(script, "changes.json"), JSON.stringify(changes))
    const child = spawn(process.execPath, [path.join(script, "undo.ts"), path.join(script, "changes.json"), root, projectDir], {
      stdio: ["ignore", "pipe", "inherit"]
    })
    await new Promise<void>((resolve) => child.stdout.once("data", () => resolve()))
    // until a journal is there: the child is between its first and last path
    while (!fs.existsSync(path.join(projectDir, "restore.journal.json"))) await Bun.sleep(1)
    child.kill("SIGKILL")
    await new Promise((resolve) => child.once("exit", resolve))
    // the next process to open the project's checkpoints finishes the restore first
    await run(
      dataDir,
      Effect.flatMap(Checkpoints, (c) => c.undo(root, [], false))
    )
    expect(fs.existsSync(path.join(projectDir, "restore.journal.json"))).toBe(false)
    expect(snapshot(root)).toEqual(before)
    expect(snapshot(root)).not.toEqual(after)
  })

  test("recoverRestore applies a journal's plan whatever was done of it", () => {
    const root = project(false)
    const dir = tempDir("reins-ckpt-store-")
    const store = makeObjectStore(dir)
    const hash = store.put(new TextEncoder().encode("restored\n"))
    const ops = planRestore([{ path: "src/a.ts", before: { kind: "file", mode: 0o600, size: 9, hash }, after: { kind: "absent" } }], "undo")
    fs.rmSync(path.join(root, "src/a.ts"))
    // a journal as applyRestore writes it, then the process gone before its first path
    fs.writeFileSync(path.join(dir, "restore.journal.json"), JSON.stringify({ root, ops }))
    const look = (at: string, rel: string) => lookPath(at, rel, store, { maxFileBytes: 1 << 20 })
    expect(recoverRestore(dir, store, look)).toBe(root)
    expect(fs.readFileSync(path.join(root, "src/a.ts"), "utf8")).toBe("restored\n")
    expect(fs.statSync(path.join(root, "src/a.ts")).mode & 0o777).toBe(0o600)
    expect(recoverRestore(dir, store, look)).toBeUndefined()
    // applying twice is applying once
    applyRestore(root, ops, store, dir)
    expect(fs.readFileSync(path.join(root, "src/a.ts"), "utf8")).toBe("restored\n")
  })
})

describe("what is not copied", () => {
  test("a file over the size cap is listed as changed but not copied: undo puts back the rest and names it", async () => {
    const root = project(false)
    fs.writeFileSync(path.join(root, "big.bin"), "x".repeat(2000))
    const dataDir = tempDir("reins-ckpt-data-")
    const out = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const changes = yield* step(root, "printf 'more' >> big.bin && head -c 3000 /dev/zero > new.bin && printf 'small\\n' > src/a.ts")
          const checkpoints = yield* Checkpoints
          // refused first: nothing is touched while a file cannot come back
          const refused = yield* Effect.flip(checkpoints.undo(root, changes, false))
          const untouched = fs.readFileSync(path.join(root, "src/a.ts"), "utf8")
          const skipped = yield* checkpoints.undo(root, changes, true)
          return { changes, refused, untouched, skipped }
        }).pipe(Effect.provide(layer(dataDir)), Effect.provideService(CheckpointSettings, { maxFileBytes: 1000, enabled: true }))
      )
    )
    expect(out.changes.map((c) => c.path)).toEqual(["big.bin", "new.bin", "src/a.ts"])
    // a file made over the cap goes (its absence needs no copy); one that was there cannot come back
    expect(out.refused.unrestorable).toEqual([{ path: "big.bin", reason: "it was not copied (over the size cap, or unreadable)" }])
    expect(out.refused.message).toContain("Nothing was changed.")
    expect(out.untouched).toBe("small\n")
    expect(out.skipped).toEqual([{ path: "big.bin", reason: "it was over the size cap and not copied" }])
    expect(fs.existsSync(path.join(root, "new.bin"))).toBe(false)
    expect(fs.readFileSync(path.join(root, "src/a.ts"), "utf8")).toBe("export const a = 1\n")
    expect(fs.readFileSync(path.join(root, "big.bin"), "utf8")).toBe(`${"x".repeat(2000)}more`)
  })
})

describe("a copy of the project as it was before some steps (a fork with files)", () => {
  test("the files checkpoints cover, at that point (one over the cap copied as it is); the kept steps undoable in the copy", async () => {
    const root = project(true)
    fs.writeFileSync(path.join(root, "big.bin"), "x".repeat(2000))
    const dataDir = tempDir("reins-ckpt-data-")
    const target = path.join(tempDir("reins-ckpt-copy-"), "copy")
    const withoutIgnored = (tree: Record<string, string>) => Object.fromEntries(Object.entries(tree).filter(([rel]) => !rel.startsWith("build")))
    const out = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const original = snapshot(root)
          const first = yield* step(root, "printf 'one\\n' > src/a.ts && mkdir -p made && ln -s ../run.sh made/link")
          const atFirst = snapshot(root)
          const later = yield* step(root, "rm -r src/deep && printf 'two\\n' >> src/a.ts && chmod 755 run.sh")
          const checkpoints = yield* Checkpoints
          const report = yield* checkpoints.copyBefore({ directory: root, target, undone: later, kept: first, force: false })
          const copied = snapshot(target)
          // the kept step undone in the copy: its contents were carried into the copy's store
          const undone = yield* checkpoints.undo(report.directory, first, false)
          return { original, atFirst, report, copied, undone, afterUndo: snapshot(target), project: snapshot(root) }
        }).pipe(Effect.provide(layer(dataDir)), Effect.provideService(CheckpointSettings, { maxFileBytes: 1000, enabled: true }))
      )
    )
    expect(out.report).toEqual({ directory: target, files: 5, skipped: [] })
    expect(out.copied).toEqual(withoutIgnored(out.atFirst))
    expect(out.copied["big.bin"]).toBe(`file 644 ${"x".repeat(2000)}`)
    expect(out.undone).toEqual([])
    expect(out.afterUndo).toEqual(withoutIgnored(out.original))
    // the project is as the later step left it
    expect(out.project["src/deep"]).toBeUndefined()
    expect(out.project["run.sh"]).toStartWith("file 755")
  })
})

describe("a copy never writes outside itself", () => {
  test("a file over the cap below a directory that was a link at the copy's point is skipped, not written through the link", async () => {
    const root = project(false)
    const outside = tempDir("reins-ckpt-outside-")
    const dataDir = tempDir("reins-ckpt-data-")
    const target = path.join(tempDir("reins-ckpt-copy-"), "copy")
    fs.symlinkSync(outside, path.join(root, "d"))
    const report = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const checkpoints = yield* Checkpoints
          const later = yield* step(root, "rm d && mkdir d")
          // after the step, unrecorded: a big file in the directory that replaced the link
          sh(root, "head -c 5000 /dev/zero | tr '\\0' 'X' > d/big.bin")
          return yield* checkpoints.copyBefore({ directory: root, target, undone: later, kept: [], force: false })
        }).pipe(Effect.provide(layer(dataDir)), Effect.provideService(CheckpointSettings, { maxFileBytes: 1000, enabled: true }))
      )
    )
    expect(fs.readdirSync(outside)).toEqual([])
    expect(fs.lstatSync(path.join(target, "d")).isSymbolicLink()).toBe(true)
    expect(report.skipped).toEqual([{ path: "d/big.bin", reason: "d is a symbolic link now" }])
  })

  test("a copy that cannot be written whole (a file that failed, a throw half way) leaves nothing at the target", () => {
    const parent = tempDir("reins-ckpt-copy-")
    const target = path.join(parent, "copy")
    const failing = (staging: string) => {
      fs.writeFileSync(path.join(staging, "written.txt"), "half\n")
      return [{ path: "lost.txt", reason: "it could not be written (ENOSPC: no space left on device)" }]
    }
    expect(() => writeCopyAtomically(target, failing)).toThrow("1 file(s) could not be written, lost.txt first")
    expect(fs.readdirSync(parent)).toEqual([])
    expect(() =>
      writeCopyAtomically(target, (staging) => {
        fs.writeFileSync(path.join(staging, "written.txt"), "half\n")
        throw new Error("killed")
      })
    ).toThrow("killed")
    expect(fs.readdirSync(parent)).toEqual([])
    // an empty directory given as the target takes the copy; what was skipped for a reason of its own is said
    fs.mkdirSync(target)
    const done = writeCopyAtomically(target, (staging) => {
      fs.writeFileSync(path.join(staging, "ok.txt"), "ok\n")
      return [{ path: "big.bin", reason: "it was over the size cap and not copied" }]
    })
    expect(done).toEqual({ directory: target, skipped: [{ path: "big.bin", reason: "it was over the size cap and not copied" }] })
    expect(fs.readdirSync(parent)).toEqual(["copy"])
    expect(fs.readFileSync(path.join(target, "ok.txt"), "utf8")).toBe("ok\n")
  })
})

describe("a later process on the same project", () => {
  test("reads only the files changed since the last one closed (the stat stamps it saved), not the whole tree again", () => {
    const root = project(false)
    const dir = tempDir("reins-ckpt-store-")
    const settings = { maxFileBytes: 1 << 20 }
    const counting = () => {
      const store = makeObjectStore(dir)
      let puts = 0
      const put = (bytes: Uint8Array) => {
        puts++
        return store.put(bytes)
      }
      return { store: { ...store, put }, puts: () => puts }
    }
    const first = counting()
    makeTracker(root, dir, first.store, settings).close()
    expect(first.puts()).toBe(4)
    const second = counting()
    makeTracker(root, dir, second.store, settings).close()
    expect(second.puts()).toBe(0)
    fs.writeFileSync(path.join(root, "src/a.ts"), "changed while no reins ran\n")
    const third = counting()
    const tracker = makeTracker(root, dir, third.store, settings)
    expect(third.puts()).toBe(1)
    expect(tracker.stateOf("src/a.ts")).toMatchObject({ kind: "file", size: 27 })
    tracker.close()
  })
})

describe("a restore never writes outside the project", () => {
  test("a link planted at the restore's temporary name is replaced, never written through", () => {
    const root = tempDir("reins-ckpt-")
    const outside = tempDir("reins-ckpt-outside-")
    const store = makeObjectStore(tempDir("reins-ckpt-store-"))
    fs.writeFileSync(path.join(outside, ".bashrc"), "mine\n")
    fs.writeFileSync(path.join(root, "a.ts"), "now\n")
    fs.symlinkSync(path.join(outside, ".bashrc"), path.join(root, `a.ts.reins-restore-${process.pid}`))
    const hash = store.put(new TextEncoder().encode("before\n"))
    const now = lookPath(root, "a.ts", store, { maxFileBytes: 1000 })
    applyRestore(root, [{ path: "a.ts", from: now, to: { kind: "file", mode: 0o644, size: 7, hash } }], store, tempDir("reins-ckpt-journal-"))
    expect(fs.readFileSync(path.join(root, "a.ts"), "utf8")).toBe("before\n")
    expect(fs.readFileSync(path.join(outside, ".bashrc"), "utf8")).toBe("mine\n")
    expect((fs.statSync(path.join(outside, ".bashrc")).mode & 0o777).toString(8)).toBe("644")
  })

  test("a recorded path that leaves the directory (absolute, ..) or lies under a symbolic link made since is skipped, said why", () => {
    const root = project(false)
    const outside = tempDir("reins-ckpt-outside-")
    const dir = tempDir("reins-ckpt-store-")
    const store = makeObjectStore(dir)
    const hash = store.put(new TextEncoder().encode("written\n"))
    const file = { kind: "file", mode: 0o644, size: 8, hash } as const
    // since the step: src is a link to a directory outside
    fs.rmSync(path.join(root, "src"), { recursive: true })
    fs.symlinkSync(outside, path.join(root, "src"))
    const ops = [
      { path: `../${path.basename(outside)}/escaped.txt`, from: { kind: "absent" }, to: file },
      { path: path.join(outside, "absolute.txt"), from: { kind: "absent" }, to: file },
      { path: "src/through-link.txt", from: { kind: "absent" }, to: file },
      { path: "fine.txt", from: { kind: "absent" }, to: file }
    ] as const
    const skipped = applyRestore(root, ops, store, dir)
    expect(new Map(skipped.map((s) => [s.path, s.reason]))).toEqual(
      new Map([
        [`../${path.basename(outside)}/escaped.txt`, "it is not a path inside the project"],
        [path.join(outside, "absolute.txt"), "it is not a path inside the project"],
        ["src/through-link.txt", "src is a symbolic link now"]
      ])
    )
    expect(fs.readdirSync(outside)).toEqual([])
    expect(fs.readFileSync(path.join(root, "fine.txt"), "utf8")).toBe("written\n")
  })
})

describe("what undo must not take for the steps' doing", () => {
  test("a change someone made between two undone steps is a conflict (undoing both would undo it too), named, until forced", async () => {
    const root = project(false)
    const dataDir = tempDir("reins-ckpt-data-")
    const out = await run(
      dataDir,
      Effect.gen(function* () {
        const first = yield* step(root, "printf 'v1\\n' > src/a.ts")
        // the user, between the two steps
        fs.writeFileSync(path.join(root, "src/a.ts"), "the user's v2\n")
        const second = yield* step(root, "printf 'v3\\n' >> src/a.ts")
        const refused = yield* Effect.flip((yield* Checkpoints).undo(root, [...first, ...second], false))
        return { refused, now: fs.readFileSync(path.join(root, "src/a.ts"), "utf8") }
      })
    )
    expect(out.refused.paths).toEqual(["src/a.ts"])
    expect(out.now).toBe("the user's v2\nv3\n")
  })

  test("a directory replaced by a link to one outside: the files below are gone from the project, never read through the link", async () => {
    const root = project(false)
    const outside = tempDir("reins-ckpt-outside-")
    fs.writeFileSync(path.join(outside, "b.ts"), "OUTSIDE secret\n")
    const dataDir = tempDir("reins-ckpt-data-")
    const changes = await run(dataDir, step(root, `rm -r src/deep && ln -s ${outside} src/deep`))
    expect(changes.map((c) => [c.path, c.after.kind])).toEqual([
      ["src/deep", "symlink"],
      ["src/deep/b.ts", "absent"]
    ])
    expect(JSON.stringify(changes)).not.toContain(new TextEncoder().encode("OUTSIDE").toString())
  })

  test("the data dir inside the project (reins run in the home directory) is never checkpointed", async () => {
    const root = project(false)
    const dataDir = path.join(root, ".local", "share", "reins")
    fs.mkdirSync(dataDir, { recursive: true })
    const changes = await run(dataDir, step(root, "printf 'x\\n' > src/new.ts && printf 'db' > .local/share/reins/reins.db"))
    expect(changes.map((c) => c.path)).toEqual(["src/new.ts"])
  })
})

describe("Checkpoints: a project's first tracker made after the step's request went out", () => {
  /** Where a project's tracker keeps its watcher's barrier: there once the tracker is made. */
  const watchDirs = (dataDir: string) => {
    const root = path.join(dataDir, "checkpoints")
    return fs.existsSync(root) ? fs.readdirSync(root).filter((d) => fs.existsSync(path.join(root, d, "watch"))) : []
  }

  test("not before `after` settles; what changed before it is not the step's, what the tool changes after ready is", async () => {
    const root = project(false)
    const dataDir = tempDir("reins-ckpt-data-")
    const files = await run(
      dataDir,
      Effect.gen(function* () {
        const checkpoints = yield* Checkpoints
        const sent = Promise.withResolvers<void>()
        const checkpoint = yield* checkpoints.begin(root, { after: sent.promise })
        // the tracker is made in the chain `after` starts: nothing of it before
        expect(watchDirs(dataDir)).toEqual([])
        fs.writeFileSync(path.join(root, "src/a.ts"), "before the request\n")
        sent.resolve()
        yield* checkpoint.ready
        expect(watchDirs(dataDir).length).toBe(1)
        sh(root, "echo tool > src/tool.txt")
        return yield* checkpoint.end
      })
    )
    expect(files.map((f) => f.path)).toEqual(["src/tool.txt"])
  }, 60_000)

  test("closed before `after` settles: no tracker is made (nothing would close its watchers)", async () => {
    const root = project(false)
    const dataDir = tempDir("reins-ckpt-data-")
    const sent = Promise.withResolvers<void>()
    let ready: Promise<void> | undefined
    await run(
      dataDir,
      Effect.gen(function* () {
        const checkpoint = yield* (yield* Checkpoints).begin(root, { after: sent.promise })
        ready = Effect.runPromise(checkpoint.ready)
      })
    )
    sent.resolve()
    // ready settles after the tracker was made, or refused
    await ready
    expect(watchDirs(dataDir)).toEqual([])
  }, 60_000)
})
