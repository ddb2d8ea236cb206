// The paths whose editing could make reins or git run code, or widen the agent's own powers: reins's
// configuration (the project's and the user's), the project's `.reins/` extensions, git's hooks and
// config, and the instruction files every prompt carries. An edit of one always asks — whatever an
// `edit` rule allows — and `--yolo` denies it (issue 24, item 3).
import { projectRoot, realPath as real } from "@reins/domain"
import type { Protected } from "@reins/permission"
import * as path from "node:path"

/** Every directory from `dir` up to the root. */
const upwards = (dir: string) => {
  const out: Array<string> = []
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    out.push(d)
    if (path.dirname(d) === d) return out
  }
}

/** The protected paths for a project in `cwd` and a user with this home and config directory. */
export const protectedPaths = (options: {
  readonly cwd: string
  readonly home: string
  readonly configDir: string
  readonly configFile?: string
}): Array<Protected> => {
  const root = projectRoot(options.cwd)
  const roots = [...new Set([root, real(root), options.cwd, real(options.cwd)])]
  const config = "reins's configuration: it can run commands and loosen permission rules"
  const out: Array<Protected> = []
  // the config files reins reads from here (this directory and every one above it), and those of every directory below the project's root
  for (const dir of upwards(options.cwd)) for (const name of ["reins.json", "reins.jsonc"]) out.push({ pattern: path.join(dir, name), why: config })
  for (const r of roots) {
    for (const name of ["reins.json", "reins.jsonc"]) out.push({ pattern: path.join(r, "*", name), why: config })
    for (const pattern of [path.join(r, ".reins"), path.join(r, ".reins", "*"), path.join(r, "*", ".reins", "*")]) {
      out.push({ pattern, why: "the project's reins extensions: plugins, tools and agents that reins loads and runs" })
    }
    for (const pattern of [
      path.join(r, ".git", "hooks"),
      path.join(r, ".git", "hooks", "*"),
      path.join(r, ".git", "config"),
      path.join(r, ".git", "config.worktree"),
      // submodules' and worktrees' own hooks and config
      path.join(r, ".git", "modules", "*", "hooks", "*"),
      path.join(r, ".git", "modules", "*", "config"),
      path.join(r, ".git", "worktrees", "*", "config.worktree"),
      // a repository nested in the project: `git status` here recurses into it once the project links it
      path.join(r, "*", ".git", "hooks", "*"),
      path.join(r, "*", ".git", "config"),
      path.join(r, "*", ".git", "config.worktree")
    ]) {
      out.push({ pattern, why: "git's hooks and config: git runs the commands they name" })
    }
    for (const name of ["AGENTS.md", "CLAUDE.md", "CONTEXT.md"]) {
      for (const pattern of [path.join(r, name), path.join(r, "*", name)]) out.push({ pattern, why: "instructions every session's prompt carries" })
    }
    out.push({ pattern: path.join(r, ".claude", "skills", "*"), why: "skills every session here loads" })
  }
  // the XDG config dir, and ~/.config/reins where plugins, tools and skills are also looked for
  const configDirs = [options.configDir, path.join(options.home, ".config", "reins")]
  for (const dir of [...new Set([...configDirs, ...configDirs.map(real)])]) {
    out.push({ pattern: dir, why: "your own reins configuration" }, { pattern: path.join(dir, "*"), why: "your own reins configuration" })
  }
  if (options.configFile !== undefined) out.push({ pattern: options.configFile, why: "your own reins configuration (--config / REINS_CONFIG)" })
  for (const pattern of [
    path.join(options.home, ".claude", "skills", "*"),
    path.join(options.home, ".gitconfig"),
    path.join(options.home, ".config", "git", "*")
  ]) {
    out.push({ pattern, why: pattern.includes("skills") ? "skills every session loads" : "git's global config: git runs the commands it names" })
  }
  return out
}
