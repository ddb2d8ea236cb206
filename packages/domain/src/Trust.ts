// A repository is not the user. What a project's configuration could run (hooks, MCP servers,
// plugin and tool files, agents, skills with scripts), redirect (a provider's endpoint, which would
// receive the user's key) or loosen (allow rules, agent permissions) is inert until the user trusts
// the directory. This module says what that is — the items the trust question shows — and what of a
// project's config applies without trust: data (model, limits, output settings) and rules that only
// tighten. The digest of the items keys the trust: a change to what would run asks again.
import * as fs from "node:fs"
import * as path from "node:path"
import type { AgentsConfig, Config, PermissionConfig } from "./Config.ts"
import { BUILTIN_LANGUAGE_SERVERS, type LspConfig, type LspServerConfig } from "./LspConfig.ts"

/** One thing a project's configuration would run, redirect or loosen once the directory is trusted. */
export interface TrustItem {
  readonly kind: "hook" | "mcp" | "provider" | "plugin" | "tool" | "agent" | "command" | "skill" | "prompt" | "permission" | "sandbox" | "cluster" | "lsp"
  /** Where in the config or the project it is: `hooks.tool.before[0]`, `.reins/plugins/x.ts`. */
  readonly name: string
  /** What it would do: the command, the URL, the rule. */
  readonly detail: string
  /** For a file: the sha-256 of its contents (a changed file changes the digest). */
  readonly hash?: string
}

/** The project's configuration split by trust. */
export interface ProjectSplit {
  /** What applies without trust: the project's data settings. */
  readonly inert: Config
  /** The project's ask and deny rules: they tighten the user's rules (never loosen them) without trust. */
  readonly tighten: PermissionConfig | undefined
  /** What trust would switch on. */
  readonly items: ReadonlyArray<TrustItem>
}

/** The folder of a project's own extensions (plugins, tools, agents, skills). */
export const PROJECT_DIR = ".reins"

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)

/** `bash "rm *": allow` — a rule as the trust question shows it. */
const ruleText = (permission: string, pattern: string | undefined, action: string) =>
  pattern === undefined ? `${permission}: ${action}` : `${permission} ${JSON.stringify(pattern)}: ${action}`

/** The ask/deny part of a permission config (what tightens), and its allows as items. */
const splitPermission = (config: PermissionConfig | undefined, where: string) => {
  const items: Array<TrustItem> = []
  if (config === undefined) return { tighten: undefined, items }
  if (typeof config === "string") {
    if (config === "allow") items.push({ kind: "permission", name: where, detail: ruleText("*", undefined, "allow") })
    return { tighten: config === "allow" ? undefined : config, items }
  }
  const tighten: Record<string, string | Record<string, string>> = {}
  for (const [permission, value] of Object.entries(config)) {
    if (typeof value === "string") {
      if (value === "allow") items.push({ kind: "permission", name: `${where}.${permission}`, detail: ruleText(permission, undefined, "allow") })
      else tighten[permission] = value
      continue
    }
    const kept: Record<string, string> = {}
    for (const [pattern, action] of Object.entries(value)) {
      if (action === "allow") items.push({ kind: "permission", name: `${where}.${permission}`, detail: ruleText(permission, pattern, "allow") })
      else kept[pattern] = action
    }
    if (Object.keys(kept).length > 0) tighten[permission] = kept
  }
  return { tighten: Object.keys(tighten).length > 0 ? (tighten as PermissionConfig) : undefined, items }
}

/**
 * A project's language servers: a command would run a program, and a server of its own is all command, so both need
 * trust; switching servers off, the timeouts and more extensions for a built-in server are data.
 */
const splitLsp = (lsp: LspConfig | undefined): { readonly inert: LspConfig | undefined; readonly items: ReadonlyArray<TrustItem> } => {
  if (lsp === undefined || lsp === false) return { inert: lsp, items: [] }
  const items: Array<TrustItem> = []
  const inert: Record<string, LspServerConfig> = {}
  for (const [id, server] of Object.entries(lsp)) {
    const builtin = (BUILTIN_LANGUAGE_SERVERS as ReadonlyArray<string>).includes(id)
    if (server.command !== undefined && server.disabled !== true) items.push({ kind: "lsp", name: `lsp.${id}.command`, detail: server.command.join(" ") })
    const { command: _, ...data } = server
    if (builtin || server.disabled === true) inert[id] = server.disabled === true ? { disabled: true } : data
  }
  return { inert: Object.keys(inert).length > 0 ? inert : undefined, items }
}

/**
 * Splits a project's merged configuration: data that applies untrusted, rules that only tighten, and
 * the items trust would switch on (hooks, MCP servers, providers, agents and their prompts, the
 * summary template, allow rules, a looser permission mode or persistence).
 */
export const splitProjectConfig = (project: Config): ProjectSplit => {
  const items: Array<TrustItem> = []
  const { hooks, mcp, provider, agent, permission, permission_mode, permission_persist, compaction, sandbox, cluster, lsp, ...rest } = project
  // which cluster a server joins, and on what address: the user's deployment, not a cloned repository's say
  if (cluster?.runner !== undefined) items.push({ kind: "cluster", name: "cluster.runner", detail: cluster.runner })
  for (const event of ["tool.before", "tool.after"] as const) {
    for (const [i, hook] of (hooks?.[event] ?? []).entries()) items.push({ kind: "hook", name: `hooks.${event}[${i}]`, detail: hook.command })
  }
  for (const [name, server] of Object.entries(mcp ?? {})) {
    items.push({ kind: "mcp", name: `mcp.${name}`, detail: server.type === "local" ? server.command.join(" ") : server.url })
    // a server that runs outside the sandbox, or with more writable, is a loosening the question names
    if (server.type === "local" && server.sandbox === false) items.push({ kind: "sandbox", name: `mcp.${name}.sandbox`, detail: "off" })
    if (server.type === "local" && server.sandbox !== false)
      for (const dir of server.sandbox?.writable ?? []) items.push({ kind: "sandbox", name: `mcp.${name}.sandbox.writable`, detail: dir })
  }
  for (const [id, entry] of Object.entries(provider ?? {})) {
    const where = [entry.baseURL ? `baseURL ${entry.baseURL}` : undefined, entry.headers ? "headers" : undefined, entry.apiKey ? "apiKey" : undefined]
    items.push({ kind: "provider", name: `provider.${id}`, detail: [`type ${entry.type}`, ...where.filter((w) => w !== undefined)].join(", ") })
  }
  let inertAgent: AgentsConfig | undefined
  for (const [name, value] of Object.entries(agent ?? {})) {
    if (name === "steps") inertAgent = { steps: agent?.steps } as AgentsConfig
    else if (name === "prompt") items.push({ kind: "prompt", name: "agent.prompt", detail: String(value) })
    else items.push({ kind: "agent", name: `agent.${name}`, detail: isRecord(value) && typeof value.description === "string" ? value.description : name })
  }
  const languageServers = splitLsp(lsp)
  items.push(...languageServers.items)
  const { template, ...inertCompaction } = compaction ?? {}
  if (template !== undefined) items.push({ kind: "prompt", name: "compaction.template", detail: template })
  const rules = splitPermission(permission, "permission")
  items.push(...rules.items)
  if (permission_mode === "last-match") items.push({ kind: "permission", name: "permission_mode", detail: "last-match" })
  if (permission_persist !== undefined) items.push({ kind: "permission", name: "permission_persist", detail: permission_persist })
  // the sandbox: "required" and hidden paths tighten; anything that opens it needs trust
  if (sandbox?.mode === "off" || sandbox?.mode === "auto") items.push({ kind: "sandbox", name: "sandbox.mode", detail: sandbox.mode })
  // the network: "none" tightens; "all", "allow" and every host a project lists open it
  const network = sandbox?.network
  if (network?.mode === "all" || network?.mode === "allow")
    items.push({
      kind: "sandbox",
      name: "sandbox.network",
      detail: network.mode === "allow" && network.allow === undefined ? "allow (@registries: the package registries)" : network.mode
    })
  if (network?.mode !== "none" && network?.mode !== "all")
    for (const host of network?.allow ?? []) items.push({ kind: "sandbox", name: "sandbox.network.allow", detail: host })
  for (const dir of sandbox?.writable ?? []) items.push({ kind: "sandbox", name: "sandbox.writable", detail: dir })
  for (const name of sandbox?.env?.pass ?? []) items.push({ kind: "sandbox", name: "sandbox.env.pass", detail: name })
  const inertSandbox = {
    ...(sandbox?.mode === "required" ? { mode: "required" as const } : {}),
    ...(sandbox?.network?.mode === "none" ? { network: { mode: "none" as const } } : {}),
    ...(sandbox?.deny_read !== undefined ? { deny_read: sandbox.deny_read } : {})
  }
  const inert: Config = {
    ...rest,
    ...(inertAgent !== undefined ? { agent: inertAgent } : {}),
    ...(compaction !== undefined ? { compaction: inertCompaction } : {}),
    ...(Object.keys(inertSandbox).length > 0 ? { sandbox: inertSandbox } : {}),
    ...(languageServers.inert !== undefined ? { lsp: languageServers.inert } : {}),
    // deny-wins only tightens
    ...(permission_mode === "deny-wins" ? { permission_mode } : {})
  }
  return { inert, tighten: rules.tighten, items }
}

// node:crypto loads at the first hash, not at every command's startup
const sha256 = (data: string | Buffer) => process.getBuiltinModule("node:crypto").createHash("sha256").update(data).digest("hex")

const fileHash = (file: string) => {
  try {
    return sha256(fs.readFileSync(file))
  } catch {
    return "unreadable"
  }
}

/** Every file under `dir` (not following symlinked folders), relative to it, sorted. */
const filesUnder = (dir: string): Array<string> => {
  const out: Array<string> = []
  const walk = (sub: string) => {
    let entries: Array<fs.Dirent> = []
    try {
      entries = fs.readdirSync(path.join(dir, sub), { withFileTypes: true })
    } catch {
      return
    }
    for (const e of entries) {
      const rel = path.join(sub, e.name)
      if (e.isDirectory()) walk(rel)
      else out.push(rel)
    }
  }
  walk("")
  return out.sort()
}

/** Where a project keeps skills: each a folder with a SKILL.md. */
export const projectSkillRoots = (cwd: string) => [path.join(cwd, PROJECT_DIR, "skills"), path.join(cwd, ".claude", "skills")]

/** Whether a skill's folder holds anything besides its SKILL.md (scripts the skill tells the model to run). */
export const skillHasScripts = (folder: string) => filesUnder(folder).some((f) => f !== "SKILL.md")

/** The `.md` files of a folder, sorted; none when it is not there. */
const markdownFiles = (dir: string): ReadonlyArray<string> => {
  try {
    return fs
      .readdirSync(dir)
      .filter((f) => f.endsWith(".md"))
      .sort()
  } catch {
    return []
  }
}

/**
 * The project's own extension files that would load once trusted: `.reins/plugins/*`, `.reins/tools/*`,
 * `.reins/agents/*.md`, `.reins/commands/*.md`, and the skills whose folder holds scripts; each with the hash of its contents.
 */
export const projectFileItems = (cwd: string): Array<TrustItem> => {
  const items: Array<TrustItem> = []
  const rel = (file: string) => path.relative(cwd, file)
  for (const [kind, sub] of [
    ["plugin", "plugins"],
    ["tool", "tools"]
  ] as const) {
    // every file under the folder, whatever its name: a plugin's own modules and any extension the loader takes
    const dir = path.join(cwd, PROJECT_DIR, sub)
    for (const file of filesUnder(dir))
      items.push({ kind, name: rel(path.join(dir, file)), detail: "code reins would load and run", hash: fileHash(path.join(dir, file)) })
  }
  // the project's agents (a prompt and permissions) and commands (a prompt sent to the model when you run one)
  for (const [kind, sub, detail] of [
    ["agent", "agents", "an agent: its prompt and permissions"],
    ["command", "commands", "a command: a prompt for the model"]
  ] as const) {
    const dir = path.join(cwd, PROJECT_DIR, sub)
    for (const file of markdownFiles(dir)) items.push({ kind, name: rel(path.join(dir, file)), detail, hash: fileHash(path.join(dir, file)) })
  }
  for (const root of projectSkillRoots(cwd)) {
    let names: Array<string> = []
    try {
      names = fs.readdirSync(root).sort()
    } catch {
      names = []
    }
    for (const name of names) {
      const folder = path.join(root, name)
      if (!fs.existsSync(path.join(folder, "SKILL.md")) || !skillHasScripts(folder)) continue
      const hash = sha256(
        filesUnder(folder)
          .map((f) => `${f}\0${fileHash(path.join(folder, f))}`)
          .join("\n")
      )
      items.push({ kind: "skill", name: rel(folder), detail: "a skill with scripts", hash })
    }
  }
  return items
}

/** One item's fingerprint (kind, name, what it runs, its file's contents): kept with the trust to name what changed since. */
export const trustItemKey = (i: TrustItem) => sha256([i.kind, i.name, i.detail, i.hash ?? ""].join("\0")).slice(0, 24)

/** The items that are new or changed since the trust that saw `seen` (their keys). */
export const changedItems = (items: ReadonlyArray<TrustItem>, seen: ReadonlyArray<string>) => {
  const known = new Set(seen)
  return items.filter((i) => !known.has(trustItemKey(i)))
}

/** The digest of what trust would switch on: the same items, the same files' contents, the same digest. */
export const trustDigest = (items: ReadonlyArray<TrustItem>) =>
  sha256(
    JSON.stringify(
      [...items].map((i) => [i.kind, i.name, i.detail, i.hash ?? ""]).sort((a, b) => (a.join("\0") < b.join("\0") ? -1 : a.join("\0") > b.join("\0") ? 1 : 0))
    )
  )
