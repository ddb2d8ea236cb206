import { Effect } from "effect"
import * as os from "node:os"
import * as path from "node:path"
import { scanBash, type ScanRequest } from "./CommandScan.ts"
import { expandTilde, isInside, realLocation } from "./Paths.ts"
import { permissionFor } from "./Rules.ts"

/** A request without a session: what a tool call on a subject needs. */
export interface SubjectRequest {
  readonly permission: string
  readonly patterns: ReadonlyArray<string>
  readonly always: ReadonlyArray<string>
  readonly title?: string
  readonly opaque?: string
  readonly directory?: string
}

/**
 * The requests of a tool touching `target` (absolute): `external_directory` for its real directory
 * first when it lies outside the worktree (symlinks resolved on both sides), then the permission
 * on the path and, when a symlink leads elsewhere, on its real location.
 */
export const pathRequests = (
  worktree: string,
  permission: string,
  target: string,
  options: { readonly kind: "file" | "directory"; readonly always: ReadonlyArray<string>; readonly title?: string }
): Array<SubjectRequest> => {
  const requests: Array<SubjectRequest> = []
  const real = realLocation(target)
  if (!isInside(realLocation(worktree), real)) {
    const dir = options.kind === "file" ? path.dirname(real) : real
    const pattern = path.join(dir, "*")
    requests.push({ permission: "external_directory", patterns: [pattern], always: [pattern], title: `Access ${dir}, outside ${worktree}` })
  }
  // a link to `.env` is judged as `.env` too: the tools and `reins debug permission` alike
  const patterns = real === target ? [target] : [target, real]
  requests.push({ permission, patterns, always: options.always, ...(options.title ? { title: options.title } : {}) })
  return requests
}

const DIRECTORY_TOOLS = new Set(["list", "glob", "grep"])
const PATH_TOOLS = new Set(["read", "edit", "write", "apply_patch", "list", "glob", "grep"])

/**
 * What a call of `tool` on `subject` needs, as `reins debug permission` shows it: bash commands
 * are scanned, file tools get their path requests, any other tool its id with the subject.
 */
export const requestsFor = (
  tool: string,
  subject: string,
  options: { readonly cwd: string; readonly home?: string }
): Effect.Effect<ReadonlyArray<SubjectRequest | ScanRequest>> => {
  if (tool === "bash") return scanBash(subject, options)
  if (!PATH_TOOLS.has(tool)) return Effect.succeed([{ permission: tool, patterns: [subject], always: [subject] }])
  const target = path.resolve(options.cwd, expandTilde(subject, options.home ?? os.homedir()))
  const kind = DIRECTORY_TOOLS.has(tool) ? "directory" : "file"
  const always = [path.join(kind === "file" ? path.dirname(target) : target, "*")]
  const requests = pathRequests(options.cwd, permissionFor(tool), target, { kind, always })
  // the grep tool reads what it searches: the read rules apply to it as well
  if (tool === "grep") requests.push(...pathRequests(options.cwd, "read", target, { kind, always }).filter((r) => r.permission === "read"))
  return Effect.succeed(requests)
}
