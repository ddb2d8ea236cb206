// The git branch shown in the footer: read once, asynchronously, and never waited on.
import { spawn } from "node:child_process"

/** What a git command printed, or undefined when it failed or took over 2 s. */
const git = (cwd: string, args: ReadonlyArray<string>) =>
  new Promise<string | undefined>((resolve) => {
    const child = spawn("git", args, { cwd, stdio: ["ignore", "pipe", "ignore"] })
    let out = ""
    const timer = setTimeout(() => child.kill("SIGKILL"), 2000)
    child.stdout.on("data", (b: Buffer) => (out += b.toString()))
    child.on("error", () => resolve(undefined))
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve(code === 0 && out.trim() !== "" ? out.trim() : undefined)
    })
  })

/** The current branch (also of a repository with no commit yet), or the short commit when detached; undefined outside a repository. */
export const gitBranch = async (cwd: string): Promise<string | undefined> => {
  const branch = await git(cwd, ["symbolic-ref", "--short", "-q", "HEAD"])
  if (branch) return branch
  const sha = await git(cwd, ["rev-parse", "--short", "HEAD"])
  return sha ? `(${sha})` : undefined
}
