// `reins checkpoints prune` through the real CLI, after real turns: a copy of a file's content goes once no stored
// session's changes name it (its sessions deleted) and the project's index does not (the file is gone), never while
// a session could still undo to it; --dry-run removes nothing; a bad --older-than is a usage error.
import { beforeAll, describe, expect, test } from "bun:test"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import type { ScriptedStep } from "@reins/testkit"
import { editConfig, ensureBuilt, events, projects, reins, type Project, reinsOk } from "./support.ts"

beforeAll(() => ensureBuilt())

const setup = projects()

const ok = reinsOk

/** Every copy in the data dir's checkpoint stores, by content hash. */
const copies = (dataDir: string) => {
  const root = path.join(dataDir, "checkpoints")
  const out: Array<{ hash: string; file: string }> = []
  for (const store of fs.existsSync(root) ? fs.readdirSync(root) : [])
    for (const dir of fs.readdirSync(path.join(root, store, "objects")))
      for (const name of fs.readdirSync(path.join(root, store, "objects", dir)))
        out.push({ hash: `${dir}${name}`, file: path.join(root, store, "objects", dir, name) })
  return out
}
const sha = (text: string) => createHash("sha256").update(text).digest("hex")
const ageAll = (dataDir: string, days: number) => {
  const at = new Date(Date.now() - days * 24 * 3_600_000)
  for (const c of copies(dataDir)) fs.utimesSync(c.file, at, at)
}
/** As if the steps that ran were `days` ago: the index's recent changes (kept a day for a prune under way) too. */
const ageRecent = (dataDir: string, days: number) => {
  const root = path.join(dataDir, "checkpoints")
  for (const store of fs.readdirSync(root)) {
    const recent = path.join(root, store, "recent")
    for (const name of fs.existsSync(recent) ? fs.readdirSync(recent) : []) {
      const file = path.join(recent, name)
      const noted = JSON.parse(fs.readFileSync(file, "utf8")) as { at: number; hashes: ReadonlyArray<string> }
      fs.writeFileSync(file, JSON.stringify({ ...noted, at: noted.at - days * 24 * 3_600_000 }))
    }
  }
}
const pruned = async (args: ReadonlyArray<string>, p: Project) => JSON.parse((await ok(["checkpoints", "prune", "--format", "json", ...args], p)).stdout)

describe("reins checkpoints prune", () => {
  test("a copy goes once no session can undo to it, and not before", async () => {
    const p = await setup([
      { toolCalls: [{ name: "write", arguments: { filePath: "a.txt", content: "ONLY-SESSION-A\n" } }] },
      { text: "A-DONE" },
      { toolCalls: [{ name: "bash", arguments: { command: "rm a.txt && printf 'SESSION-B\\n' > b.txt" } }] },
      { text: "B-DONE" }
    ])
    const a = events((await ok(["run", "--yolo", "--format", "json", "FIRST"], p)).stdout)[0]!.session.id as string
    const b = events((await ok(["run", "--yolo", "--format", "json", "SECOND"], p)).stdout)[0]!.session.id as string
    const onlyA = sha("ONLY-SESSION-A\n")
    expect(copies(p.dataDir).map((c) => c.hash)).toContain(onlyA)
    // long unused, but named: A wrote it, B removed it (both can undo to it); b.txt is what the project has now
    ageAll(p.dataDir, 30)
    ageRecent(p.dataDir, 30)
    expect(await pruned([], p)).toMatchObject({ sessions: 2, removed: 0, skipped: [] })
    await ok(["sessions", "delete", a], p)
    expect(await pruned([], p)).toMatchObject({ sessions: 1, removed: 0 })
    await ok(["sessions", "delete", b], p)

    const dry = await pruned(["--dry-run"], p)
    expect(dry).toMatchObject({ dryRun: true, sessions: 0, removed: 1, removedBytes: "ONLY-SESSION-A\n".length })
    expect(copies(p.dataDir).map((c) => c.hash)).toContain(onlyA)
    // used within the days given: kept
    expect(await pruned(["--older-than", "60"], p)).toMatchObject({ removed: 0 })

    const text = await ok(["checkpoints", "prune"], p)
    expect(text.stdout).toBe(
      `Removed 1 copy (15 B) that no stored session can undo to and that were not used for 7 days; kept 1 copy (10 B). Sessions read: 0 (sqlite:${path.join(p.dataDir, "reins.db")}).\n`
    )
    const left = copies(p.dataDir).map((c) => c.hash)
    expect(left).not.toContain(onlyA)
    // the project's files as they are now stay (the next change of b.txt is undone to it)
    expect(left).toContain(sha("SESSION-B\n"))
  })

  test("a project whose copies sessions of another database name is left whole, and named", async () => {
    const p = await setup([{ toolCalls: [{ name: "write", arguments: { filePath: "a.txt", content: "THEIRS\n" } }] }, { text: "DONE" }])
    await ok(["run", "--yolo", "FIRST"], p)
    // as if a reins with another database (REINS_DATABASE_URL) had run here too
    const [store] = fs.readdirSync(path.join(p.dataDir, "checkpoints"))
    fs.writeFileSync(path.join(p.dataDir, "checkpoints", store!, "databases", "0123456789abcdef"), "postgres://db.example:5432/reins")
    ageAll(p.dataDir, 30)
    const report = await pruned(["--older-than", "0"], p)
    expect(report).toMatchObject({
      removed: 0,
      copies: 0,
      skipped: [{ project: p.cwd, reason: expect.stringContaining("sessions of another database use it too (postgres://db.example:5432/reins)") }]
    })
    const text = await ok(["checkpoints", "prune"], p)
    expect(text.stdout).toContain(`Left alone: ${p.cwd}: sessions of another database use it too`)
  })

  test("--older-than below 0 is a usage error; --help says what it keeps", async () => {
    const p = await setup([])
    const bad = await reins(["checkpoints", "prune", "--older-than", "-1"], p)
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain("--older-than takes a number of days, 0 or more (got -1)")
    const help = await ok(["checkpoints", "prune", "--help"], p)
    expect(help.stdout).toContain("--dry-run")
    expect(help.stdout).toContain("Keep the copies written or used within this many days")
  })
})

describe("a step's first checkpoint", () => {
  /** The data dir's checkpoint stores a tracker was made for (it keeps its watcher's barrier there). */
  const tracked = (dataDir: string) => {
    const root = path.join(dataDir, "checkpoints")
    return fs.existsSync(root) ? fs.readdirSync(root).filter((store) => fs.existsSync(path.join(root, store, "watch"))) : []
  }

  const overloaded = { error: { status: 503, message: "overloaded", headers: { "retry-after-ms": "20" } } }
  const badKey = { error: { status: 401, message: "bad key", type: "authentication_error" } }
  // unreachable, turned down, and failed at every attempt (the retry's notice is no sign it was taken): no tool can have run
  const refusals: ReadonlyArray<{
    name: string
    answers: ReadonlyArray<ScriptedStep>
    edit: (config: Record<string, any>) => Record<string, any>
    says: string
  }> = [
    {
      name: "the model unreachable",
      answers: [],
      edit: (config) => ({ ...config, provider: { local: { ...config.provider.local, baseURL: "http://127.0.0.1:1/v1" } } }),
      says: "could not connect to http://127.0.0.1:1/v1"
    },
    { name: "a 401 from the server", answers: [badKey], edit: (config) => config, says: "bad key" },
    {
      name: "503 at every attempt",
      answers: [overloaded, overloaded],
      edit: (config) => ({ ...config, retry: { attempts: 2 } }),
      says: "gave up after 2 attempts"
    }
  ]
  for (const refusal of refusals) {
    test(`is not made when the server never took the step's request (${refusal.name}): no scan of the project on the way out`, async () => {
      const p = await setup(refusal.answers)
      editConfig({ ...p, configFile: p.configFile! }, refusal.edit)
      const r = await reins(["run", "--yolo", "hello"], p)
      expect(r.code).not.toBe(0)
      expect(r.stderr).toContain(refusal.says)
      expect(tracked(p.dataDir)).toEqual([])
    })
  }

  test("is made once the server took the request, whatever the step then does (a text answer here)", async () => {
    const p = await setup([{ text: "an answer" }])
    expect((await ok(["run", "--yolo", "hello"], p)).stdout).toContain("an answer")
    expect(tracked(p.dataDir)).toHaveLength(1)
  })
})
