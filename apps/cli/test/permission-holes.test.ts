// Issue 13 items 1–3 through the real CLI: every variant of the tables is asked or denied by
// `reins debug permission` under `* allow, rm * deny`, ordinary commands stay allowed, and one real
// run per item leaves the victim file in place.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { opaqueExecution, ordinary, reservedWords, variablePaths } from "../../../packages/permission/test/holes.ts"
import {
  arithmeticData,
  askedHarmless,
  commandTable,
  evaluatingBuiltins,
  evaluationQuiet,
  pathChanges,
  programRunners
} from "../../../packages/permission/test/holes-eval.ts"
import { ensureBuilt, events, projects, reins } from "./support.ts"

beforeAll(() => ensureBuilt())
const setup = projects()
const rules = { bash: { "*": "allow", "rm *": "deny" } }

describe("reins debug permission: the tables of issue 13", () => {
  // the project and, beside it (outside), the home
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-holes-")))
  const dir = path.join(root, "project")
  fs.mkdirSync(dir)
  const config = path.join(root, "rules.json")
  fs.writeFileSync(config, JSON.stringify({ permission: rules }))
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: path.join(root, "home"), REINS_DATA_DIR: root, NO_COLOR: "1" }
  const project = { cwd: dir, dataDir: root, env }
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }))

  /** One CLI call for a whole table: several subjects give one result per subject, in order. */
  const decisions = async (subjects: ReadonlyArray<string>) => {
    const r = await reins(["debug", "permission", "--rules", config, "--cwd", dir, ...subjects], project)
    expect(r.stderr).toBe("")
    expect(r.code).toBe(0)
    const results = JSON.parse(r.stdout) as Array<{ subject: string; decision: string }>
    expect(results.map((x) => x.subject)).toEqual([...subjects])
    return results
  }

  for (const [item, table] of [
    ["item 1 (reserved words after time, !, coproc)", reservedWords],
    ["item 2 (paths through variables)", variablePaths],
    ["item 3 (opaque execution)", opaqueExecution],
    ["issue 25: data evaluated as arithmetic", arithmeticData],
    ["issue 25: computed names, completions, bindings", askedHarmless],
    ["issue 25: builtins that evaluate strings", evaluatingBuiltins],
    ["issue 25: the command table", commandTable],
    ["issue 25: runners and program-naming options", programRunners],
    ["issue 25: PATH changes", pathChanges]
  ] as const) {
    test(`${item}: every variant is asked or denied`, async () => {
      const allowed = (await decisions(table)).filter((x) => x.decision !== "ask" && x.decision !== "deny").map((x) => x.subject)
      expect(allowed).toEqual([])
    })
  }

  test("ordinary commands stay allowed", async () => {
    const notAllowed = (await decisions([...ordinary, ...evaluationQuiet])).filter((x) => x.decision !== "allow").map((x) => x.subject)
    expect(notAllowed).toEqual([])
  })

  test("one subject still prints one object", async () => {
    const r = await reins(["debug", "permission", "--rules", config, "--cwd", dir, "time { rm x; }"], project)
    expect(JSON.parse(r.stdout)).toMatchObject({ decision: "deny", requests: [{ permission: "bash", patterns: ["rm x"], action: "deny" }] })
  })
})

describe("a real run per item: the bypass is refused and the victim survives", () => {
  /**
   * The model first runs an allowed command (so bash really runs in this set-up), then the
   * bypass; `--permission deny` turns every question into a refusal.
   */
  const attempt = async (bypass: string, prepare: (cwd: string, home: string) => void) => {
    const p = await setup(
      [
        { toolCalls: [{ name: "bash", arguments: { command: "touch ran.txt" } }] },
        { toolCalls: [{ name: "bash", arguments: { command: bypass } }] },
        { text: "done" }
      ],
      { permission: rules }
    )
    prepare(p.cwd, p.env.HOME!)
    const r = await reins(["run", "--format", "json", "--permission", "deny", "go"], p)
    expect(r.code).toBe(0)
    expect(fs.existsSync(path.join(p.cwd, "ran.txt"))).toBe(true)
    const failed = events(r.stdout).filter((e) => e.type === "part.updated" && e.part.type === "tool" && e.part.state.status === "error")
    expect(failed.map((e) => e.part.state.input.command)).toEqual([bypass])
    return p
  }

  test("item 1: time { rm victim; } is judged as rm (denied)", async () => {
    const p = await attempt("time { rm victim; }", (cwd) => fs.writeFileSync(path.join(cwd, "victim"), "keep"))
    expect(fs.readFileSync(path.join(p.cwd, "victim"), "utf8")).toBe("keep")
  })

  test("item 2: a path through $HOME asks (refused): nothing read or overwritten outside", async () => {
    const p = await attempt('cat $HOME/secret > leaked; cp /dev/null "$HOME/victim"', (_, home) => {
      fs.writeFileSync(path.join(home, "secret"), "s3cret")
      fs.writeFileSync(path.join(home, "victim"), "keep")
    })
    expect(fs.existsSync(path.join(p.cwd, "leaked"))).toBe(false)
    expect(fs.readFileSync(path.join(p.env.HOME!, "victim"), "utf8")).toBe("keep")
  })

  test("item 3: a script written and run in one command asks (refused)", async () => {
    const p = await attempt("printf 'rm victim' > s.sh; sh s.sh", (cwd) => fs.writeFileSync(path.join(cwd, "victim"), "keep"))
    expect(fs.readFileSync(path.join(p.cwd, "victim"), "utf8")).toBe("keep")
    expect(fs.existsSync(path.join(p.cwd, "s.sh"))).toBe(false)
  })
})
