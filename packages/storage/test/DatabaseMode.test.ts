// The session database holds every conversation (what was read, run and said): on a shared machine no other user
// reads it. A new data dir is created 0700 and a new database 0600 (its WAL too); an existing database readable by
// others (an earlier reins made it 0644) loses the group's and others' bits.
import { describe, expect, test } from "bun:test"
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
