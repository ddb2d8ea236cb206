// The git commands reins runs on its own (the status in the prompt's env block, the branch in the
// terminal UI) run in repositories the user may have just cloned. A repository's own config can make
// git run programs: core.fsmonitor on every status, hooks (post-index-change when status refreshes
// the index), a filter driver's clean/smudge/process command for a file .gitattributes names,
// submodules with configs of their own, a pager. These calls switch all of that off and run git with
// a clean environment, so reading a repository never runs its code.
import { Effect } from "effect"
import { spawn } from "node:child_process"

/** Switches that no repository config can turn back on, given before the subcommand. */
const FIXED = [
  "--no-pager",
  // status does not write the index (which runs post-index-change) or take its lock
  "--no-optional-locks",
  "-c",
  "core.fsmonitor=false",
  "-c",
  "core.hooksPath=/dev/null",
  "-c",
  "core.untrackedCache=false",
  "-c",
  "core.pager=cat",
  "-c",
  "protocol.allow=never"
]

/** The environment git gets: enough to find itself and the user's identity, nothing that redirects it (GIT_DIR, GIT_CONFIG_*, GIT_EXEC_PATH …). */
export const gitEnvironment = (env: Readonly<Record<string, string | undefined>>): Record<string, string> => {
  const out: Record<string, string> = { GIT_TERMINAL_PROMPT: "0", GIT_OPTIONAL_LOCKS: "0", LC_ALL: "C" }
  for (const key of ["PATH", "HOME", "XDG_CONFIG_HOME", "TMPDIR"]) {
    const value = env[key]
    if (value !== undefined) out[key] = value
  }
  return out
}

/** Runs git to completion: its stdout, or undefined when it failed or could not start; interrupted, it is killed. */
const run = (cwd: string, args: ReadonlyArray<string>, env: Record<string, string>): Effect.Effect<string | undefined> =>
  Effect.callback<string | undefined>((resume) => {
    const child = spawn("git", args, { cwd, env, stdio: ["ignore", "pipe", "ignore"] })
    const chunks: Array<Buffer> = []
    child.stdout.on("data", (b: Buffer) => chunks.push(b))
    child.on("error", () => resume(Effect.succeed(undefined)))
    child.on("close", (code) => resume(Effect.succeed(code === 0 ? Buffer.concat(chunks).toString("utf8") : undefined)))
    // on interrupt (or the timeout) the child is killed and waited for, so none outlives the call
    return Effect.callback<void>((done) => {
      if (child.exitCode !== null || child.signalCode !== null) return done(Effect.void)
      child.once("close", () => done(Effect.void))
      child.kill("SIGKILL")
    }).pipe(Effect.timeoutOrElse({ duration: 1_000, orElse: () => Effect.void }))
  })

/** `-c filter.<name>.<command>=` for every filter driver the repository's config names (reading config runs nothing). */
export const filterOverrides = (configList: string): Array<string> => {
  const names = new Set<string>()
  for (const entry of configList.split("\0")) {
    const key = entry.slice(0, entry.includes("\n") ? entry.indexOf("\n") : entry.length)
    const match = /^filter\.(.+)\.(clean|smudge|process|required)$/i.exec(key)
    if (match) names.add(match[1]!)
  }
  return [...names].flatMap((name) => [
    "-c",
    `filter.${name}.clean=`,
    "-c",
    `filter.${name}.smudge=`,
    "-c",
    `filter.${name}.process=`,
    "-c",
    `filter.${name}.required=false`
  ])
}

/**
 * Runs `git <args>` in `cwd` with the repository's power to run programs switched off (see above):
 * its stdout, or undefined on any failure or after `timeoutMs`.
 */
export const safeGit = (
  cwd: string,
  args: ReadonlyArray<string>,
  options: { readonly env?: Readonly<Record<string, string | undefined>>; readonly timeoutMs: number }
) =>
  Effect.gen(function* () {
    // PATH and HOME of the process by default: what a plain spawn would have passed, and no more
    const env = gitEnvironment(options.env ?? process.env)
    const config = yield* run(cwd, [...FIXED, "config", "-z", "--list", "--includes"], env)
    return yield* run(cwd, [...FIXED, ...filterOverrides(config ?? ""), ...args], env)
  }).pipe(Effect.timeoutOrElse({ duration: options.timeoutMs, orElse: () => Effect.succeed(undefined) }))
