import type { AgentConfig } from "@reins/domain"

/** Shell commands that only read, for the read-only agents; anything with a redirection or `-exec`/`-delete` stays denied. */
const READ_ONLY_BASH: Record<string, "allow" | "deny"> = {
  "*": "deny",
  "ls*": "allow",
  pwd: "allow",
  "cat *": "allow",
  "head *": "allow",
  "tail *": "allow",
  "wc *": "allow",
  "grep *": "allow",
  "rg *": "allow",
  "find *": "allow",
  "tree*": "allow",
  "file *": "allow",
  "git status*": "allow",
  "git diff*": "allow",
  "git log*": "allow",
  "git show*": "allow",
  "git blame*": "allow",
  "*>*": "deny",
  "*-delete*": "deny",
  "*-exec*": "deny",
  "*-ok *": "deny",
  "*--output*": "deny"
}

/** Read-only: no edits (edit, write, apply_patch share the `edit` permission), bash only for commands that read. */
const READ_ONLY = { edit: "deny", bash: READ_ONLY_BASH } as const

const PLAN_NOTE =
  "You are in plan mode: read-only. Do not edit files or run commands that change anything (edits and writing commands are denied). " +
  "Investigate, then answer with a plan the user can approve."
const EXPLORE_NOTE =
  "You are a fast, read-only search agent. Find files and code with glob, grep, list and read; answer with the paths and lines that matter, briefly. You cannot change anything."
const GENERAL_NOTE =
  "You are a sub-agent given one task by another agent. Do the task, then answer with what you found or did, completely and concisely: your last message is all the other agent sees."

/** A built-in agent: its config, and a note appended to the system prompt. */
export interface BuiltinAgent {
  readonly config: AgentConfig
  readonly note?: string
}

/** `build` (the default), `plan` (read-only) and the sub-agents `general` and `explore`. */
export const builtinAgents: Readonly<Record<string, BuiltinAgent>> = {
  build: { config: { description: "The default agent: reads, edits and runs commands as the permission rules allow.", mode: "primary" } },
  plan: {
    config: { description: "Read-only: looks and plans; edits and writing commands are denied.", mode: "primary", permission: READ_ONLY },
    note: PLAN_NOTE
  },
  general: {
    config: { description: "General-purpose agent for research and multi-step tasks; can run several units of work in parallel.", mode: "subagent" },
    note: GENERAL_NOTE
  },
  explore: {
    config: {
      description: "Fast read-only search of the codebase: finds files by pattern, searches code for keywords, answers questions about it.",
      mode: "subagent",
      tools: { edit: false, write: false, apply_patch: false, task: false },
      permission: READ_ONLY
    },
    note: EXPLORE_NOTE
  }
}
