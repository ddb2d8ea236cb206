import type { Action, PermissionConfig } from "@reins/domain"
import * as os from "node:os"
import { match } from "./Wildcard.ts"

/** One rule: for a permission (wildcard) and a subject pattern (wildcard), what to do. */
export interface Rule {
  readonly permission: string
  readonly pattern: string
  readonly action: Action
}

/**
 * Defaults: everything allowed except loops, paths outside the worktree, `.env` reads, fetching a URL
 * (`webfetch`: the network, as lifting the sandbox for it is) and lifting the OS sandbox for a command
 * (`sandbox`: `network <host>`, `write <dir>`).
 */
export const defaultRules: ReadonlyArray<Rule> = [
  { permission: "*", pattern: "*", action: "allow" },
  { permission: "sandbox", pattern: "*", action: "ask" },
  { permission: "webfetch", pattern: "*", action: "ask" },
  { permission: "doom_loop", pattern: "*", action: "ask" },
  { permission: "external_directory", pattern: "*", action: "ask" },
  { permission: "read", pattern: "*.env", action: "ask" },
  { permission: "read", pattern: "*.env.*", action: "ask" },
  { permission: "read", pattern: "*.env.example", action: "allow" }
]

const expandHome = (pattern: string, home: string) => {
  if (pattern === "~") return home
  if (pattern.startsWith("~/")) return home + pattern.slice(1)
  return pattern.replaceAll("$HOME", home)
}

/** Turns the `permission` config into rules, keeping the order written. */
export const fromConfig = (config: PermissionConfig | undefined, home: string = os.homedir()): Array<Rule> => {
  if (config === undefined) return []
  if (typeof config === "string") return [{ permission: "*", pattern: "*", action: config }]
  const rules: Array<Rule> = []
  for (const [permission, value] of Object.entries(config)) {
    if (typeof value === "string") {
      rules.push({ permission, pattern: "*", action: value })
      continue
    }
    for (const [pattern, action] of Object.entries(value)) {
      rules.push({ permission, pattern: expandHome(pattern, home), action })
    }
  }
  return rules
}

/** Which tools share a permission: write and edit are both `edit`. */
export const permissionFor = (tool: string) => (tool === "write" || tool === "edit" || tool === "apply_patch" ? "edit" : tool)

/**
 * How rules combine: `last-match` (the last matching rule wins) or `deny-wins` (any matching deny
 * wins over every allow and ask, wherever it is written).
 */
export type Mode = "last-match" | "deny-wins"

/** The result of evaluating one subject: the action and the rule that decided it (none: ask). */
export interface Decision {
  readonly action: Action
  readonly rule?: Rule
}

/**
 * Permissions that only a rule naming them allows: lifting the OS sandbox for a command is allowed
 * by a `sandbox` rule, not by `"permission": "allow"` (which allows tools); a wildcard still denies or asks.
 */
const NAMED_ONLY = new Set(["sandbox"])

const reaches = (rule: Rule, permission: string) =>
  NAMED_ONLY.has(permission) && rule.action === "allow" ? rule.permission === permission : match(permission, rule.permission)

/** Last matching rule wins (or any deny, in deny-wins mode); no match means ask. */
export const evaluate = (rules: ReadonlyArray<Rule>, permission: string, subject: string, mode: Mode = "last-match"): Decision => {
  let last: Rule | undefined
  for (let i = rules.length - 1; i >= 0; i--) {
    const rule = rules[i]!
    if (!reaches(rule, permission) || !match(subject, rule.pattern)) continue
    if (mode === "last-match") return { action: rule.action, rule }
    if (rule.action === "deny") return { action: "deny", rule }
    last ??= rule
  }
  return last ? { action: last.action, rule: last } : { action: "ask" }
}

/** A rule that matches anything (`*`, `**`): too broad to allow a command that cannot be read. */
export const isBroad = (rule: Rule) => /^\**$/.test(rule.pattern)

/**
 * T18: a subject whose real meaning is hidden (eval, a computed command name, code piped into a
 * shell) is never allowed by a broad rule; only a rule that names it, or a person, allows it.
 */
export const evaluateOpaque = (rules: ReadonlyArray<Rule>, permission: string, subject: string, mode: Mode = "last-match"): Decision => {
  const decision = evaluate(rules, permission, subject, mode)
  return decision.action === "allow" && (!decision.rule || isBroad(decision.rule))
    ? { action: "ask", ...(decision.rule ? { rule: decision.rule } : {}) }
    : decision
}

/** A tool whose rules deny everything (`* deny` deciding) is not offered to the model at all. */
export const isDisabled = (rules: ReadonlyArray<Rule>, tool: string, mode: Mode = "last-match"): boolean => {
  const permission = permissionFor(tool)
  for (let i = rules.length - 1; i >= 0; i--) {
    const rule = rules[i]!
    if (!match(permission, rule.permission)) continue
    const denyAll = isBroad(rule) && rule.action === "deny"
    if (mode === "deny-wins") {
      if (denyAll) return true
      continue
    }
    return denyAll
  }
  return false
}
