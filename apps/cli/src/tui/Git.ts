// The git branch shown in the footer: read once, asynchronously, and never waited on; through
// safeGit, so a cloned repository's config runs nothing.
import { Effect } from "effect"
import { safeGit } from "@reins/domain"

/** What a git command printed, or undefined when it failed or took over 2 s. */
const git = (cwd: string, args: ReadonlyArray<string>) =>
  Effect.runPromise(safeGit(cwd, args, { timeoutMs: 2_000 }).pipe(Effect.map((out) => (out?.trim() ? out.trim() : undefined))))

/** The current branch (also of a repository with no commit yet), or the short commit when detached; undefined outside a repository. */
export const gitBranch = async (cwd: string): Promise<string | undefined> => {
  const branch = await git(cwd, ["symbolic-ref", "--short", "-q", "HEAD"])
  if (branch) return branch
  const sha = await git(cwd, ["rev-parse", "--short", "HEAD"])
  return sha ? `(${sha})` : undefined
}
