// The places the OS sandbox needs for a project: the directory reins runs in (writable), its
// repository (whose .git a commit from a subdirectory writes), and the files the `read` rules deny
// (`"*.env": "deny"`), hidden from commands as they are from the read tool.
import { projectRoot } from "@reins/domain"
import { check, isGitCodeKey, type Rule } from "@reins/permission"
import { Sandbox, type SandboxConfig } from "@reins/sandbox"
import * as fs from "node:fs"
import * as path from "node:path"

/** Folders never walked for read-denied files: dependencies and VCS data (large, and not the project's secrets). */
const SKIPPED = new Set([".git", "node_modules", ".venv", "venv", "target", "dist", "build", ".next", ".cache"])
/** The walk stops after this many entries: a huge tree is not scanned whole at every start. */
export const READ_DENY_WALK_LIMIT = 20_000

/** The files under `root` that the `read` rules deny (what the walk reaches within its limit). */
export const readDeniedFiles = (root: string, rules: ReadonlyArray<Rule>): Array<string> => {
  if (!rules.some((r) => r.permission === "read" && r.action === "deny")) return []
  const out: Array<string> = []
  let seen = 0
  const walk = (dir: string) => {
    let entries: Array<fs.Dirent> = []
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true })
    } catch {
      return
    }
    for (const e of entries) {
      if (++seen > READ_DENY_WALK_LIMIT) return
      const file = path.join(dir, e.name)
      if (e.isDirectory()) {
        if (!SKIPPED.has(e.name)) walk(file)
      } else if (check(rules, { permission: "read", patterns: [file] }).action === "deny") out.push(file)
    }
  }
  walk(root)
  return out
}

/** The Sandbox layer for a runtime in `cwd`. */
export const sandboxLayer = (options: {
  readonly cwd: string
  readonly home: string
  readonly dataDir: string
  readonly config: SandboxConfig | undefined
  readonly rules: ReadonlyArray<Rule>
  readonly env: Readonly<Record<string, string | undefined>>
}) => {
  const repository = projectRoot(options.cwd)
  // the walk for read-denied files waits for the profile, made at the first sandboxed command: a run that starts
  // none (a text answer) never walks the tree
  let denied: ReadonlyArray<string> | undefined
  return Sandbox.layer({
    env: options.env,
    config: options.config,
    // what a repository a command makes may not keep: the scan's table of git keys that name a command
    gitCodeKey: isGitCodeKey,
    places: {
      project: options.cwd,
      // from a subdirectory, the repository's .git is writable too (a commit writes there), its hooks and config not
      ...(repository !== options.cwd ? { repository } : {}),
      home: options.home,
      dataDir: options.dataDir,
      get denyRead() {
        denied ??= readDeniedFiles(options.cwd, options.rules)
        return denied
      },
      runtimeDir: options.env.XDG_RUNTIME_DIR || (process.getuid ? `/run/user/${process.getuid()}` : undefined)
    }
  })
}
