// `--database URL` / REINS_DATABASE_URL: a postgres:// URL keeps the sessions in PostgreSQL instead of the data
// dir's SQLite file, for every command that opens the store; a bad URL or an unreachable server is a clear error and
// a non-zero exit. The PostgreSQL tests need REINS_TEST_PG_URL (scripts/pg-test.sh starts a server) and skip without.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { SQL } from "bun"
import * as fs from "node:fs"
import * as path from "node:path"
import { ensureBuilt, projects, reins, type Project } from "./support.ts"
import { openTui, send, settled } from "./tui-support.ts"
import { passwordIn } from "../src/DatabaseFlag.ts"

beforeAll(() => ensureBuilt())
const setup = projects()
const pgUrl = process.env.REINS_TEST_PG_URL

/** A schema of its own on the test server, and the URL whose connections use it; dropped after the file. */
const schemas: Array<string> = []
const freshUrl = async () => {
  const schema = `cli_${crypto.randomUUID().replaceAll("-", "")}`
  const admin = new SQL(pgUrl!)
  await admin.unsafe(`CREATE SCHEMA ${schema}`)
  await admin.close()
  schemas.push(schema)
  const url = new URL(pgUrl!)
  url.searchParams.set("options", `-c search_path=${schema}`)
  return url.toString()
}
afterAll(async () => {
  if (schemas.length === 0) return
  const admin = new SQL(pgUrl!)
  for (const schema of schemas) await admin.unsafe(`DROP SCHEMA ${schema} CASCADE`)
  await admin.close()
})

const withEnv = (p: Project, extra: Record<string, string>): Project => ({ ...p, env: { ...p.env, ...extra } })

describe.skipIf(pgUrl === undefined)("reins on PostgreSQL", () => {
  test("run --database URL stores the session there; sessions show through REINS_DATABASE_URL reads it back; the SQLite file has none", async () => {
    const p = await setup([{ text: "stored in postgres" }])
    const url = await freshUrl()
    const ran = await reins(["--database", url, "run", "where do you live?"], p)
    expect(ran.code).toBe(0)
    expect(ran.stderr).toMatch(/^\s*session ses_\S+ · 1 step/)
    expect(ran.stdout).toContain("stored in postgres")

    const pg = withEnv(p, { REINS_DATABASE_URL: url })
    const list = await reins(["sessions", "list", "--format", "json"], pg)
    expect(list.code).toBe(0)
    const sessions = JSON.parse(list.stdout) as Array<{ id: string; messages: number }>
    expect(sessions).toHaveLength(1)
    expect(sessions[0]!.messages).toBe(2)

    const shown = await reins(["sessions", "show", sessions[0]!.id], pg)
    expect(shown.code).toBe(0)
    expect(shown.stdout).toContain("where do you live?")
    expect(shown.stdout).toContain("stored in postgres")

    // the data dir's SQLite database (the default) never saw it
    const local = await reins(["sessions", "list", "--format", "json"], p)
    expect(local.code).toBe(0)
    expect(JSON.parse(local.stdout)).toEqual([])
    // and the session is in the schema's tables, as jsonb
    const admin = new SQL(url)
    const rows = await admin.unsafe("SELECT jsonb_typeof(data) AS kind, data->>'role' AS role FROM message ORDER BY id COLLATE \"C\"")
    await admin.close()
    expect(rows.map((row: { kind: string; role: string }) => [row.kind, row.role])).toEqual([
      ["object", "user"],
      ["object", "assistant"]
    ])
  })
})

describe.skipIf(pgUrl === undefined)("the interactive session on PostgreSQL", () => {
  test("reins --database URL on a terminal (the session's own entry, not the commands' parser) keeps its session there", async () => {
    const p = await setup([{ text: "kept in postgres too" }])
    const url = await freshUrl()
    {
      await using pty = await openTui(p, ["--database", url, "--yolo"])
      await send(pty, "where are you?")
      await settled(pty, "kept in postgres too")
      await pty.press("ctrl-d")
      expect(await pty.waitExit()).toBe(0)
    }
    const list = await reins(["sessions", "list", "--format", "json"], withEnv(p, { REINS_DATABASE_URL: url }))
    expect((JSON.parse(list.stdout) as Array<{ title: string; messages: number }>).map((s) => s.messages)).toEqual([2])
    // the data dir's SQLite database never saw it
    expect(JSON.parse((await reins(["sessions", "list", "--format", "json"], p)).stdout)).toEqual([])
  })
})

describe("a database URL reins cannot use", () => {
  test("an unreachable server: the URL without its password, what to check, exit 1; nothing is sent to the model", async () => {
    const p = await setup([{ text: "never" }])
    const bad = "postgres://reins:hunter2secret@127.0.0.1:1/reins"
    for (const args of [
      ["--database", bad, "run", "hello"],
      ["--database", bad, "sessions", "list"]
    ]) {
      const r = await reins(args, p)
      expect(r.code).toBe(1)
      expect(r.stderr).toContain("cannot connect to PostgreSQL at postgres://reins@127.0.0.1:1/reins")
      expect(r.stderr).toContain("REINS_DATABASE_URL or --database")
      expect(r.stderr + r.stdout).not.toContain("hunter2secret")
      // a password on the command line is in the process list for every user: said once, without the password
      expect(r.stderr).toContain("warning: the --database URL carries a password")
    }
    const env = await reins(["sessions", "list"], withEnv(p, { REINS_DATABASE_URL: bad }))
    expect(env.code).toBe(1)
    expect(env.stderr).toContain("cannot connect to PostgreSQL")
    // in the environment it is the user's alone: no warning
    expect(env.stderr).not.toContain("warning")
    expect(p.server.requests).toHaveLength(0)
    // nothing was created in the data dir either
    expect(fs.existsSync(path.join(p.dataDir, "reins.db"))).toBe(false)
  })

  test("a URL that is not postgres:// and a --database without one are told apart", async () => {
    const p = await setup([])
    const other = await reins(["--database", "mysql://root:topsecret@db/reins", "sessions", "list"], p)
    expect(other.code).toBe(1)
    expect(other.stderr).toContain("give a postgres://")
    expect(other.stderr).not.toContain("topsecret")
    const missing = await reins(["sessions", "list", "--database"], p)
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain("--database needs a URL")
  })
})

describe("--database on the command line", () => {
  const cases: ReadonlyArray<readonly [string, boolean]> = [
    ["postgres://reins:secret@127.0.0.1:5432/reins", true],
    ["postgresql://reins:s%40cret@db.internal/reins?sslmode=require", true],
    ["postgres://reins@127.0.0.1:5432/reins?password=secret", true],
    ["postgres://reins@127.0.0.1:5432/reins", false],
    ["postgres://127.0.0.1/reins", false],
    ["postgres:///reins?host=/run/postgresql", false]
  ]
  test.each(cases)("%s carries a password: %p", (url, expected) => {
    expect(passwordIn(url)).toBe(expected)
  })
})
