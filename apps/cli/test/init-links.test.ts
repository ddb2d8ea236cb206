// A cloned repository's reins.json may be a symlink to a file outside the project (a dangling one "does not exist"):
// reins init never writes through it, with or without --force; the file it points to is untouched or never created.
// An ordinary reins.json is still written, and kept without --force.
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ensureBuilt, projects, reins } from "./support.ts"

setDefaultTimeout(60_000)
beforeAll(() => ensureBuilt())
const project = projects()

describe("reins init and a symlinked reins.json", () => {
  const cases: ReadonlyArray<{ readonly name: string; readonly target: "existing" | "dangling"; readonly args: ReadonlyArray<string> }> = [
    { name: "a dangling link to a file outside", target: "dangling", args: [] },
    { name: "a dangling link, --force", target: "dangling", args: ["--force"] },
    { name: "a link to an existing file outside, --force", target: "existing", args: ["--force"] }
  ]
  for (const c of cases) {
    test(c.name, async () => {
      const p = await project([{ text: "never asked" }])
      const outside = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "reins-outside-")), "authorized_keys")
      if (c.target === "existing") fs.writeFileSync(outside, "ssh-ed25519 AAAA user@host\n")
      fs.symlinkSync(outside, path.join(p.cwd, "reins.json"))
      const r = await reins(["init", ...c.args], p)
      expect(r.code).toBe(2)
      expect(r.stderr).toContain(`${path.join(p.cwd, "reins.json")} is a symbolic link (to ${outside}): reins init does not write through it`)
      if (c.target === "existing") expect(fs.readFileSync(outside, "utf8")).toBe("ssh-ed25519 AAAA user@host\n")
      else expect(fs.existsSync(outside)).toBe(false)
      expect(p.server.requests).toHaveLength(0)
    })
  }
  test("a link to an existing file without --force is skipped, as a file is", async () => {
    const p = await project([{ text: "no AGENTS.md" }])
    const outside = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "reins-outside-")), "reins.json")
    fs.writeFileSync(outside, "{}\n")
    fs.symlinkSync(outside, path.join(p.cwd, "reins.json"))
    fs.writeFileSync(path.join(p.cwd, "AGENTS.md"), "# mine\n")
    const r = await reins(["init"], p)
    expect(r.code).toBe(0)
    expect(r.stderr).toContain("Skipped reins.json: it exists")
    expect(fs.readFileSync(outside, "utf8")).toBe("{}\n")
  })
  test("an ordinary reins.json is kept without --force", async () => {
    const p = await project([{ text: "no AGENTS.md" }])
    fs.writeFileSync(path.join(p.cwd, "reins.json"), '{"model": "x/y"}\n')
    fs.writeFileSync(path.join(p.cwd, "AGENTS.md"), "# mine\n")
    const r = await reins(["init"], p)
    expect(r.code).toBe(0)
    expect(fs.readFileSync(path.join(p.cwd, "reins.json"), "utf8")).toBe('{"model": "x/y"}\n')
  })
})
