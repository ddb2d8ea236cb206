// Pruning checkpoint stores on real directories: a copy goes only when no stored session's changes name it, no
// store's index names it, and it was not written or used for the time given; a store with an undo to finish, or a
// process using it (this host's, alive; or another host's), is left whole; a dry run removes nothing.
import { afterAll, describe, expect, test } from "bun:test"
import type { Part } from "@reins/domain"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { markInUse, usersOf } from "../src/InUse.ts"
import { hashOf, makeObjectStore } from "../src/ObjectStore.ts"
import { checkpointsRoot, hashesOf, pruneCheckpoints } from "../src/Prune.ts"
import { JOURNAL } from "../src/Restore.ts"
import { makeTracker } from "../src/Tracker.ts"

const made: Array<string> = []
afterAll(() => {
  for (const dir of made) fs.rmSync(dir, { recursive: true, force: true })
})
const tempDir = (prefix: string) => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)))
  made.push(dir)
  return dir
}

const DAY = 24 * 3_600_000
const now = Date.now()
const objectFile = (store: string, hash: string) => path.join(store, "objects", hash.slice(0, 2), hash.slice(2))
const age = (file: string, ms: number) => {
  const at = new Date(now - ms)
  fs.utimesSync(file, at, at)
}

/**
 * A data dir with one project store holding: a copy a session names, one the store's index names, one nothing names
 * (old), one nothing names (new), and a temporary file of a copy cut off (old) and of one being written (new).
 */
const dataDirWithStore = (name = "0123456789abcdef01234567") => {
  const dataDir = tempDir("reins-prune-")
  const store = path.join(checkpointsRoot(dataDir), name)
  const objects = makeObjectStore(store)
  const [named, indexed, stale, fresh] = ["named by a session\n", "named by the index\n", "deleted session's\n", "just seen\n"].map((text) =>
    objects.put(Buffer.from(text))
  ) as [string, string, string, string]
  fs.writeFileSync(
    path.join(store, "index.json"),
    JSON.stringify([["src/a.ts", { state: { kind: "file", mode: 0o644, size: 18, hash: indexed }, stamp: "x" }]])
  )
  for (const hash of [named, indexed, stale]) age(objectFile(store, hash), 30 * DAY)
  const cutOff = `${objectFile(store, hashOf(Buffer.from("cut off")))}.123-0.tmp`
  const writing = `${objectFile(store, hashOf(Buffer.from("being written")))}.456-0.tmp`
  for (const tmp of [cutOff, writing]) {
    fs.mkdirSync(path.dirname(tmp), { recursive: true })
    fs.writeFileSync(tmp, "partial")
  }
  age(cutOff, 30 * DAY)
  return { dataDir, store, root: checkpointsRoot(dataDir), named, indexed, stale, fresh, cutOff, writing }
}

const prune = (root: string, referenced: ReadonlyArray<string>, dryRun = false) =>
  pruneCheckpoints({ root, referenced: new Set(referenced), olderThanMs: 7 * DAY, now, dryRun })

describe("pruneCheckpoints", () => {
  test("removes only the copies nothing names that were not used lately, and the temporary files of copies cut off", () => {
    const s = dataDirWithStore()
    const report = prune(s.root, [s.named])
    expect(report).toMatchObject({ stores: 1, skipped: [], copies: 4, removed: 1, kept: 3 })
    expect(fs.existsSync(objectFile(s.store, s.stale))).toBe(false)
    expect(fs.existsSync(s.cutOff)).toBe(false)
    for (const hash of [s.named, s.indexed, s.fresh]) expect(fs.existsSync(objectFile(s.store, hash))).toBe(true)
    expect(fs.existsSync(s.writing)).toBe(true)
    // the bytes of the copy and of the cut-off temporary file
    expect(report.removedBytes).toBe("deleted session's\n".length + "partial".length)
    // a second prune finds nothing more
    expect(prune(s.root, [s.named])).toMatchObject({ removed: 0, kept: 3 })
  })

  test("a dry run counts the same and removes nothing", () => {
    const s = dataDirWithStore()
    expect(prune(s.root, [s.named], true)).toMatchObject({ copies: 4, removed: 1, kept: 3 })
    expect(fs.existsSync(objectFile(s.store, s.stale))).toBe(true)
    expect(fs.existsSync(s.cutOff)).toBe(true)
  })

  test("a copy stored again (found there already) counts as used now", () => {
    const s = dataDirWithStore()
    makeObjectStore(s.store).put(Buffer.from("deleted session's\n"))
    expect(prune(s.root, [s.named])).toMatchObject({ removed: 0, kept: 4 })
  })

  const deadPid = () => {
    const child = Bun.spawnSync(["true"])
    return child.pid
  }

  const cases: ReadonlyArray<{ readonly name: string; readonly arrange: (store: string) => void; readonly reason: RegExp | undefined }> = [
    {
      name: "an undo cut off half way (its journal)",
      arrange: (store) => fs.writeFileSync(path.join(store, JOURNAL), "{}"),
      reason: /undo or redo was cut off/
    },
    { name: "this process using it", arrange: (store) => void markInUse(store), reason: new RegExp(`reins process ${process.pid} on `) },
    {
      name: "a process of another host using it",
      arrange: (store) => {
        fs.mkdirSync(path.join(store, "in-use"), { recursive: true })
        fs.writeFileSync(path.join(store, "in-use", "4242@another-host"), "")
      },
      reason: /reins process 4242 on another-host is using it \(if that process is gone, delete .*in-use\/4242@another-host/
    },
    {
      name: "an index that cannot be read",
      arrange: (store) => fs.writeFileSync(path.join(store, "index.json"), "{not json"),
      reason: /index\.json cannot be read/
    },
    {
      name: "the mark of a process of this host that is gone (removed, the store pruned)",
      arrange: (store) => {
        fs.mkdirSync(path.join(store, "in-use"), { recursive: true })
        fs.writeFileSync(path.join(store, "in-use", `${deadPid()}@${os.hostname()}`), "")
      },
      reason: undefined
    }
  ]
  for (const c of cases)
    test(`a store with ${c.name}${c.reason === undefined ? "" : " is left whole"}`, () => {
      const s = dataDirWithStore()
      c.arrange(s.store)
      const report = prune(s.root, [s.named])
      if (c.reason === undefined) {
        expect(report).toMatchObject({ skipped: [], removed: 1 })
        expect(usersOf(s.store)).toEqual([])
        return
      }
      expect(report).toMatchObject({ stores: 1, copies: 0, removed: 0 })
      expect(report.skipped).toHaveLength(1)
      expect(report.skipped[0]!.reason).toMatch(c.reason)
      expect(fs.existsSync(objectFile(s.store, s.stale))).toBe(true)
      expect(fs.existsSync(s.cutOff)).toBe(true)
    })

  test("each store on its own: one left alone does not keep another from being pruned", () => {
    const a = dataDirWithStore()
    const other = path.join(a.root, "fedcba9876543210fedcba98")
    const objects = makeObjectStore(other)
    const gone = objects.put(Buffer.from("other project's old copy\n"))
    age(objectFile(other, gone), 30 * DAY)
    fs.writeFileSync(path.join(a.store, JOURNAL), "{}")
    const report = prune(a.root, [])
    expect(report).toMatchObject({ stores: 2, copies: 1, removed: 1 })
    expect(report.skipped.map((s) => s.store)).toEqual([a.store])
  })

  test("no checkpoints yet: nothing to do", () => {
    expect(prune(path.join(tempDir("reins-prune-none-"), "checkpoints"), [])).toEqual({
      stores: 0,
      skipped: [],
      copies: 0,
      removed: 0,
      removedBytes: 0,
      kept: 0,
      keptBytes: 0
    })
  })
})

describe("what keeps a copy", () => {
  test("a tracker marks its store while it lives, and takes the mark away once its index is saved", () => {
    const root = tempDir("reins-prune-tree-")
    fs.writeFileSync(path.join(root, "a.txt"), "a\n")
    const store = path.join(checkpointsRoot(tempDir("reins-prune-data-")), "00112233445566778899aabb")
    const tracker = makeTracker(root, store, makeObjectStore(store), { maxFileBytes: 1024 })
    expect(usersOf(store).map((u) => u.pid)).toEqual([process.pid])
    expect(pruneCheckpoints({ root: path.dirname(store), referenced: new Set(), olderThanMs: 0, now: now + DAY, dryRun: false }).skipped).toHaveLength(1)
    tracker.close()
    expect(usersOf(store)).toEqual([])
    // what it saw is in its index: kept however old
    const report = pruneCheckpoints({ root: path.dirname(store), referenced: new Set(), olderThanMs: 0, now: now + DAY, dryRun: false })
    expect(report).toMatchObject({ skipped: [], copies: 1, removed: 0, kept: 1 })
  })

  test("the contents a session's recorded changes name: before and after of each file, of patch parts only", () => {
    const base = { id: "prt_1", sessionID: "ses", messageID: "msg" }
    const parts: ReadonlyArray<Part> = [
      {
        ...base,
        type: "patch",
        files: [
          { path: "a", before: { kind: "file", mode: 0o644, size: 1, hash: "h1" }, after: { kind: "file", mode: 0o644, size: 2, hash: "h2" } },
          { path: "b", before: { kind: "absent" }, after: { kind: "file", mode: 0o644, size: 9, stamp: "s" } },
          { path: "c", before: { kind: "symlink", target: "x" }, after: { kind: "directory", mode: 0o755 } }
        ]
      },
      { ...base, id: "prt_2", type: "text", text: "h3" }
    ]
    expect([...hashesOf(parts, new Set(["h0"]))].sort()).toEqual(["h0", "h1", "h2"])
  })
})
