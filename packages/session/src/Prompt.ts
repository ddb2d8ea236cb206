import { Effect } from "effect"
import { liesWithin, realPath, safeGit } from "@reins/domain"
import type { Permission } from "@reins/permission"
import * as fs from "node:fs"
import * as path from "node:path"
import { familyHeader } from "./PromptFamily.ts"

const INSTRUCTION_FILES = ["AGENTS.md", "CLAUDE.md", "CONTEXT.md"]

/** How long the env block waits for `git status` before it leaves the status out. */
export const GIT_STATUS_TIMEOUT_MS = 2_000

const exists = (file: string) =>
  Effect.promise(() =>
    fs.promises.access(file).then(
      () => true,
      () => false
    )
  )

/** The worktree root: the nearest directory with `.git`, else the start directory. */
export const worktreeRoot = Effect.fnUntraced(function* (start: string) {
  let dir = path.resolve(start)
  while (true) {
    if (yield* exists(path.join(dir, ".git"))) return dir
    const parent = path.dirname(dir)
    if (parent === dir) return path.resolve(start)
    dir = parent
  }
})

/** Instruction files from cwd up to the worktree root; in each directory the first name that exists wins. */
export const findInstructions = Effect.fnUntraced(function* (cwd: string, root?: string) {
  const top = root ?? (yield* worktreeRoot(cwd))
  const found: Array<string> = []
  let dir = path.resolve(cwd)
  while (true) {
    for (const name of INSTRUCTION_FILES) {
      if (!(yield* exists(path.join(dir, name)))) continue
      found.push(path.join(dir, name))
      break
    }
    if (dir === top) break
    const parent = path.dirname(dir)
    if (parent === dir) break
    dir = parent
  }
  return found.reverse()
})

/**
 * `git status --short --branch` as a child process with the repository's power to run programs
 * switched off (`safeGit`): never blocks the loop, is killed when the turn is interrupted, and gives
 * up (an empty status) after `timeoutMs` or on any failure.
 */
export const gitStatus = (cwd: string, timeoutMs = GIT_STATUS_TIMEOUT_MS): Effect.Effect<string> =>
  safeGit(cwd, ["status", "--short", "--branch", "--ignore-submodules=all"], { timeoutMs }).pipe(
    Effect.map((out) => {
      const lines = (out ?? "").trimEnd().split("\n")
      return lines.length > 40 ? [...lines.slice(0, 40), `… ${lines.length - 40} more`].join("\n") : lines.join("\n")
    })
  )

/**
 * Whether an instruction file that links out of the project (`AGENTS.md` → `/proc/self/environ`)
 * goes into the prompt: the user's to allow, as `external_directory` for where it leads (without a
 * person: refused, with a warning naming the file).
 */
export const admitOutside = (permission: Permission["Service"], sessionID: string) => (file: string, real: string) =>
  permission
    .ask({
      sessionID,
      permission: "external_directory",
      patterns: [path.join(path.dirname(real), "*")],
      always: [path.join(path.dirname(real), "*")],
      title: `Read ${file} into the prompt: it links to ${real}, outside the project`
    })
    .pipe(
      Effect.as(true),
      Effect.catch((e) => Effect.as(Effect.logWarning(`${file} was not read into the prompt: it links to ${real}, outside the project. ${e.message}`), false))
    )

/** The env block, rebuilt for every call: where, what platform, when, and git status (`alongside` runs while git does). */
export const envBlock = Effect.fnUntraced(function* (cwd: string, now: Date, alongside: Effect.Effect<void> = Effect.void) {
  const root = yield* worktreeRoot(cwd)
  const [status] = yield* Effect.all([(yield* exists(path.join(root, ".git"))) ? gitStatus(cwd) : Effect.succeed(""), alongside], { concurrency: 2 })
  return [
    "<env>",
    `Working directory: ${cwd}`,
    `Worktree root: ${root}`,
    `Platform: ${process.platform}`,
    `Date: ${now.toISOString().slice(0, 10)}`,
    status ? `Git status:\n${status}` : "Not a git repository",
    "</env>"
  ].join("\n")
})

/**
 * System prompt in two parts (T10): a static header (the model family's, T27, or the configured
 * one: `headerFor`), then env, instructions and the `extra` blocks (the skills list).
 */
export const systemPrompt = Effect.fnUntraced(function* (
  cwd: string,
  now: Date,
  header: string = familyHeader("default"),
  extra: ReadonlyArray<string> = [],
  // an instruction file that links out of the project (AGENTS.md → /proc/self/environ) is read only if this says so
  admit: (file: string, real: string) => Effect.Effect<boolean> = () => Effect.succeed(false),
  // work for the main thread while git status runs in its child process
  alongside: Effect.Effect<void> = Effect.void
) {
  const root = yield* worktreeRoot(cwd)
  const files = yield* findInstructions(cwd, root)
  const instructions = yield* Effect.forEach(files, (file) =>
    Effect.gen(function* () {
      if (!liesWithin(file, [root]) && !(yield* admit(file, realPath(file)))) return undefined
      return yield* Effect.promise(() =>
        fs.promises.readFile(file, "utf8").then(
          (text) => `Instructions from ${file}:\n${text}`,
          () => undefined
        )
      )
    })
  )
  const env = yield* envBlock(cwd, now, alongside)
  return [header, [env, ...instructions.filter((i) => i !== undefined), ...extra].join("\n\n")] as ReadonlyArray<string>
})
