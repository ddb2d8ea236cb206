// The session database holds every conversation (what was read, run and said): on a shared machine no other user
// reads it. A new data dir is created 0700 and a new database 0600 (its WAL too); an existing database readable by
// others (an earlier reins made it 0644) loses the group's and others' bits. Several reins opening a fresh one at the
// same moment (a run and a `sessions list` beside it) all open it.
import { describe, expect, test } from "bun:test"
import { Database } from "bun:sqlite"
import { waitFor } from "@reins/testkit"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { SessionStore } from "../src/SessionStore.ts"
import * as Storage from "../src/Storage.ts"
import { run, session, tempDir } from "./support.ts"

const mode = (p: string) => fs.statSync(p).mode & 0o777

describe("the session database's modes", () => {
  const cases: ReadonlyArray<{ readonly name: string; readonly prepare: (file: string) => void; readonly dir: number; readonly file: number }> = [
    { name: "a new data dir and database", prepare: () => {}, dir: 0o700, file: 0o600 },
    {
      name: "an existing 0755 dir, new database",
      prepare: (file) => fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o755 }),
      dir: 0o755,
      file: 0o600
    },
    {
      name: "an existing 0644 database is made 0600",
      prepare: (file) => {
        fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o755 })
        fs.writeFileSync(file, "", { mode: 0o644 })
        fs.chmodSync(file, 0o644)
      },
      dir: 0o755,
      file: 0o600
    },
    {
      name: "an existing 0600 database stays so",
      prepare: (file) => {
        fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
        fs.writeFileSync(file, "", { mode: 0o600 })
      },
      dir: 0o700,
      file: 0o600
    }
  ]
  for (const c of cases) {
    test(c.name, async () => {
      const file = path.join(tempDir(), "data", "reins.db")
      c.prepare(file)
      let wal: number | undefined
      await run(
        Storage.layerSqlite(file),
        Effect.gen(function* () {
          yield* (yield* SessionStore).createSession(session("ses_a", { updated: 1 }))
          wal = fs.existsSync(`${file}-wal`) ? mode(`${file}-wal`) : undefined
        })
      )
      expect(mode(path.dirname(file))).toBe(c.dir)
      expect(mode(file)).toBe(c.file)
      if (wal !== undefined) expect(wal).toBe(c.file)
      // still a working database
      const list = await run(
        Storage.layerSqlite(file),
        Effect.gen(function* () {
          return yield* (yield* SessionStore).listSessions()
        })
      )
      expect(list.map((s) => s.id)).toEqual(["ses_a"])
    })
  }
})

describe("several reins opening a fresh database at the same moment", () => {
  // Each round: processes started together on a new data dir, released at once (see the fixture). Before, the loser of
  // an exists-then-create race failed with EEXIST, and a switch to WAL while another process held the file failed with
  // "database is locked" (SQLite does not wait for that lock).
  const ROUNDS = 4
  const PROCESSES = 6
  test(`${ROUNDS} rounds of ${PROCESSES} processes: every one opens it and stores its session; the file is 0600 and in WAL mode`, async () => {
    const fixture = path.join(import.meta.dir, "fixtures", "open-at-once.ts")
    for (let round = 0; round < ROUNDS; round++) {
      const dir = tempDir()
      const file = path.join(dir, "data", "reins.db")
      const go = path.join(dir, "go")
      const tags = Array.from({ length: PROCESSES }, (_, i) => `r${round}p${i}`)
      const procs = tags.map((tag) => Bun.spawn(["bun", fixture, file, tag, go], { stdout: "pipe", stderr: "pipe" }))
      try {
        await waitFor(() => tags.every((tag) => fs.existsSync(`${go}.${tag}.ready`)), "every process to be ready")
        fs.writeFileSync(go, "")
        const results = await Promise.all(procs.map(async (p) => ({ code: await p.exited, stderr: await new Response(p.stderr).text() })))
        expect(results.filter((r) => r.code !== 0)).toEqual([])
      } finally {
        // a round that failed leaves no process spinning
        for (const p of procs) p.kill("SIGKILL")
      }
      const stored = await run(
        Storage.layerSqlite(file),
        Effect.flatMap(SessionStore, (store) => store.listSessions())
      )
      expect(stored.map((s) => s.id).sort()).toEqual(tags.map((tag) => `ses_${tag}`).sort())
      expect(mode(file)).toBe(0o600)
      const db = new Database(file, { readonly: true })
      expect(db.query("PRAGMA journal_mode").get()).toEqual({ journal_mode: "wal" })
      db.close()
    }
  })
})

describe("what is at the database's path already", () => {
  const open = (file: string) =>
    run(
      Storage.layerSqlite(file),
      Effect.flatMap(SessionStore, (store) => store.listSessions())
    )

  test("a FIFO or a directory: the open fails at once with a StoreError naming the file (it does not wait for a reader)", async () => {
    const fifo = path.join(tempDir(), "reins.db")
    expect(Bun.spawnSync(["mkfifo", fifo]).exitCode).toBe(0)
    const dir = path.join(tempDir(), "reins.db")
    fs.mkdirSync(dir)
    for (const file of [fifo, dir]) {
      const error = await open(file).then(
        () => undefined,
        (e: unknown) => e
      )
      expect(String(error)).toContain(file)
    }
  })

  test("a database another process holds locked while it is switched to WAL: the open waits for it, then finds it in WAL mode", async () => {
    const dir = tempDir()
    const file = path.join(dir, "reins.db")
    // a database in rollback mode, locked EXCLUSIVE by another process until it is told to let go
    const seed = new Database(file)
    seed.run("CREATE TABLE t (x)")
    seed.close()
    const release = `${file}.release`
    const holder = Bun.spawn(
      [
        "bun",
        "-e",
        `const { Database } = require("bun:sqlite"); const fs = require("node:fs"); const db = new Database(${JSON.stringify(file)});
         db.run("BEGIN EXCLUSIVE"); db.run("INSERT INTO t VALUES (1)"); fs.writeFileSync(${JSON.stringify(`${file}.held`)}, "");
         while (!fs.existsSync(${JSON.stringify(release)})) Bun.sleepSync(5); db.run("COMMIT"); db.close()`
      ],
      { stdout: "inherit", stderr: "inherit" }
    )
    // a reins opening it (the fixture: it opens once `go` is there, and stores a session)
    const go = path.join(dir, "go")
    const opener = Bun.spawn(["bun", path.join(import.meta.dir, "fixtures", "open-at-once.ts"), file, "late", go], { stdout: "pipe", stderr: "pipe" })
    try {
      await waitFor(() => fs.existsSync(`${file}.held`) && fs.existsSync(`${go}.late.ready`), "the lock to be held and the opener ready")
      // the opener starts while the lock is held; the holder lets go within a few milliseconds of that
      fs.writeFileSync(go, "")
      fs.writeFileSync(release, "")
      expect({ code: await opener.exited, stderr: await new Response(opener.stderr).text() }).toEqual({ code: 0, stderr: "" })
      expect(await holder.exited).toBe(0)
      const db = new Database(file, { readonly: true })
      expect(db.query("PRAGMA journal_mode").get()).toEqual({ journal_mode: "wal" })
      expect(db.query("SELECT count(*) AS n FROM t").get()).toEqual({ n: 1 })
      db.close()
    } finally {
      holder.kill("SIGKILL")
      opener.kill("SIGKILL")
    }
  })
})
