// What the reins command offers on its surface: effect/cli's --wizard and --log-level are gone from
// every help page and refused; --help, --version and --completions stay (the script completes). And
// what it installs: no @effect/platform-node, so no `redis` in the lockfile.
import { beforeAll, describe, expect, test } from "bun:test"
import * as fs from "node:fs"
import * as path from "node:path"
import { ensureBuilt, projects, reins } from "./support.ts"

beforeAll(() => ensureBuilt())

const setup = projects()

describe("global flags", () => {
  test("reins --help and reins run --help show --help, --version and --completions, not --wizard or --log-level", async () => {
    const p = await setup([])
    for (const args of [["--help"], ["run", "--help"], ["sessions", "list", "--help"]]) {
      const r = await reins(args, p)
      expect({ args, code: r.code }).toEqual({ args, code: 0 })
      expect(r.stdout).toContain("--help, -h")
      expect(r.stdout).toContain("--version, -v")
      expect(r.stdout).toContain("--completions <bash|zsh|fish|powershell|sh|pwsh>")
      expect(r.stdout).not.toContain("--wizard")
      expect(r.stdout).not.toContain("--log-level")
    }
  })

  test("--wizard and --log-level are usage errors (exit 2), no model called", async () => {
    const p = await setup([{ text: "never" }])
    const wizard = await reins(["--wizard"], p)
    expect(wizard.code).toBe(2)
    expect(wizard.stderr).toContain("Unrecognized flag: --wizard")
    const level = await reins(["run", "--log-level", "debug", "hello"], p)
    expect(level.code).toBe(2)
    expect(level.stderr).toContain("Unrecognized flag: --log-level")
    expect(p.server.requests).toHaveLength(0)
  })

  test.skipIf(Bun.which("bash") === null)("--completions bash prints a script that completes subcommands and flags in bash", async () => {
    const p = await setup([])
    const r = await reins(["--completions", "bash"], p)
    expect(r.code).toBe(0)
    const script = path.join(p.cwd, "reins.bash")
    fs.writeFileSync(script, r.stdout)
    const complete = (words: ReadonlyArray<string>) =>
      Bun.spawnSync([
        "bash",
        "-c",
        `source ${script}; COMP_WORDS=(${words.join(" ")}); COMP_CWORD=${words.length - 1}; COMP_LINE="${words.join(" ")}"; COMP_POINT=\${#COMP_LINE}; _reins reins ${words.at(-1)} ${words.at(-2)}; echo "\${COMPREPLY[@]}"`
      ])
        .stdout.toString()
        .trim()
    expect(complete(["reins", "se"]).split(" ").sort()).toEqual(["serve", "sessions"])
    expect(complete(["reins", "run", "--form"])).toBe("--format")
  })

  test("--version prints the version", async () => {
    const r = await reins(["--version"], await setup([]))
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/^reins v\d+\.\d+\.\d+/)
  })
})

describe("what reins installs", () => {
  test("the lockfile has no redis (pulled by @effect/platform-node as a peer) and no @effect/platform-node", () => {
    const lock = fs.readFileSync(path.join(import.meta.dir, "..", "..", "..", "bun.lock"), "utf8")
    // package entries are `"name": ["name@version", …]`
    expect(lock).not.toMatch(/^\s*"(redis|@redis\/[\w-]+|@effect\/platform-node)": \[/m)
    const manifest = JSON.parse(fs.readFileSync(path.join(import.meta.dir, "..", "package.json"), "utf8"))
    expect(Object.keys(manifest.dependencies)).not.toContain("@effect/platform-node")
  })
})
