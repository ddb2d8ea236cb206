// What a sandboxed command may touch: the directories it may write, the paths it may not read, the
// network, and the environment variables that pass. Built from the `sandbox` config and the runtime's
// places (project, temp dir, data dir, home); pure, so tests and `reins debug sandbox` see the same.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { children, exists, isDirectory, isWithin, real } from "./Fs.ts"
import { expandAllowList } from "./Hosts.ts"

export type SandboxMode = "auto" | "required" | "off"
export type NetworkMode = "none" | "allow" | "all"

/** The `sandbox` config, as the user wrote it (every field optional). */
export interface SandboxConfig {
  readonly mode?: SandboxMode
  /**
   * `none` (the default unless `allow` is given): no network at all; `allow`: HTTP(S) through reins's proxy to
   * the hosts in `allow` (exact, `*.suffix`, IP literals; `@registries` is the package registries, the default);
   * `all`: the host's network, unfiltered.
   */
  readonly network?: { readonly mode?: NetworkMode; readonly allow?: ReadonlyArray<string> }
  /** More directories commands may write (absolute, `~/…`, or relative to the project). */
  readonly writable?: ReadonlyArray<string>
  /** More paths commands may not read. */
  readonly deny_read?: ReadonlyArray<string>
  readonly env?: { readonly pass?: ReadonlyArray<string> }
}

export interface Profile {
  readonly mode: SandboxMode
  readonly network: NetworkMode
  /** The hosts the proxy reaches in `allow` mode (expanded, normalized); empty otherwise. */
  readonly allow: ReadonlyArray<string>
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
  "snap/chromium",
  // tokens other tools keep in files
  ".cargo/credentials",
  ".cargo/credentials.toml",
  ".config/git/credentials",
  ".pgpass",
  ".my.cnf",
  ".claude/.credentials.json",
  ".codex/auth.json",
  ".cache/huggingface/token",
  ".huggingface/token",
  ".m2/settings.xml",
  ".m2/settings-security.xml",
  ".gradle/gradle.properties",
  ".terraform.d/credentials.tfrc.json",
  ".vault-token",
  ".config/containers/auth.json",
  ".yarnrc.yml",
  ".1password",
  ".config/github-copilot",
  ".config/reins",
  ".bash_history",
  ".zsh_history",
  ".python_history",
  ".psql_history",
  ".mysql_history",
  ".node_repl_history",
  ".lesshst"
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

/** The system's sockets that start or control programs outside (docker, the system bus, systemd, podman). */
const SYSTEM_SOCKETS = [
  "/run/docker.sock",
  "/var/run/docker.sock",
  "/run/dbus",
  "/var/run/dbus",
  "/run/systemd/private",
  "/run/podman",
  "/run/containerd",
  "/run/snapd.socket"
]

/** Package managers' caches under home: writable, so installs work inside the sandbox. */
/** The files under a git dir that make git run code or read its config from elsewhere: read-only in the sandbox. */
export const GIT_CODE_FILES: ReadonlyArray<string> = ["hooks", "config", "config.worktree", "commondir", "info/attributes"]

export const CACHE_PLACES = [".cache", ".npm", ".bun/install/cache", ".cargo/registry", ".cargo/git", "go/pkg/mod", ".m2/repository", ".gradle/caches"]

const expand = (p: string, home: string, root: string) => (p === "~" ? home : p.startsWith("~/") ? path.join(home, p.slice(2)) : path.resolve(root, p))

export interface Places {
  /** The project root: writable. */
  readonly project: string
  /** The root of the git repository the project is in, when it is not the project itself (its .git is writable then). */
  readonly repository?: string
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

/** What in reins's data dir no command sees (and no tool reads): the stored keys, the trust store, the servers' tokens, every session. */
export const DATA_DIR_SECRETS: ReadonlyArray<string> = ["auth.json", "trust.json", "servers", "reins.db", "reins.db-wal", "reins.db-shm"]

/** The profile for `config` at `places`: only paths that exist are bound or hidden. */
export const profileFor = (config: SandboxConfig | undefined, places: Places): Profile => {
  const project = real(places.project)
  const home = places.home
  const tmp = real(places.tmp ?? os.tmpdir())
  const network = config?.network?.mode ?? (config?.network?.allow !== undefined ? "allow" : "none")
  const repositories = [...new Set([project, ...(places.repository !== undefined ? [real(places.repository)] : [])])]
  const gitDirs = repositories.map((r) => path.join(r, ".git")).filter(isDirectory)
  const writable = [
    project,
    tmp,
    ...gitDirs,
    // package caches: writable only with the network on (without it nothing is downloaded), as what is in them runs later
    ...(network !== "none" ? CACHE_PLACES.map((p) => path.join(home, p)).filter(exists) : []),
    ...(config?.writable ?? []).map((p) => expand(p, home, project)).filter(exists)
  ].map(real)
  // what git and reins run later, outside any sandbox: read-only even inside the writable places
  const readOnly = [
    ...gitDirs.flatMap((git) => [
      ...GIT_CODE_FILES.map((p) => path.join(git, p)),
      ...children(path.join(git, "modules")).flatMap((m) => [path.join(m, "hooks"), path.join(m, "config")]),
      ...children(path.join(git, "worktrees")).flatMap((w) => [path.join(w, "config.worktree"), path.join(w, "commondir")])
    ]),
    ...[".reins", "reins.json", "reins.jsonc"].map((p) => path.join(project, p)),
    // a project that holds the home directory: its dotfiles (shell start-up, ~/.config) stay read-only
    ...(isWithin(home, project) ? children(home).filter((p) => path.basename(p).startsWith(".") && !CACHE_PLACES.includes(path.basename(p))) : [])
  ]
    .filter(exists)
    .map(real)
  const denyRead = [
    ...SECRET_PLACES.map((p) => path.join(home, p)),
    ...DATA_DIR_SECRETS.map((p) => path.join(places.dataDir, p)),
    ...SOCKET_PLACES(tmp),
    // the user's runtime dir: the session bus (which can start programs outside), agents' sockets
    ...(places.runtimeDir !== undefined ? [places.runtimeDir] : []),
    ...SYSTEM_SOCKETS,
    ...(config?.deny_read ?? []).map((p) => expand(p, home, project)),
    ...(places.denyRead ?? [])
  ]
    // kept whether or not they exist now: one that appears later (a `gcloud auth login` mid-session) is
    // hidden from the next command on; bwrapArgs looks at each again for every command
    // a symlinked ~/.ssh is hidden where it points (a mount on the link itself fails)
    .map(real)
  return {
    mode: config?.mode ?? "auto",
    network,
    allow: network === "allow" ? expandAllowList(config?.network?.allow) : [],
    writable: [...new Set(writable)],
    readOnly: [...new Set(readOnly)],
    denyRead: [...new Set(denyRead)],
    envPass: config?.env?.pass ?? []
  }
}
