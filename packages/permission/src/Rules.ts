import type { Action, PermissionConfig } from "@reins/domain"
import * as os from "node:os"
import { match } from "./Wildcard.ts"

/** One rule: for a permission (wildcard) and a subject pattern (wildcard), what to do. */
export interface Rule {
  readonly permission: string
  readonly pattern: string
  readonly action: Action
}

/** Defaults: everything allowed except loops, paths outside the worktree and `.env` reads. */
export const defaultRules: ReadonlyArray<Rule> = [
  { permission: "*", pattern: "*", action: "allow" },
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

/** Last matching rule wins; no match means ask. */
export const evaluate = (rules: ReadonlyArray<Rule>, permission: string, subject: string): { action: Action; rule?: Rule } => {
  for (let i = rules.length - 1; i >= 0; i--) {
    const rule = rules[i]!
    if (match(permission, rule.permission) && match(subject, rule.pattern)) return { action: rule.action, rule }
  }
  return { action: "ask" }
}

/** A tool whose only applicable rule denies everything is not offered to the model at all. */
export const isDisabled = (rules: ReadonlyArray<Rule>, tool: string): boolean => {
  const permission = permissionFor(tool)
  for (let i = rules.length - 1; i >= 0; i--) {
    const rule = rules[i]!
    if (!match(permission, rule.permission)) continue
    return rule.pattern === "*" && rule.action === "deny"
  }
  return false
}
