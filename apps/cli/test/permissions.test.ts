import { beforeAll, describe, expect, test } from "bun:test"
import type { PermissionGrant } from "@reins/domain"
import { Grants, Storage } from "@reins/storage"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ensureBuilt, reins, type Project } from "./support.ts"

beforeAll(() => ensureBuilt())

/** A temp working directory (no reins.json, no model: the command needs neither) and a temp data dir. */
const project = (): Project => {
  const cwd = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-perm-")))
  const dataDir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-perm-data-")))
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dataDir, REINS_DATA_DIR: dataDir, NO_COLOR: "1" }
  return { cwd, dataDir, env }
}

/** Writes grants straight into the CLI's database, as the permission service would. */
const seed = (p: Project, grants: ReadonlyArray<PermissionGrant>) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const store = yield* Grants
      for (const grant of grants) yield* store.add(grant)
    }).pipe(Effect.provide(Storage.layerSqlite(path.join(p.dataDir, "reins.db"))))
  )

const stored = (p: Project) =>
  Effect.runPromise(Effect.flatMap(Grants, (store) => store.list()).pipe(Effect.provide(Storage.layerSqlite(path.join(p.dataDir, "reins.db")))))

// 2026-01-02 03:04 UTC, and a minute later.
const T0 = Date.UTC(2026, 0, 2, 3, 4)

/** Two grants for the project's directory, one for another project. */
const seedTwoProjects = async (p: Project) => {
  // `<cwd>-other`: unique per test, and it sorts after the project's own directory.
  const other = `${p.cwd}-other`
  const grants: Array<PermissionGrant> = [
    { id: "grt_0001aaaa", project: p.cwd, permission: "bash", pattern: "git status*", time: { created: T0 } },
    { id: "grt_0002bbbb", project: p.cwd, permission: "edit", pattern: "src/*", time: { created: T0 + 60_000 } },
    { id: "grt_0003cccc", project: other, permission: "bash", pattern: "npm test", time: { created: T0 } }
  ]
  await seed(p, grants)
  return { other, grants }
}

describe("reins permissions list", () => {
  test("with no grants says so and how to keep them per project", async () => {
    const p = project()
    const r = await reins(["permissions", "list"], p)
    expect(r.code).toBe(0)
    expect(r.stderr).toBe("")
    expect(r.stdout.trim()).toBe(
      `No saved permission grants for ${p.cwd}. "always" replies are kept per session unless reins.json sets "permission_persist": "project".`
    )
    const json = await reins(["permissions", "list", "--format", "json"], p)
    expect(json.code).toBe(0)
    expect(JSON.parse(json.stdout)).toEqual([])
  })

  test("shows only this directory's grants unless --all, as text and as json", async () => {
    const p = project()
    const { other, grants } = await seedTwoProjects(p)

    const text = await reins(["permissions", "list"], p)
    expect(text.code).toBe(0)
    expect(text.stdout.trimEnd().split("\n")).toEqual([
      `Saved permission grants for ${p.cwd}:`,
      "  grt_0001aaaa  bash  git status*  (2026-01-02 03:04)",
      "  grt_0002bbbb  edit  src/*  (2026-01-02 03:05)"
    ])

    const json = await reins(["permissions", "list", "--format", "json"], p)
    expect(json.code).toBe(0)
    expect(JSON.parse(json.stdout)).toEqual([grants[0], grants[1]])

    const all = await reins(["permissions", "list", "--all", "--format", "json"], p)
    expect(JSON.parse(all.stdout)).toEqual(grants)

    const allText = await reins(["permissions", "list", "--all"], p)
    expect(allText.code).toBe(0)
    expect(allText.stdout.trimEnd().split("\n")).toEqual([
      `Saved permission grants for ${p.cwd}:`,
      "  grt_0001aaaa  bash  git status*  (2026-01-02 03:04)",
      "  grt_0002bbbb  edit  src/*  (2026-01-02 03:05)",
      "",
      `Saved permission grants for ${other}:`,
      "  grt_0003cccc  bash  npm test  (2026-01-02 03:04)"
    ])

    // From the other project's directory, only its grant shows.
    fs.mkdirSync(other, { recursive: true })
    const there = await reins(["permissions", "list", "--format", "json"], { ...p, cwd: other })
    expect(JSON.parse(there.stdout)).toEqual([grants[2]])
    fs.rmSync(other, { recursive: true })
  })
})

describe("reins permissions revoke", () => {
  test("revokes one id and says what it revoked", async () => {
    const p = project()
    await seedTwoProjects(p)
    const r = await reins(["permissions", "revoke", "grt_0001aaaa"], p)
    expect(r.code).toBe(0)
    expect(r.stderr).toBe("")
    expect(r.stdout).toContain("Revoked grt_0001aaaa  bash  git status*")
    expect(r.stdout).toContain("1 permission grant revoked.")
    expect((await stored(p)).map((g) => g.id).sort()).toEqual(["grt_0002bbbb", "grt_0003cccc"])
    // Ids are global: one that `list --all` shows for another project can be revoked from here.
    const elsewhere = await reins(["permissions", "revoke", "grt_0003cccc"], p)
    expect(elsewhere.code).toBe(0)
    expect(elsewhere.stdout).toContain(`Revoked grt_0003cccc  bash  npm test  (2026-01-02 03:04)  ${p.cwd}-other`)
    expect((await stored(p)).map((g) => g.id)).toEqual(["grt_0002bbbb"])
  })

  test("an unknown id exits 2, names it, points to the list, and revokes nothing", async () => {
    const p = project()
    await seedTwoProjects(p)
    const r = await reins(["permissions", "revoke", "grt_0002bbbb", "grt_nope"], p)
    expect(r.code).toBe(2)
    expect(r.stdout).toBe("")
    expect(r.stderr).toContain("grt_nope")
    expect(r.stderr).not.toContain("grt_0002bbbb")
    expect(r.stderr).toContain("reins permissions list")
    expect(r.stderr.trim().split("\n").length).toBe(1)
    expect((await stored(p)).map((g) => g.id).sort()).toEqual(["grt_0001aaaa", "grt_0002bbbb", "grt_0003cccc"])
  })

  test("--all revokes every grant of this directory and leaves other projects alone", async () => {
    const p = project()
    await seedTwoProjects(p)
    const r = await reins(["permissions", "revoke", "--all"], p)
    expect(r.code).toBe(0)
    expect(r.stdout).toContain("Revoked grt_0001aaaa")
    expect(r.stdout).toContain("Revoked grt_0002bbbb")
    expect(r.stdout).toContain("2 permission grants revoked.")
    expect((await stored(p)).map((g) => g.id)).toEqual(["grt_0003cccc"])
    const list = await reins(["permissions", "list"], p)
    expect(list.stdout).toContain(`No saved permission grants for ${p.cwd}.`)
  })

  test("no ids and no --all, or both, is a usage error (exit 2)", async () => {
    const p = project()
    await seedTwoProjects(p)
    const none = await reins(["permissions", "revoke"], p)
    expect(none.code).toBe(2)
    expect(none.stderr).toContain("--all")
    const both = await reins(["permissions", "revoke", "--all", "grt_0001aaaa"], p)
    expect(both.code).toBe(2)
    expect((await stored(p)).length).toBe(3)
  })
})
