// Which commands reach the network, and which hosts they name: what a sandbox without network would
// stop, so the user can be asked for that access before the command runs (issue 25 item 2). A table
// of programs and subcommands, not a guarantee: a command it misses runs without network and its
// failure is explained; one it names needlessly only costs a question.

/** Programs whose every use is about the network. */
const ALWAYS = new Set([
  "curl",
  "wget",
  "ssh",
  "scp",
  "sftp",
  "mosh",
  "nc",
  "ncat",
  "netcat",
  "telnet",
  "ftp",
  "lftp",
  "ping",
  "ping6",
  "dig",
  "nslookup",
  "host",
  "whois",
  "traceroute",
  "http",
  "https",
  "xh",
  "aria2c",
  "websocat",
  "gh",
  "hub",
  "glab",
  "npx",
  "pnpx",
  "bunx",
  "uvx"
])

/** Programs whose listed subcommands reach the network (the first word that is not an option). */
const SUBCOMMANDS: Record<string, ReadonlySet<string>> = {
  git: new Set(["clone", "fetch", "pull", "push", "ls-remote", "submodule", "remote", "lfs", "archive", "request-pull", "send-email"]),
  npm: new Set([
    "install",
    "i",
    "in",
    "ci",
    "add",
    "isntall",
    "update",
    "up",
    "upgrade",
    "publish",
    "unpublish",
    "view",
    "info",
    "show",
    "outdated",
    "audit",
    "exec",
    "x",
    "create",
    "login",
    "logout",
    "whoami",
    "search",
    "ping",
    "doctor",
    "dist-tag",
    "deprecate",
    "owner"
  ]),
  pnpm: new Set(["install", "i", "add", "update", "up", "upgrade", "publish", "dlx", "outdated", "audit", "create", "fetch", "view", "info"]),
  yarn: new Set(["install", "add", "upgrade", "up", "publish", "dlx", "create", "info", "npm", "outdated", "audit"]),
  bun: new Set(["install", "i", "add", "a", "update", "upgrade", "publish", "create", "x", "outdated", "audit", "info"]),
  pip: new Set(["install", "download", "search", "index"]),
  pip3: new Set(["install", "download", "search", "index"]),
  uv: new Set(["add", "sync", "lock", "pip", "tool", "python", "publish"]),
  pipx: new Set(["install", "run", "upgrade", "upgrade-all", "inject"]),
  poetry: new Set(["install", "add", "update", "lock", "publish", "self", "search"]),
  cargo: new Set(["fetch", "install", "update", "add", "search", "publish", "login", "yank", "owner", "generate-lockfile"]),
  go: new Set(["get", "install", "mod"]),
  gem: new Set(["install", "update", "fetch", "push", "search", "sources"]),
  bundle: new Set(["install", "update", "add", "outdated", "lock"]),
  composer: new Set(["install", "update", "require", "create-project", "outdated", "search"]),
  apt: new Set(["install", "update", "upgrade", "full-upgrade", "download", "source"]),
  "apt-get": new Set(["install", "update", "upgrade", "dist-upgrade", "download", "source", "build-dep"]),
  dnf: new Set(["install", "update", "upgrade", "download", "makecache"]),
  brew: new Set(["install", "update", "upgrade", "fetch", "tap", "reinstall"]),
  docker: new Set(["pull", "push", "login", "search"]),
  podman: new Set(["pull", "push", "login", "search"]),
  conda: new Set(["install", "create", "update", "search"]),
  mamba: new Set(["install", "create", "update", "search"]),
  deno: new Set(["install", "cache", "add", "outdated"])
}

/** Programs that install when run bare (`yarn`). */
const BARE = new Set(["yarn"])

const URL = /^[a-z][a-z0-9+.-]*:\/\/(?:[^/@\s]*@)?(\[[^\]]+\]|[^/:?#\s]+)/i
const SCP_LIKE = /^(?:[\w.-]+@)?([a-z0-9][\w.-]*\.[a-z][\w-]*|\d{1,3}(?:\.\d{1,3}){3}|localhost):/i
const USER_AT_HOST = /^[\w.-]+@([a-z0-9][\w.-]*|\d{1,3}(?:\.\d{1,3}){3})$/i

/** The host a word names: a URL's, `user@host:path`'s (git, scp, rsync), `user@host`'s (ssh). */
export const hostOf = (word: string): string | undefined => {
  const found = URL.exec(word)?.[1]?.replace(/^\[|\]$/g, "") ?? SCP_LIKE.exec(word)?.[1] ?? USER_AT_HOST.exec(word)?.[1]
  // a name or an address, nothing else: no wildcard (it would become an allow-list pattern), no control characters
  return found !== undefined && HOST.test(found) ? found.toLowerCase() : undefined
}

/** A host name (letters, digits, dots, dashes), an IPv4 address, or an IPv6 one. */
const HOST = /^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*|[0-9a-f:.]*:[0-9a-f:.]*)$/i

/** Splits a command as the scan writes it into words, dropping quotes (good enough for names and URLs). */
const words = (command: string) => (command.match(/'[^']*'|"(?:[^"\\]|\\.)*"|\S+/g) ?? []).map((w) => (/^(['"]).*\1$/s.test(w) ? w.slice(1, -1) : w))

const programName = (word: string) => word.slice(word.lastIndexOf("/") + 1)

/** Where the program's name is among a command's words: after any leading assignments (`HTTPS_PROXY=… curl`). */
const programIndex = (list: ReadonlyArray<string>) => {
  let i = 0
  while (i < list.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(list[i]!)) i++
  return i
}

/** The program a command (as the scan names it) runs: its base name, after any leading assignments. */
export const programOf = (command: string): string => {
  const list = words(command)
  const word = list[programIndex(list)]
  return word === undefined ? "" : programName(word)
}

/**
 * Whether `command` (one command of a line, as the scan names it: `curl -s https://x`) reaches the
 * network, and the hosts its words name (none: it does not say). Undefined: no network, as far as
 * the table knows.
 */
export const networkUse = (command: string): { readonly hosts: ReadonlyArray<string> } | undefined => {
  const list = words(command)
  const i = programIndex(list)
  const name = list[i] === undefined ? undefined : programName(list[i]!)
  if (name === undefined) return undefined
  const rest = list.slice(i + 1)
  const hosts = [...new Set(rest.flatMap((w) => hostOf(w) ?? []))]
  if (ALWAYS.has(name)) return { hosts }
  // `python -m pip install …`
  if (/^python[\d.]*$/.test(name) && rest[0] === "-m" && rest[1] !== undefined) return networkUse(rest.slice(1).join(" "))
  // rsync and scp-like copies name a host in an operand
  if (name === "rsync") return hosts.length > 0 || rest.some((w) => w.startsWith("rsync://")) ? { hosts } : undefined
  const subcommands = SUBCOMMANDS[name]
  if (subcommands === undefined) return undefined
  const sub = rest.find((w) => !w.startsWith("-"))
  if (sub === undefined) return BARE.has(name) ? { hosts } : undefined
  if (!subcommands.has(sub)) return undefined
  // `go mod init` and `go mod edit` stay local; `go mod download`, `tidy`, `vendor` fetch
  if (name === "go" && sub === "mod" && !/^(download|tidy|vendor)$/.test(rest[rest.indexOf(sub) + 1] ?? "")) return undefined
  return { hosts }
}
