import { code, long, rest, script, skipOptions, type Unwrapped, type Words } from "./Unwrap.ts"

/**
 * Runners: tools that start a command given in their words (version managers, environment and task
 * runners, container and remote shells, launchers). The command they start is judged.
 */

/**
 * Where subcommand `subs` is: the first operand, after global options, one of which may take a
 * value (`uv --directory d run …`, `docker -H h exec …`); -1 when another subcommand is given,
 * undefined when a computed word may be it.
 */
const subAt = (w: Words, subs: ReadonlyArray<string>): number | undefined => {
  for (let i = 1; i < w.length; i++) {
    const x = w[i]
    if (x === undefined) return undefined
    if (subs.includes(x)) return i
    if (x.startsWith("-") || (i > 1 && (w[i - 1] ?? "").startsWith("-"))) continue
    return -1
  }
  return -1
}

/**
 * `tool sub [options] cmd …` (`uv run`, `poetry run`, `npm exec`, `bundle exec`): after the
 * subcommand and its options a command from PATH runs.
 */
const subcommand =
  (subs: ReadonlyArray<string>, withValue = "", values: ReadonlyArray<string> = []) =>
  (w: Words): Unwrapped | undefined => {
    const at = subAt(w, subs)
    if (at === undefined) return code(undefined)
    return at === -1 ? undefined : rest(w, skipOptions(w, at + 1, withValue, new Set(values)))
  }

/** `mise exec tool@1 -- cmd …`, `kubectl exec pod -- cmd …`: the command follows `--`. */
const afterDashes =
  (subs: ReadonlyArray<string>, codeOptions: ReadonlyArray<string> = []) =>
  (w: Words): Unwrapped | undefined => {
    const at = subAt(w, subs)
    if (at === undefined) return code(undefined)
    if (at === -1) return undefined
    for (let i = at + 1; i < w.length; i++) {
      const x = w[i]
      if (x === undefined) return code(undefined)
      if (x === "--") return rest(w, i + 1)
      if (codeOptions.includes(x)) return i + 1 < w.length ? script(i + 1) : undefined
      const eq = x.indexOf("=")
      if (eq > 0 && codeOptions.includes(x.slice(0, eq))) return code(x.slice(eq + 1))
    }
    return undefined
  }

/** `docker exec [options] container cmd …` (also `docker container exec`, podman). */
const containerExec = (w: Words): Unwrapped | undefined => {
  const found = subAt(w, ["exec", "container"])
  const at = found !== undefined && w[found] === "container" ? (w[found + 1] === "exec" ? found + 1 : -1) : found
  if (at === undefined || at === -1) return undefined
  return rest(w, skipOptions(w, at + 1, "euw", long("--env", "--user", "--workdir", "--env-file", "--detach-keys", "--preserve-fd")) + 1)
}

/** `ssh host cmd …`: the remote shell runs the words after the host, joined with spaces. */
export const sshCommand = (w: Words): Unwrapped | undefined => {
  const host = skipOptions(w, 1, "BbcDEeFIiJLlmOoPpQRSWw")
  // ssh reads options after the host too (`ssh host -t cmd`)
  const words = w.slice(w[host + 1]?.startsWith("-") ? skipOptions(w, host + 1, "BbcDEeFIiJLlmOoPpQRSWw") : host + 1)
  if (words.length === 0) return undefined
  return code(words.some((x) => x === undefined) ? undefined : words.join(" "))
}

/** Commands unknown to the scan when a word is not an option (`hyperfine --version` runs none). */
const operandsGiven = (w: Words): Unwrapped | undefined => (w.slice(1).some((x) => x === undefined || !x.startsWith("-")) ? code(undefined) : undefined)

/** `socat - EXEC:'cmd args'`, `SYSTEM:'shell code'`, `SHELL:…`: an address that runs a program (options follow a comma). */
const socatCode = (w: Words): Unwrapped | undefined => {
  const texts = w.slice(1).filter((x) => x === undefined || /^(exec|system|shell):/i.test(x))
  if (texts.length === 0) return undefined
  return { inners: [], scripts: [], code: texts.map((x) => x?.slice(x.indexOf(":") + 1).split(",")[0]) }
}

/** Version managers, environment and task runners, launchers: the command they start is judged. */
/** rtk's own subcommands: they run no command of the agent's. */
const RTK_OWN = new Set(["gain", "init", "discover", "config", "help"])
/** rtk's subcommands that run their arguments as shell code (`rtk err "npm test"`). */
const RTK_SHELL = new Set(["err", "test", "summary"])
/** rtk's subcommands that read their file operands themselves: judged as `cat` of them. */
const RTK_READS = new Set(["read", "log", "json", "smart", "diff", "wc", "deps"])

const shellQuote = (word: string) => `'${word.replace(/'/g, "'\\''")}'`

/**
 * rtk, an output-compressing proxy for agents: after its own flags (`-v`, `--ultra-compact`), the command it runs (or
 * runs after `proxy`) is judged on its own; `err`, `test` and `summary` run their words as shell code, which is
 * scanned as such; `read`, `log`, `json`, … read their operands as `cat` would; its own subcommands run nothing.
 */
const rtkCommand = (w: Words): Unwrapped | undefined => {
  const at = skipOptions(w, 1, "")
  const sub = w[at]
  if (sub === undefined) return at < w.length ? code(undefined) : undefined
  if (RTK_OWN.has(sub)) return undefined
  const words = w.slice(at + 1)
  const literal = words.every((x) => x !== undefined)
  if (RTK_SHELL.has(sub)) return code(literal ? words.join(" ") : undefined)
  if (RTK_READS.has(sub)) return code(literal ? ["cat", ...(words as Array<string>).filter((x) => !x.startsWith("-")).map(shellQuote)].join(" ") : undefined)
  return rest(w, sub === "proxy" ? at + 1 : at)
}

export const RUNNERS: Record<string, (words: Words) => Unwrapped | undefined> = {
  uv: (w) =>
    w[1] === "tool" && w[2] === "run"
      ? rest(w, skipOptions(w, 3, "pw", long("--from", "--with", "--python", "--index", "--index-url")))
      : subcommand(["run"], "pw", [
          "--with",
          "--python",
          "--package",
          "--extra",
          "--group",
          "--env-file",
          "--directory",
          "--project",
          "--index",
          "--index-url",
          "--with-requirements",
          "--with-editable"
        ])(w),
  uvx: (w) => rest(w, skipOptions(w, 1, "pw", long("--from", "--with", "--python", "--index", "--index-url", "--with-requirements", "--with-editable"))),
  poetry: subcommand(["run"], "CP", ["--directory", "--project"]),
  pipenv: subcommand(["run"]),
  pdm: subcommand(["run"], "p", ["--project", "--venv"]),
  hatch: subcommand(["run"], "e", ["--env"]),
  rye: subcommand(["run"]),
  pixi: subcommand(["run", "exec", "x"], "e", ["--environment", "--manifest-path", "--spec", "-s"]),
  devbox: subcommand(["run"], "c", ["--config", "--environment"]),
  conda: subcommand(["run"], "np", ["--name", "--prefix", "--cwd"]),
  mamba: subcommand(["run"], "np", ["--name", "--prefix", "--cwd"]),
  micromamba: subcommand(["run"], "np", ["--name", "--prefix", "--cwd"]),
  bundle: subcommand(["exec"], "", ["--gemfile"]),
  asdf: subcommand(["exec"]),
  mise: afterDashes(["exec", "x"], ["-c", "--command"]),
  rtx: afterDashes(["exec", "x"], ["-c", "--command"]),
  rtk: rtkCommand,
  direnv: (w) => (w[1] === undefined ? code(undefined) : w[1] === "exec" ? rest(w, 3) : undefined),
  "nix-shell": (w) => {
    for (let i = 1; i < w.length; i++) {
      const x = w[i]
      if (x === "--run" || x === "--command") return i + 1 < w.length ? script(i + 1) : undefined
    }
    return undefined
  },
  nix: (w) => {
    if (w[1] !== "develop" && w[1] !== "shell") return undefined
    const at = w.findIndex((x, i) => i > 1 && (x === "-c" || x === "--command"))
    return at !== -1 ? rest(w, at + 1) : undefined
  },
  docker: (w) => containerExec(w),
  podman: (w) => containerExec(w),
  // `kubectl exec pod -- cmd`, and the older `kubectl exec pod cmd`
  kubectl: (w) => {
    const at = subAt(w, ["exec"])
    return (
      afterDashes(["exec", "debug", "run"])(w) ??
      (at !== undefined && at !== -1 && !w.includes("--")
        ? rest(w, skipOptions(w, at + 1, "cnf", long("--container", "--namespace", "--filename", "--context", "--kubeconfig", "--pod-running-timeout")) + 1)
        : undefined)
    )
  },
  oc: afterDashes(["exec", "debug", "run", "rsh"]),
  vagrant: (w) => {
    const at = w.findIndex((x) => x === "-c" || x === "--command")
    return w[1] === "ssh" && at !== -1 && at + 1 < w.length ? script(at + 1) : undefined
  },
  ssh: sshCommand,
  // JavaScript package runners: a package's program or any command on PATH
  npx: (w) => {
    for (let i = 1; i < w.length; i++) {
      const x = w[i]
      if (x === "-c" || x === "--call") return i + 1 < w.length ? script(i + 1) : undefined
      if (x?.startsWith("--call=")) return code(x.slice("--call=".length))
    }
    return rest(w, skipOptions(w, 1, "pw", long("--package", "--workspace", "--cache", "--userconfig")))
  },
  bunx: (w) => rest(w, skipOptions(w, 1, "p", long("--package"))),
  bun: (w) => {
    const at = subAt(w, ["x", "exec"])
    if (at === undefined || at === -1) return undefined
    const words = w.slice(at + 1)
    return w[at] === "x" ? rest(w, skipOptions(w, at + 1, "p", long("--package"))) : code(words.some((x) => x === undefined) ? undefined : words.join(" "))
  },
  npm: subcommand(["exec", "x"], "pw", ["--package", "--workspace"]),
  // launchers that run their operand as a command
  gosu: (w) => rest(w, 2),
  "su-exec": (w) => rest(w, 2),
  setuidgid: (w) => rest(w, 2),
  envuidgid: (w) => rest(w, 2),
  envdir: (w) => rest(w, 2),
  setarch: (w) => rest(w, skipOptions(w, 2, "")),
  linux32: (w) => rest(w, skipOptions(w, 1, "")),
  linux64: (w) => rest(w, skipOptions(w, 1, "")),
  runcon: (w) => ((w[1] ?? "-").startsWith("-") ? rest(w, skipOptions(w, 1, "urtl", long("--user", "--role", "--type", "--range"))) : rest(w, 2)),
  setpriv: (w) =>
    rest(
      w,
      skipOptions(
        w,
        1,
        "",
        long(
          "--reuid",
          "--regid",
          "--ruid",
          "--euid",
          "--rgid",
          "--egid",
          "--groups",
          "--inh-caps",
          "--ambient-caps",
          "--bounding-set",
          "--securebits",
          "--pdeathsig",
          "--selinux-label",
          "--apparmor-profile",
          "--landlock-access",
          "--landlock-rule"
        )
      )
    ),
  chpst: (w) => rest(w, skipOptions(w, 1, "uUbe/nlLmdofpcrt")),
  softlimit: (w) => rest(w, skipOptions(w, 1, "amdosletrfpc")),
  "dumb-init": (w) => rest(w, skipOptions(w, 1, "r", long("--rewrite"))),
  tini: (w) => rest(w, skipOptions(w, 1, "pe")),
  faketime: (w) => rest(w, skipOptions(w, 1, "p", long("--date-prog")) + 1),
  torsocks: (w) => rest(w, skipOptions(w, 1, "upaP", long("--user", "--pass", "--address", "--port"))),
  proxychains: (w) => rest(w, skipOptions(w, 1, "f")),
  proxychains4: (w) => rest(w, skipOptions(w, 1, "f")),
  run0: (w) =>
    rest(
      w,
      skipOptions(
        w,
        1,
        "ugD",
        long("--user", "--group", "--chdir", "--property", "--description", "--slice", "--nice", "--setenv", "--unit", "--machine", "--background")
      )
    ),
  please: (w) => rest(w, skipOptions(w, 1, "cdrtu")),
  ltrace: (w) => rest(w, skipOptions(w, 1, "aADeFlnopsuwx")),
  catchsegv: (w) => rest(w, 1),
  "xvfb-run": (w) => rest(w, skipOptions(w, 1, "efnpsw", long("--error-file", "--auth-file", "--server-num", "--xauth-protocol", "--server-args", "--wait"))),
  "dbus-run-session": (w) => rest(w, skipOptions(w, 1, "", long("--config-file", "--dbus-daemon"))),
  "systemd-inhibit": (w) => rest(w, skipOptions(w, 1, "", long("--what", "--who", "--why", "--mode"))),
  ts: (w) => rest(w, skipOptions(w, 1, "LDNw")),
  tsp: (w) => rest(w, skipOptions(w, 1, "LDNw")),
  nq: (w) => rest(w, skipOptions(w, 1, "")),
  numactl: (w) =>
    rest(
      w,
      skipOptions(
        w,
        1,
        "CimNpPw",
        long("--physcpubind", "--interleave", "--membind", "--cpunodebind", "--preferred", "--preferred-many", "--weighted-interleave")
      )
    ),
  cgexec: (w) => rest(w, skipOptions(w, 1, "g")),
  prlimit: (w) => (w.some((x) => x === "-p" || x === "--pid" || (x ?? "").startsWith("--pid=")) ? undefined : rest(w, skipOptions(w, 1, "", long("--output")))),
  daemonize: (w) => rest(w, skipOptions(w, 1, "ceopluE")),
  // compiler caches run their first word as the compiler
  ccache: (w) => (w.slice(1).every((x) => x?.startsWith("-")) ? undefined : rest(w, 1)),
  sccache: (w) => (w.slice(1).every((x) => x?.startsWith("-")) ? undefined : rest(w, 1)),
  distcc: (w) => (w.slice(1).every((x) => x?.startsWith("-")) ? undefined : rest(w, 1)),
  icecc: (w) => rest(w, 1),
  chronic: (w) => rest(w, skipOptions(w, 1, "")),
  ifne: (w) => rest(w, skipOptions(w, 1, "")),
  // moreutils' pee runs each operand as shell code
  pee: (w) => ({ inners: [], scripts: [], code: w.slice(1).filter((x) => x === undefined || !x.startsWith("-")) }),
  lckdo: (w) => rest(w, skipOptions(w, 1, "w") + 1),
  rlwrap: (w) => rest(w, skipOptions(w, 1, "aAbCefFgHlopPqsStwz")),
  eatmydata: (w) => rest(w, skipOptions(w, 1, "")),
  fakechroot: (w) => rest(w, skipOptions(w, 1, "cdeEl", long("--config-dir", "--use-system-libs", "--environment", "--lib"))),
  cpulimit: (w) => rest(w, skipOptions(w, 1, "lpe", long("--limit", "--pid", "--exe"))),
  trickle: (w) => rest(w, skipOptions(w, 1, "udwtlns")),
  dtach: (w) => (/^-[cAnN]$/.test(w[1] ?? "") ? rest(w, skipOptions(w, 3, "erz")) : undefined),
  abduco: (w) => (/^-[cAn]$/.test(w[1] ?? "") ? rest(w, skipOptions(w, 3, "e")) : undefined),
  uftrace: (w) => (w[1] === "record" || w[1] === "live" ? rest(w, skipOptions(w, 2, "dFNTtDAReUu")) : undefined),
  heaptrack: (w) => rest(w, skipOptions(w, 1, "o")),
  // `cmake -E env [--unset=N] [N=V]… cmd …`, `cmake -E time cmd …`
  cmake: (w) => {
    const at = w.indexOf("-E")
    if (at === -1 || (w[at + 1] !== "env" && w[at + 1] !== "time")) return undefined
    let i = at + 2
    if (w[at + 1] === "env") while (i < w.length && (w[i] === undefined || /^--(unset|modify)=|^--$|^[A-Za-z_]\w*=/.test(w[i]!))) i++
    return rest(w, i)
  },
  // terminal emulators: `-e cmd …` (`-e` takes the rest), or `--` then the command
  xterm: (w) => {
    const at = w.findIndex((x) => x === "-e" || x === "--")
    return at === -1 ? undefined : rest(w, at + 1)
  },
  // they build commands from templates, several strings of shell code, or run them in a job system
  sem: (w) => operandsGiven(w),
  hyperfine: (w) => operandsGiven(w),
  perf: (w) =>
    ["record", "stat", "trace", "top", "script", "c2c", "mem", "sched", "lock", "kvm", "ftrace", "kwork", "iostat"].includes(w[1] ?? "record")
      ? code(undefined)
      : undefined,
  mpirun: (w) => operandsGiven(w),
  mpiexec: (w) => operandsGiven(w),
  srun: (w) => operandsGiven(w),
  // `ssh-agent [options] cmd …` runs the command with the agent's environment
  "ssh-agent": (w) => rest(w, skipOptions(w, 1, "aEOPt")),
  socat: socatCode
}
