// What the scan's hole tables share: a project in a temp dir, the rules `* allow, rm * deny` (and
// what else a table needs), the scan of a command there and its verdict.
import { afterAll } from "bun:test"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { scanBash } from "../src/BashScan.ts"
import { check } from "../src/Permission.ts"
import { defaultRules, fromConfig, type Rule } from "../src/Rules.ts"

/** A project (`wt`, with `src/`) and a home in a fresh temp dir, removed after the file's tests; the scan and verdicts there. */
export const holesProject = (prefix: string, bash: Record<string, "allow" | "ask" | "deny"> = { "*": "allow", "rm *": "deny" }) => {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)))
  const wt = path.join(root, "wt")
  const home = path.join(root, "home")
  fs.mkdirSync(path.join(wt, "src"), { recursive: true })
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }))
  const rules: ReadonlyArray<Rule> = [...defaultRules, ...fromConfig({ bash }, home)]
  const scan = (command: string) => Effect.runPromise(scanBash(command, { cwd: wt, worktree: wt, home }))
  const judge = async (command: string) => {
    const requests = await scan(command)
    const actions = requests.map((r) => check(rules, r).action)
    return { requests, verdict: actions.includes("deny") ? "deny" : actions.includes("ask") ? "ask" : "allow" }
  }
  return { root, wt, home, rules, scan, judge }
}
