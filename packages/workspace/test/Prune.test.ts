// Pruning checkpoint stores on real directories: a copy goes only when no stored session's changes name it, no
// store's index names it, and it was not written or used for the time given; a store with an undo to finish, a
// process using it, or sessions of another database (or none recorded) is left whole; a dry run changes nothing.
import { describe, expect, test } from "bun:test"
import type { Part } from "@reins/domain"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { LIVE_MS, markInUse, usersOf } from "../src/InUse.ts"
import { asideOf, hashOf, makeObjectStore } from "../src/ObjectStore.ts"
import { hashesOf, pruneCheckpoints, removeUnused } from "../src/Prune.ts"
import { JOURNAL } from "../src/Restore.ts"
import { checkpointsRoot, recordDatabase, recordProject, unrecordedFile } from "../src/StoreInfo.ts"
import { indexedHashes, RECENT_MS, readIndex, saveIndex } from "../src/StoreIndex.ts"
import { makeTracker } from "../src/Tracker.ts"
import { tempDir } from "./support.ts"

const DAY = 24 * 3_600_000
const DATABASE = "sqlite:/data/reins.db"
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
  recordDatabase(store, DATABASE)
  recordProject(store, "/home/me/project")
  const [named, indexed, stale, fresh] = ["named by a session\n", "named by the index\n", "deleted session's\n", "just seen\n"].map((text) =>
    objects.put(Buffer.from(text))
  ) as [string, string, string, string]
  saveIndex(store, new Map([["src/a.ts", { state: { kind: "file", mode: 0o644, size: 18, hash: indexed }, stamp: "x" }]]), new Set(), now)
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
  pruneCheckpoints({ root, referenced: new Set(referenced), database: DATABASE, olderThanMs: 7 * DAY, now, dryRun })

describe("pruneCheckpoints", () => {
  test("removes only the copies nothing names that were not used lately, and the temporary files of copies cut off", () => {
    const s = dataDirWithStore()
    const report = prune(s.root, [s.named])
    expect(report).toMatchObject({ stores: 1, skipped: [], copies: 4, removed: 1, kept: 3, temporaries: 1, failed: 0 })
    expect(fs.existsSync(objectFile(s.store, s.stale))).toBe(false)
    expect(fs.existsSync(s.cutOff)).toBe(false)
    for (const hash of [s.named, s.indexed, s.fresh]) expect(fs.existsSync(objectFile(s.store, hash))).toBe(true)
    expect(fs.existsSync(s.writing)).toBe(true)
    expect(report.removedBytes).toBe("deleted session's\n".length)
    // a second prune finds nothing more
    expect(prune(s.root, [s.named])).toMatchObject({ removed: 0, kept: 3 })
  })

  test("a dry run counts the same and removes nothing", () => {
    const s = dataDirWithStore()
    expect(prune(s.root, [s.named], true)).toMatchObject({ copies: 4, removed: 1, kept: 3, temporaries: 1 })
    expect(fs.existsSync(objectFile(s.store, s.stale))).toBe(true)
    expect(fs.existsSync(s.cutOff)).toBe(true)
  })

  test("a copy stored again (found there already) counts as used now", () => {
    const s = dataDirWithStore()
    makeObjectStore(s.store).put(Buffer.from("deleted session's\n"))
    expect(prune(s.root, [s.named])).toMatchObject({ removed: 0, kept: 4 })
  })

  const deadPid = () => Bun.spawnSync(["true"]).pid
  /** A mark on `store` as `name`, renewed `ago` ms before now. */
  const mark = (store: string, name: string, ago: number) => {
    const file = path.join(store, "in-use", name)
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(file, "")
    age(file, ago)
    return file
  }

  const cases: ReadonlyArray<{ readonly name: string; readonly arrange: (store: string) => void; readonly reason: RegExp | undefined }> = [
    {
      name: "an undo cut off half way (its journal)",
      arrange: (store) => fs.writeFileSync(path.join(store, JOURNAL), "{}"),
      reason: /undo or redo was cut off/
    },
    { name: "this process using it", arrange: (store) => void markInUse(store), reason: new RegExp(`reins process ${process.pid} on `) },
    {
      name: "a process of another host using it (its mark renewed lately)",
      arrange: (store) => void mark(store, "4242-0@another-host", LIVE_MS / 2),
      reason: /reins process 4242 on another-host is using it/
    },
    {
      name: "a process of this host that is gone but renewed its mark lately (another pid namespace)",
      arrange: (store) => void mark(store, `${deadPid()}-0@${os.hostname()}`, LIVE_MS / 2),
      reason: /is using it/
    },
    {
      name: "a process of this host still there, its mark not renewed (stopped)",
      arrange: (store) => void mark(store, `${process.ppid}-0@${os.hostname()}`, 2 * LIVE_MS),
      reason: new RegExp(`reins process ${process.ppid} on `)
    },
    {
      name: "an index that cannot be read",
      arrange: (store) => fs.writeFileSync(path.join(store, "index.json"), "{not json"),
      reason: /its index cannot be read \(delete index\.json and recent\//
    },
    {
      name: "sessions of another database",
      arrange: (store) => recordDatabase(store, "postgres://db.example:5432/reins"),
      reason: /sessions of another database use it too \(postgres:\/\/db\.example:5432\/reins\)/
    },
    {
      name: "a mark of an older reins (another name), renewed lately",
      arrange: (store) => void mark(store, "1234@old-format-host", LIVE_MS / 2),
      reason: /reins process 1234 on old-format-host is using it/
    },
    {
      name: "a mark no reins names so, renewed lately",
      arrange: (store) => void mark(store, "something", LIVE_MS / 2),
      reason: /a reins process is using it \(.*in-use\/something/
    },
    {
      name: "copies made by a reins that recorded no database",
      arrange: (store) => {
        fs.rmSync(path.join(store, "databases"), { recursive: true })
        recordDatabase(store, DATABASE)
      },
      reason:
        /used by a reins that did not record which database's sessions use it: if only the sessions of sqlite:\/data\/reins\.db ever did, delete .*databases\/[0-9a-f]{16} and prune again/
    },
    {
      name: "only a record cut off (its temporary file)",
      arrange: (store) => {
        fs.rmSync(path.join(store, "databases"), { recursive: true })
        fs.mkdirSync(path.join(store, "databases"))
        fs.writeFileSync(path.join(store, "databases", "0123456789abcdef.1f2e.tmp"), "sqlite:/da")
      },
      reason: /no database is recorded as using it/
    },
    {
      name: "no database recorded",
      arrange: (store) => fs.rmSync(path.join(store, "databases"), { recursive: true }),
      reason: /no database is recorded as using it/
    },
    {
      name: "the mark of a process gone: of this host, or of another not renewed for an hour (removed, the store pruned)",
      arrange: (store) => {
        mark(store, `${deadPid()}-0@${os.hostname()}`, 2 * LIVE_MS)
        mark(store, "4242-0@another-host", 2 * LIVE_MS)
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
        expect(usersOf(s.store, now)).toEqual([])
        return
      }
      expect(report).toMatchObject({ stores: 1, copies: 0, removed: 0 })
      expect(report.skipped).toEqual([{ store: s.store, project: "/home/me/project", reason: expect.stringMatching(c.reason) }])
      expect(fs.existsSync(objectFile(s.store, s.stale))).toBe(true)
      expect(fs.existsSync(s.cutOff)).toBe(true)
    })

  test("told it was only this database's, a store that recorded none is pruned", () => {
    const s = dataDirWithStore()
    fs.rmSync(path.join(s.store, "databases"), { recursive: true })
    recordDatabase(s.store, DATABASE)
    expect(prune(s.root, [s.named]).removed).toBe(0)
    fs.rmSync(unrecordedFile(s.store))
    expect(prune(s.root, [s.named])).toMatchObject({ skipped: [], removed: 1 })
  })

  test("one prune at a time: another one running is an error; the lock of one killed is taken", () => {
    const s = dataDirWithStore()
    const lock = path.join(s.root, "prune.lock")
    fs.writeFileSync(lock, `${process.ppid}@${os.hostname()}`)
    expect(() => prune(s.root, [s.named])).toThrow(`Another reins checkpoints prune is running (${process.ppid}@${os.hostname()}): wait for it to end`)
    expect(fs.existsSync(objectFile(s.store, s.stale))).toBe(true)
    // a dry run changes nothing: it does not wait
    expect(prune(s.root, [s.named], true).removed).toBe(1)
    fs.writeFileSync(lock, `${deadPid()}@${os.hostname()}`)
    expect(prune(s.root, [s.named]).removed).toBe(1)
    expect(fs.existsSync(lock)).toBe(false)
  })

  test("a copy stored again while the prune looks at it is put back", () => {
    const s = dataDirWithStore()
    const file = objectFile(s.store, s.stale)
    // its time renewed after the prune's cutoff: not removed, back in place
    expect(removeUnused(file, now - 7 * DAY)).toBe(true)
    const again = objectFile(s.store, makeObjectStore(s.store).put(Buffer.from("deleted session's\n")))
    expect(again).toBe(file)
    expect(removeUnused(file, now - 7 * DAY)).toBe(false)
    expect(fs.readFileSync(file, "utf8")).toBe("deleted session's\n")
    expect(fs.existsSync(asideOf(file))).toBe(false)
  })

  test("--older-than 0 still keeps what was used in the last hour", () => {
    const s = dataDirWithStore()
    age(objectFile(s.store, s.fresh), 30 * 60_000)
    const report = pruneCheckpoints({ root: s.root, referenced: new Set([s.named]), database: DATABASE, olderThanMs: 0, now, dryRun: false })
    expect(report).toMatchObject({ removed: 1, kept: 3 })
    expect(fs.existsSync(objectFile(s.store, s.fresh))).toBe(true)
  })

  test("a copy a prune killed half way had set aside is read meanwhile, and comes back at the next prune, even of a store left alone", () => {
    const s = dataDirWithStore()
    const file = objectFile(s.store, s.named)
    fs.renameSync(file, asideOf(file))
    expect(makeObjectStore(s.store).get(s.named)?.toString()).toBe("named by a session\n")
    expect(makeObjectStore(s.store).has(s.named)).toBe(true)
    fs.writeFileSync(path.join(s.store, JOURNAL), "{}")
    expect(prune(s.root, [s.named]).skipped).toHaveLength(1)
    expect(fs.readFileSync(file, "utf8")).toBe("named by a session\n")
    expect(fs.existsSync(asideOf(file))).toBe(false)
  })

  test("files that are not a store's are never touched", () => {
    const s = dataDirWithStore()
    const stray = path.join(s.store, "objects", "ab", "README")
    fs.mkdirSync(path.dirname(stray), { recursive: true })
    fs.writeFileSync(stray, "mine")
    age(stray, 30 * DAY)
    const other = path.join(s.root, "not-a-store")
    fs.mkdirSync(other)
    expect(prune(s.root, [s.named])).toMatchObject({ stores: 1, copies: 4, removed: 1 })
    expect(fs.existsSync(stray)).toBe(true)
  })

  test("each store on its own: one left alone does not keep another from being pruned", () => {
    const a = dataDirWithStore()
    const other = path.join(a.root, "fedcba9876543210fedcba98")
    const objects = makeObjectStore(other)
    recordDatabase(other, DATABASE)
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
      keptBytes: 0,
      temporaries: 0,
      failed: 0
    })
  })
})

describe("what keeps a copy", () => {
  test("a tracker marks its store while it lives, and takes the mark away once its index is saved", () => {
    const root = tempDir("reins-prune-tree-")
    fs.writeFileSync(path.join(root, "a.txt"), "a\n")
    const store = path.join(checkpointsRoot(tempDir("reins-prune-data-")), "00112233445566778899aabb")
    recordDatabase(store, DATABASE)
    const later = { root: path.dirname(store), referenced: new Set<string>(), database: DATABASE, olderThanMs: 0, now: now + DAY, dryRun: false }
    const tracker = makeTracker(root, store, makeObjectStore(store), { maxFileBytes: 1024 })
    expect(usersOf(store, now).map((u) => u.pid)).toEqual([process.pid])
    expect(pruneCheckpoints(later).skipped).toHaveLength(1)
    tracker.close()
    expect(usersOf(store, now)).toEqual([])
    // what it saw is in its index: kept however old
    expect(pruneCheckpoints(later)).toMatchObject({ skipped: [], copies: 1, removed: 0, kept: 1 })
  })

  test("a tracker's index keeps what its steps changed from and to for a day, one file a close: two closing at once keep both", () => {
    const store = path.join(checkpointsRoot(tempDir("reins-prune-data-")), "00112233445566778899aabb")
    fs.mkdirSync(store, { recursive: true })
    expect(saveIndex(store, new Map(), new Set(["h-before", "h-after"]), now - RECENT_MS + 1000)).toBe(true)
    expect(saveIndex(store, new Map(), new Set(["h-next"]), now)).toBe(true)
    expect([...(indexedHashes(store, now)?.hashes ?? [])].sort()).toEqual(["h-after", "h-before", "h-next"])
    // a day after the first: only what was changed since, whether the index was saved again or not
    expect([...(indexedHashes(store, now + 2000)?.hashes ?? [])].sort()).toEqual(["h-next"])
    saveIndex(store, new Map(), new Set(), now + 2000)
    expect(fs.readdirSync(path.join(store, "recent"))).toHaveLength(1)
  })

  test("an index an older reins saved (the files only) is read, and its store left whole", () => {
    const s = dataDirWithStore()
    fs.writeFileSync(
      path.join(s.store, "index.json"),
      JSON.stringify([["a.txt", { state: { kind: "file", mode: 0o644, size: 3, hash: s.indexed }, stamp: "x" }]])
    )
    expect(readIndex(s.store)).toMatchObject({ older: true })
    expect(readIndex(s.store)?.files.get("a.txt")?.state).toMatchObject({ hash: s.indexed })
    expect(prune(s.root, [s.named]).skipped[0]?.reason).toContain("its index was last saved by an older reins")
  })

  test("a tracker whose index cannot be saved (a full disk) leaves its mark: a prune under way still finds it in use", () => {
    const root = tempDir("reins-prune-tree-")
    fs.writeFileSync(path.join(root, "a.txt"), "a\n")
    const store = path.join(checkpointsRoot(tempDir("reins-prune-data-")), "00112233445566778899aabb")
    const tracker = makeTracker(root, store, makeObjectStore(store), { maxFileBytes: 1024 })
    // index.json cannot be replaced by a file
    fs.mkdirSync(path.join(store, "index.json"), { recursive: true })
    fs.writeFileSync(path.join(store, "index.json", "x"), "")
    tracker.close()
    expect(usersOf(store, now).map((u) => ({ pid: u.pid, gone: u.gone }))).toEqual([{ pid: process.pid, gone: false }])
  })

  test("a step recorded while a prune runs (after it read the sessions) keeps the copy its undo needs", () => {
    const root = tempDir("reins-prune-tree-")
    fs.writeFileSync(path.join(root, "a.txt"), "unchanged for weeks\n")
    const store = path.join(checkpointsRoot(tempDir("reins-prune-data-")), "00112233445566778899aabb")
    recordDatabase(store, DATABASE)
    makeTracker(root, store, makeObjectStore(store), { maxFileBytes: 1024 }).close()
    const v1 = objectFile(store, hashOf(Buffer.from("unchanged for weeks\n")))
    age(v1, 30 * DAY)
    // the prune has read the sessions (none names v1); a reins runs a step in the project and closes
    const referenced = new Set<string>()
    const tracker = makeTracker(root, store, makeObjectStore(store), { maxFileBytes: 1024 })
    const since = tracker.mark()
    fs.writeFileSync(path.join(root, "a.txt"), "written by the step\n")
    tracker.touched(["a.txt"])
    expect(tracker.changesSince(since)).toMatchObject([{ path: "a.txt", before: { kind: "file", hash: hashOf(Buffer.from("unchanged for weeks\n")) } }])
    tracker.close()
    // the prune reaches the store: no mark; the index names the new content, and v1 as what a step changed from
    const report = pruneCheckpoints({ root: path.dirname(store), referenced, database: DATABASE, olderThanMs: 7 * DAY, now, dryRun: false })
    expect(report).toMatchObject({ skipped: [], removed: 0 })
    expect(fs.existsSync(v1)).toBe(true)
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
