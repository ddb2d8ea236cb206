// The macOS policy as text (this machine is Linux): every part of the profile has its rule, paths
// are quoted so a name cannot end the string, the network rule follows the profile. On macOS the
// same policy runs real commands (the describe below).
import { describe, expect, test } from "bun:test"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { Profile } from "../src/Profile.ts"
import { SANDBOX_EXEC, seatbeltArgs, seatbeltPolicy } from "../src/Seatbelt.ts"

const profile: Profile = {
  mode: "auto",
  network: "none",
  writable: ["/Users/me/project", "/private/tmp"],
  readOnly: ["/Users/me/project/.git/hooks", "/Users/me/project/.git/config", "/Users/me/project/reins.json"],
  denyRead: ["/Users/me/.ssh", "/Users/me/Library/Keychains"],
  allow: [],
  envPass: []
}

describe("the Seatbelt policy", () => {
  test("writes only in the writable places (and the terminal, /dev/null), never in their code paths", () => {
    const policy = seatbeltPolicy(profile)
    expect(policy.startsWith("(version 1)\n(allow default)\n")).toBe(true)
    expect(policy).toContain('(deny file-write* (require-not (require-any (subpath "/Users/me/project") (subpath "/private/tmp") (literal "/dev/null")')
    expect(policy).toContain(
      '(deny file-write* (subpath "/Users/me/project/.git/hooks") (subpath "/Users/me/project/.git/config") (subpath "/Users/me/project/reins.json"))'
    )
  })

  test("the hidden places are neither read nor written; the denies come after the allow (later rules win)", () => {
    const policy = seatbeltPolicy(profile)
    const deny = policy.indexOf('(deny file-read* file-write* (subpath "/Users/me/.ssh") (subpath "/Users/me/Library/Keychains"))')
    expect(deny).toBeGreaterThan(policy.indexOf("(allow default)"))
  })

  test("no network is no sockets (allow mode too: no proxy on macOS yet); network all has no network rule", () => {
    expect(seatbeltPolicy(profile)).toContain("(deny network*)")
    expect(seatbeltPolicy({ ...profile, network: "allow", allow: ["registry.npmjs.org"] })).toContain("(deny network*)")
    expect(seatbeltPolicy({ ...profile, network: "all" })).not.toContain("network")
  })

  test("a path with quotes or backslashes cannot end the string", () => {
    const policy = seatbeltPolicy({ ...profile, writable: ['/Users/me/a"b) (allow file-write* (subpath "/'], denyRead: ["/x\\y"] })
    expect(policy).toContain('(subpath "/Users/me/a\\"b) (allow file-write* (subpath \\"/")')
    expect(policy).toContain('(subpath "/x\\\\y")')
    expect(policy).not.toContain('(allow file-write* (subpath "/")')
  })

  test("sandbox-exec is /usr/bin's, the policy given inline", () => {
    expect(SANDBOX_EXEC).toBe("/usr/bin/sandbox-exec")
    expect(seatbeltArgs(profile)).toEqual(["-p", seatbeltPolicy(profile)])
  })
})

describe.skipIf(process.platform !== "darwin")("the Seatbelt policy on macOS", () => {
  test("writes in the project work, outside and in the code paths are refused, secrets unreadable", () => {
    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-seatbelt-")))
    const project = path.join(root, "project")
    const secret = path.join(root, "secret")
    fs.mkdirSync(path.join(project, ".git", "hooks"), { recursive: true })
    fs.mkdirSync(secret)
    fs.writeFileSync(path.join(secret, "key"), "KEY")
    const p: Profile = { ...profile, writable: [project], readOnly: [path.join(project, ".git", "hooks")], denyRead: [secret] }
    const run = (script: string) => spawnSync(SANDBOX_EXEC, [...seatbeltArgs(p), "/bin/sh", "-c", script], { cwd: project, encoding: "utf8" })
    expect(run("echo ok > made.txt").status).toBe(0)
    expect(run(`echo no > ${root}/outside.txt`).status).not.toBe(0)
    expect(run("echo no > .git/hooks/pre-commit").status).not.toBe(0)
    expect(run(`cat ${secret}/key`).stdout).not.toContain("KEY")
    fs.rmSync(root, { recursive: true, force: true })
  })
})
