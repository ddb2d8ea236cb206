// What a sandboxed command may touch: the directories it may write, the paths it may not read, the
// network, and the environment variables that pass. Built from the `sandbox` config and the runtime's
// places (project, temp dir, data dir, home); pure, so tests and `reins debug sandbox` see the same.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

export type SandboxMode = "auto" | "required" | "off"

/** The `sandbox` config, as the user wrote it (every field optional). */
export interface SandboxConfig {
  readonly mode?: SandboxMode
  /** `none` (the default): no network at all; `all`: the host's network, unfiltered. */
  readonly network?: { readonly mode?: "none" | "all" }
  /** More directories commands may write (absolute, `~/…`, or relative to the project). */
  readonly writable?: ReadonlyArray<string>
  /** More paths commands may not read. */
  readonly deny_read?: ReadonlyArray<string>
  readonly env?: { readonly pass?: ReadonlyArray<string> }
}

export interface Profile {
  readonly mode: SandboxMode
  readonly network: "none" | "all"
  /** Directories bound writable, in order (the project first). */
  readonly writable: ReadonlyArray<string>
  /** Paths inside a writable directory that stay read-only (git hooks, reins's own config). */
  readonly readOnly: ReadonlyArray<string>
  /** Paths hidden: a directory shows empty, a file shows as /dev/null. */
  readonly denyRead: ReadonlyArray<string>
  readonly envPass: ReadonlyArray<string>
}

/** Where the user's secrets live: read by nothing a command runs. */
export const SECRET_PLACES = [
  ".ssh",
  ".aws",
  ".gnupg",
  ".azure",
  ".kube",
  ".docker/config.json",
  ".netrc",
  ".git-credentials",
  ".npmrc",
  ".pypirc",
  ".config/gcloud",
  ".config/gh",
  ".config/hub",
  ".config/op",
  ".password-store",
  ".local/share/keyrings",
  ".mozilla",
  ".config/google-chrome",
  ".config/chromium",
  ".config/BraveSoftware",
  ".config/microsoft-edge",
  "Library/Application Support/Google/Chrome",
  "Library/Application Support/Firefox",
  "Library/Keychains",
  "snap/firefox",
  "snap/chromium"
]

/**
 * Sockets in the temp dir that reach programs outside the sandbox (X11, a tmux server that would type
 * into the user's panes, ssh agents): hidden, though /tmp itself is writable.
 */
const SOCKET_PLACES = (tmp: string) => {
  let names: Array<string> = []
  try {
    names = fs.readdirSync(tmp)
  } catch {
    names = []
  }
  return names
    .filter((n) => /^(\.X11-unix|\.ICE-unix|\.XIM-unix|\.font-unix|tmux-\d+|ssh-[\w.-]+|screen|\.s\.PGSQL\.\d+.*|systemd-private-.*)$/.test(n))
    .map((n) => path.join(tmp, n))
}

/** Package managers' caches under home: writable, so installs work inside the sandbox. */
export const CACHE_PLACES = [".cache", ".npm", ".bun/install/cache", ".cargo/registry", ".cargo/git", "go/pkg/mod", ".m2/repository", ".gradle/caches"]

const expand = (p: string, home: string, root: string) => (p === "~" ? home : p.startsWith("~/") ? path.join(home, p.slice(2)) : path.resolve(root, p))

const exists = (p: string) => {
  try {
    fs.lstatSync(p)
    return true
  } catch {
    return false
  }
}

/** The real path when it exists (a bind of a symlink binds its target), else the path. */
const real = (p: string) => {
  try {
    return fs.realpathSync(p)
  } catch {
    return p
  }
}

export interface Places {
  /** The project root: writable. */
  readonly project: string
  readonly home: string
  /** The temp directory commands may write (the host's, as the file tools see it); default os.tmpdir(). */
  readonly tmp?: string
  /** The user's runtime dir (XDG_RUNTIME_DIR, `/run/user/<uid>`): its sockets are hidden. */
  readonly runtimeDir?: string
  /** reins's data dir: its secrets (auth, trust, server tokens) are hidden. */
  readonly dataDir: string
  /** More paths to hide (e.g. the files the `read` rules deny). */
  readonly denyRead?: ReadonlyArray<string>
}

/** The profile for `config` at `places`: only paths that exist are bound or hidden. */
export const profileFor = (config: SandboxConfig | undefined, places: Places): Profile => {
  const project = real(places.project)
  const home = places.home
  const tmp = real(places.tmp ?? os.tmpdir())
  const writable = [
    project,
    tmp,
    ...CACHE_PLACES.map((p) => path.join(home, p)).filter(exists),
    ...(config?.writable ?? []).map((p) => expand(p, home, project)).filter(exists)
  ].map(real)
  // the repository's hooks and reins's own config run code later, outside any sandbox: read-only even in the project
  const readOnly = [".git/hooks", ".git/config", ".reins", "reins.json", "reins.jsonc"].map((p) => path.join(project, p)).filter(exists)
  const denyRead = [
    ...SECRET_PLACES.map((p) => path.join(home, p)),
    ...["auth.json", "trust.json", "servers"].map((p) => path.join(places.dataDir, p)),
    ...SOCKET_PLACES(tmp),
    // the user's runtime dir: the session bus (which can start programs outside), agents' sockets
    ...(places.runtimeDir !== undefined ? [places.runtimeDir] : []),
    ...(config?.deny_read ?? []).map((p) => expand(p, home, project)),
    ...(places.denyRead ?? [])
  ].filter(exists)
  return {
    mode: config?.mode ?? "auto",
    network: config?.network?.mode ?? "none",
    writable: [...new Set(writable)],
    readOnly,
    denyRead: [...new Set(denyRead)],
    envPass: config?.env?.pass ?? []
  }
}
