import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import header from "./header.txt" with { type: "text" }

const INSTRUCTION_FILES = ["AGENTS.md", "CLAUDE.md", "CONTEXT.md"]

/** The worktree root: the nearest directory with `.git`, else the start directory. */
export const worktreeRoot = (start: string) => {
  let dir = path.resolve(start)
  while (true) {
    if (fs.existsSync(path.join(dir, ".git"))) return dir
    const parent = path.dirname(dir)
    if (parent === dir) return path.resolve(start)
    dir = parent
  }
}

/** Instruction files from cwd up to the worktree root; in each directory the first name that exists wins. */
export const findInstructions = (cwd: string, root: string = worktreeRoot(cwd)) => {
  const found: Array<string> = []
  let dir = path.resolve(cwd)
  while (true) {
    const name = INSTRUCTION_FILES.find((n) => fs.existsSync(path.join(dir, n)))
    if (name) found.push(path.join(dir, name))
    if (dir === root) break
    const parent = path.dirname(dir)
    if (parent === dir) break
    dir = parent
  }
  return found.reverse()
}

const gitStatus = (cwd: string) => {
  const out = Effect.runSync(
    Effect.try(() => execFileSync("git", ["status", "--short", "--branch"], { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"], timeout: 2_000 })).pipe(
      Effect.orElseSucceed(() => "")
    )
  )
  const lines = out.trimEnd().split("\n")
  return lines.length > 40 ? [...lines.slice(0, 40), `… ${lines.length - 40} more`].join("\n") : lines.join("\n")
}

/** The env block, rebuilt for every call: where, what platform, when, and git status. */
export const envBlock = (cwd: string, now: Date) => {
  const root = worktreeRoot(cwd)
  const status = fs.existsSync(path.join(root, ".git")) ? gitStatus(cwd) : ""
  return [
    "<env>",
    `Working directory: ${cwd}`,
    `Worktree root: ${root}`,
    `Platform: ${process.platform}`,
    `Date: ${now.toISOString().slice(0, 10)}`,
    status ? `Git status:\n${status}` : "Not a git repository",
    "</env>"
  ].join("\n")
}

/** System prompt in two parts (T10): a static header, then env and instructions. */
export const systemPrompt = (cwd: string, now: Date): ReadonlyArray<string> => {
  const instructions = findInstructions(cwd).map((file) => `Instructions from ${file}:\n${fs.readFileSync(file, "utf8")}`)
  return [header.trim(), [envBlock(cwd, now), ...instructions].join("\n\n")]
}
