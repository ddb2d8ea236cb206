import { RUNNERS, sshCommand } from "./Runners.ts"
import { code, long, rest, script, skipOptions, type Unwrapped, type Words } from "./Unwrap.ts"

export type { Unwrapped } from "./Unwrap.ts"

/**
 * Commands that run another command: how to find it. Words are the literal values of a simple
 * command's words (`undefined` when a word is computed at run time), the name first.
 */

const assignment = /^[A-Za-z_][A-Za-z0-9_]*=/

const SHELLS = new Set(["sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "fish"])

// long shell options that take the next word
const SHELL_LONG_VALUE = new Set(["--rcfile", "--init-file"])

/**
 * `sh -c 'script'`: the first operand after options is the script when `c` is among the flags;
 * `-o name` (also inside a cluster, `-eo pipefail`) takes a word. A computed word before the
 * script is known may be `-c` itself: what follows is then code nobody can read.
 */
const shellScript = (name: string, words: Words): Unwrapped | undefined => {
  let command = false
  for (let i = 1; i < words.length; i++) {
    const w = words[i]
    if (w === undefined) return command || i + 1 < words.length ? script(i) : undefined
    if (w === "--" || w === "-") return command && i + 1 < words.length ? script(i + 1) : undefined
    if (w.startsWith("--")) {
      const eq = w.indexOf("=")
      const option = eq === -1 ? w : w.slice(0, eq)
      if (option === "--command" || (name === "fish" && option === "--init-command"))
        return eq === -1 ? (i + 1 < words.length ? script(i + 1) : undefined) : code(w.slice(eq + 1))
      if (eq === -1 && SHELL_LONG_VALUE.has(w)) i++
      continue
    }
    if ((w.startsWith("-") || w.startsWith("+")) && w.length > 1) {
      const letters = w.slice(1)
      if (name === "fish") {
        // fish: -c and -C take their code as a value, attached or the next word
        const at = [...letters].findIndex((c) => c === "c" || c === "C")
        if (at !== -1) return at + 1 < letters.length ? code(letters.slice(at + 1)) : i + 1 < words.length ? script(i + 1) : undefined
        continue
      }
      if (w.startsWith("-") && letters.includes("c")) command = true
      i += [...letters].filter((c) => c === "o" || c === "O").length
      continue
    }
    return command ? script(i) : undefined
  }
  return undefined
}

const EXEC_FLAGS = new Set(["-exec", "-execdir", "-ok", "-okdir"])

/**
 * `find … -exec cmd {} ;` (any number of them). A `;` or `+` that closes no written `-exec`
 * belongs to one that a computed word supplies (`find . $A rm x \;`): that cannot be read.
 */
const findExec = (words: Words): Unwrapped | undefined => {
  const inners: Array<readonly [number, number]> = []
  let stray = false
  for (let i = 1; i < words.length; i++) {
    const w = words[i]
    if (w === ";" || w === "+") stray = true
    if (!EXEC_FLAGS.has(w ?? "")) continue
    let end = i + 1
    while (end < words.length && words[end] !== ";" && words[end] !== "+") end++
    if (end > i + 1) inners.push([i + 1, end])
    i = end
  }
  if (stray && words.includes(undefined)) return { inners, scripts: [], code: [undefined] }
  return inners.length > 0 ? { inners, scripts: [] } : undefined
}

const FD_EXEC = new Set(["-x", "--exec", "-X", "--exec-batch"])

/** `fd pattern -x cmd {}` (any number of them, each up to `;` or the end). */
const fdExec = (words: Words): Unwrapped | undefined => {
  const inners: Array<readonly [number, number]> = []
  for (let i = 1; i < words.length; i++) {
    if (!FD_EXEC.has(words[i] ?? "")) continue
    let end = i + 1
    while (end < words.length && words[end] !== ";") end++
    if (end > i + 1) inners.push([i + 1, end])
    i = end
  }
  return inners.length > 0 ? { inners, scripts: [] } : undefined
}

const SAFE_WORD = /^[A-Za-z0-9_@%+=:,./-]+$/
const quote = (w: string) => (SAFE_WORD.test(w) ? w : `'${w.replaceAll("'", `'\\''`)}'`)

/** `env -S 'cmd args' more…`: the split string and the words after it make the command. */
const splitString = (words: Words, text: string | undefined, after: number): Unwrapped => {
  const tail = words.slice(after)
  if (text === undefined || tail.some((x) => x === undefined)) return code(undefined)
  return code([text, ...(tail as Array<string>).map(quote)].join(" "))
}

/** `env [-i] [-u NAME] [-C DIR] [-S STRING] [NAME=VALUE]… [COMMAND [ARG]…]`; `-` is `-i`. */
const envCommand = (w: Words): Unwrapped | undefined => {
  let i = 1
  while (i < w.length) {
    const x = w[i]
    if (x === undefined) break
    if (x === "--") {
      i++
      break
    }
    if (x === "-") {
      i++
      continue
    }
    if (!x.startsWith("-")) break
    if (x === "--split-string") return splitString(w, w[i + 1], i + 2)
    if (x.startsWith("--split-string=")) return splitString(w, x.slice("--split-string=".length), i + 1)
    if (x.startsWith("--")) {
      i += x === "--unset" || x === "--chdir" ? 2 : 1
      continue
    }
    // a short cluster: the first of u, C, S takes the rest of the word or the next word
    const letters = x.slice(1)
    const at = [...letters].findIndex((c) => c === "u" || c === "C" || c === "S")
    if (at === -1) {
      i++
      continue
    }
    const value = letters.slice(at + 1)
    if (letters[at] === "S") return value ? splitString(w, value, i + 1) : i + 1 < w.length ? splitString(w, w[i + 1], i + 2) : code(undefined)
    i += value ? 1 : 2
  }
  while (i < w.length && assignment.test(w[i] ?? "")) i++
  return rest(w, i)
}

/**
 * `su [options] [-] [user [args…]]`: `-c code` (also `-lc code`, `-ccode`, `--command=code`)
 * anywhere; a computed word may be `-c` itself.
 */
const suCommand = (w: Words): Unwrapped | undefined => {
  for (let i = 1; i < w.length; i++) {
    const x = w[i]
    if (x === undefined) return i + 1 < w.length ? script(i) : undefined
    if (x === "--command" || x === "--session-command") return i + 1 < w.length ? script(i + 1) : undefined
    if (x.startsWith("--command=") || x.startsWith("--session-command=")) return code(x.slice(x.indexOf("=") + 1))
    if (!x.startsWith("-") || x.startsWith("--") || x.length < 2) continue
    const letters = x.slice(1)
    for (let j = 0; j < letters.length; j++) {
      const c = letters[j]!
      if (c === "c") return j + 1 < letters.length ? code(letters.slice(j + 1)) : i + 1 < w.length ? script(i + 1) : undefined
      if ("sgGw".includes(c)) {
        if (j + 1 === letters.length) i++
        break
      }
    }
  }
  return undefined
}

// bwrap options and how many words each takes
const BWRAP_VALUES: Record<string, number> = {
  "--bind": 2,
  "--bind-try": 2,
  "--ro-bind": 2,
  "--ro-bind-try": 2,
  "--dev-bind": 2,
  "--dev-bind-try": 2,
  "--symlink": 2,
  "--setenv": 2,
  "--file": 2,
  "--bind-data": 2,
  "--ro-bind-data": 2,
  "--chmod": 2,
  "--overlay": 3,
  "--proc": 1,
  "--dev": 1,
  "--tmpfs": 1,
  "--dir": 1,
  "--chdir": 1,
  "--unsetenv": 1,
  "--uid": 1,
  "--gid": 1,
  "--hostname": 1,
  "--remount-ro": 1,
  "--exec-label": 1,
  "--file-label": 1,
  "--seccomp": 1,
  "--add-seccomp-fd": 1,
  "--info-fd": 1,
  "--json-status-fd": 1,
  "--userns": 1,
  "--userns2": 1,
  "--pidns": 1,
  "--lock-file": 1,
  "--sync-fd": 1,
  "--args": 1,
  "--cap-add": 1,
  "--cap-drop": 1,
  "--perms": 1,
  "--size": 1,
  "--overlay-src": 1,
  "--tmp-overlay": 1,
  "--ro-overlay": 1,
  "--argv0": 1,
  "--block-fd": 1,
  "--userns-block-fd": 1,
  "--mqueue": 1
}

/** Where the command of `bwrap [options] command …` starts. */
const bwrapCommand = (w: Words): number => {
  let i = 1
  while (i < w.length) {
    const x = w[i]
    if (x === undefined || !x.startsWith("--")) return i
    if (x === "--") return i + 1
    i += 1 + (BWRAP_VALUES[x] ?? 0)
  }
  return i
}

/**
 * `tool sub [options] cmd …` (`uv run`, `poetry run`, `npm exec`, `bundle exec`): after the
 * subcommand and its options a command from PATH runs. A computed subcommand may be one of them.
 */
const UNWRAP: Record<string, (words: Words) => Unwrapped | undefined> = {
  ...RUNNERS,
  sudo: (w) =>
    rest(
      w,
      skipOptions(
        w,
        1,
        "ughpCDrtUT",
        long("--user", "--group", "--host", "--prompt", "--close-from", "--chdir", "--role", "--type", "--other-user", "--command-timeout")
      )
    ),
  doas: (w) => rest(w, skipOptions(w, 1, "uC")),
  env: envCommand,
  nice: (w) => rest(w, skipOptions(w, 1, "n", long("--adjustment"))),
  nohup: (w) => rest(w, skipOptions(w, 1, "")),
  time: (w) => rest(w, skipOptions(w, 1, "fo", long("--format", "--output"))),
  timeout: (w) => rest(w, skipOptions(w, 1, "sk", long("--signal", "--kill-after")) + 1),
  // `command -v ls` looks a name up; `command printf -v x` runs printf (its -v is printf's)
  command: (w) => {
    const at = skipOptions(w, 1, "")
    return w.slice(1, at).some((x) => x === undefined || /^-[a-zA-Z]*[vV]/.test(x)) ? undefined : rest(w, at)
  },
  builtin: (w) => rest(w, 1),
  exec: (w) => rest(w, skipOptions(w, 1, "a")),
  stdbuf: (w) => rest(w, skipOptions(w, 1, "ioe", long("--input", "--output", "--error"))),
  setsid: (w) => rest(w, skipOptions(w, 1, "")),
  ionice: (w) => rest(w, skipOptions(w, 1, "cnp", long("--class", "--classdata", "--pid"))),
  xargs: (w) =>
    rest(
      w,
      skipOptions(
        w,
        1,
        "InPdLsEaJRS",
        long("--max-args", "--max-procs", "--delimiter", "--max-lines", "--max-chars", "--eof", "--arg-file", "--process-slot-var")
      )
    ),
  find: findExec,
  su: suCommand,
  runuser: (w) =>
    w.some((x) => x === "-u" || x === "--user" || (x ?? "").startsWith("--user="))
      ? rest(w, skipOptions(w, 1, "ugGsw", long("--user", "--group", "--supp-group", "--shell", "--whitelist-environment")))
      : suCommand(w),
  // `coproc cmd …`, `coproc { …; }` and `coproc NAME { …; }` (the parser sees the braces as words)
  coproc: (w) => (w[1] === "{" ? rest(w, 2) : w[2] === "{" ? rest(w, 3) : rest(w, 1)),
  pkexec: (w) => rest(w, skipOptions(w, 1, "", long("--user"))),
  chroot: (w) => rest(w, skipOptions(w, 1, "", long("--userspec", "--groups")) + 1),
  flock: (w) => {
    const file = skipOptions(w, 1, "wE", long("--timeout", "--wait", "--conflict-exit-code"))
    const next = w[file + 1]
    if (next === "-c" || next === "--command") return file + 2 < w.length ? script(file + 2) : undefined
    return rest(w, file + 1)
  },
  unbuffer: (w) => rest(w, skipOptions(w, 1, "")),
  fakeroot: (w) => rest(w, skipOptions(w, 1, "lsib", long("--lib", "--faked"))),
  busybox: (w) => rest(w, 1),
  taskset: (w) => (w.some((x) => x === "-p" || x === "--pid" || (x ?? "").startsWith("-p")) ? undefined : rest(w, skipOptions(w, 1, "") + 1)),
  caffeinate: (w) => rest(w, skipOptions(w, 1, "tw")),
  // `sg group -c 'code'` or `sg group 'code'`: the code runs in /bin/sh
  sg: (w) => {
    const group = w[1] === "-" ? 2 : 1
    const at = w[group + 1] === "-c" ? group + 2 : group + 1
    return at < w.length ? script(at) : undefined
  },
  // watch joins its words with spaces and runs them with `sh -c` (unless -x)
  watch: (w) => {
    const start = skipOptions(w, 1, "nq", long("--interval", "--equexit"))
    if (start >= w.length) return undefined
    const exec = w.slice(1, start).some((x) => x === "--exec" || /^-[a-z]*x/.test(x ?? ""))
    const words = w.slice(start)
    return exec ? rest(w, start) : code(words.some((x) => x === undefined) ? undefined : words.join(" "))
  },
  // GNU parallel builds its commands from templates and input (or runs the inputs as commands)
  parallel: () => code(undefined),
  // `fd … -x cmd …` / `-X cmd …`: the rest of the words (up to `;`) run per result
  fd: fdExec,
  fdfind: fdExec,
  // `entr [-acdnprsz] utility [args]`; with -s the utility is shell code
  entr: (w) => {
    const start = skipOptions(w, 1, "")
    return w.slice(1, start).some((x) => /^-[a-z]*s/.test(x ?? "")) ? (start < w.length ? script(start) : undefined) : rest(w, start)
  },
  chrt: (w) =>
    w.some((x) => x === "-p" || x === "--pid") ? undefined : rest(w, skipOptions(w, 1, "T", long("--sched-runtime", "--sched-period", "--sched-deadline")) + 1),
  strace: (w) => rest(w, skipOptions(w, 1, "abeEIoOpPsSuUX")),
  valgrind: (w) => rest(w, skipOptions(w, 1, "")),
  // `script -c code`, `-qc code`, `-c'code'`, `--command=code` (-E -I -O -B -T -m take values)
  script: (w) => {
    for (let i = 1; i < w.length; i++) {
      const x = w[i]
      if (x === undefined) return code(undefined)
      if (x === "--command") return i + 1 < w.length ? script(i + 1) : undefined
      if (x.startsWith("--command=")) return code(x.slice("--command=".length))
      if (!x.startsWith("-") || x.startsWith("--")) continue
      for (let j = 1; j < x.length; j++) {
        if (x[j] === "c") return j + 1 < x.length ? code(x.slice(j + 1)) : i + 1 < w.length ? script(i + 1) : undefined
        if ("EIOBTm".includes(x[j]!)) break
      }
    }
    return undefined
  },
  // `trap 'code' SIG…`, `trap -- 'code' SIG…` (`trap -p`, `trap -l`, `trap - SIG` run nothing)
  trap: (w) => {
    const at = w[1] === "--" ? 2 : 1
    const x = w[at]
    return w.length > at + 1 && x !== "-" && (at === 2 || !(x ?? "").startsWith("-")) ? { inners: [], scripts: [at] } : undefined
  },
  // namespace and sandbox runners (also opaque, see Opaque.ts): the command they run is still judged
  nsenter: (w) => rest(w, skipOptions(w, 1, "tSG", long("--target", "--setuid", "--setgid", "--user-parent"))),
  unshare: (w) =>
    rest(
      w,
      skipOptions(
        w,
        1,
        "RwSG",
        long("--propagation", "--setgroups", "--root", "--wd", "--setuid", "--setgid", "--map-user", "--map-group", "--map-users", "--map-groups")
      )
    ),
  "systemd-run": (w) =>
    rest(
      w,
      skipOptions(
        w,
        1,
        "upEMH",
        long(
          "--unit",
          "--property",
          "--description",
          "--slice",
          "--setenv",
          "--uid",
          "--gid",
          "--working-directory",
          "--machine",
          "--host",
          "--on-calendar",
          "--on-active",
          "--on-boot",
          "--on-startup",
          "--on-unit-active",
          "--on-unit-inactive",
          "--timer-property",
          "--path-property",
          "--socket-property",
          "--nice",
          "--service-type",
          "--expand-environment"
        )
      )
    ),
  firejail: (w) => rest(w, skipOptions(w, 1, "")),
  bwrap: (w) => rest(w, bwrapCommand(w)),
  proot: (w) =>
    rest(w, skipOptions(w, 1, "rbwqkivRSm", long("--rootfs", "--bind", "--pwd", "--cwd", "--qemu", "--kernel-release", "--change-id", "--verbose", "--mount"))),
  toybox: (w) => rest(w, 1),
  // `pnpm exec cmd …`, `yarn exec cmd …`: any command on PATH (other subcommands run nothing given here)
  pnpm: (w) => (w[1] === "exec" || w[1] === "dlx" ? rest(w, skipOptions(w, 2, "", long("--filter", "-F", "--workspace-concurrency", "--package"))) : undefined),
  // `yarn node …` runs node itself
  yarn: (w) => (w[1] === "exec" || w[1] === "dlx" ? rest(w, skipOptions(w, 2, "p", long("--package"))) : w[1] === "node" ? rest(w, 1) : undefined),
  "sudo-rs": (w) =>
    rest(
      w,
      skipOptions(
        w,
        1,
        "ughpCDrtUT",
        long("--user", "--group", "--host", "--prompt", "--close-from", "--chdir", "--role", "--type", "--other-user", "--command-timeout")
      )
    )
}

/** The command(s) that `name` runs, when it is a wrapper with something to run; else undefined. */
export const unwrap = (name: string, words: Words): Unwrapped | undefined => {
  if (SHELLS.has(name)) return shellScript(name, words)
  return Object.hasOwn(UNWRAP, name) ? UNWRAP[name]!(words) : undefined
}

/**
 * True when `name` with these words starts a login or root shell (`su`, `sudo -s`, `doas -s`) that,
 * without a command, reads its commands from stdin.
 */
export const startsShell = (name: string, words: Words): boolean => {
  if (name === "su" || name === "runuser" || name === "newgrp" || name === "machinectl") return true
  // `ssh host` without a command: the remote shell reads stdin
  if (name === "ssh") return sshCommand(words) === undefined
  if (name !== "sudo" && name !== "doas" && name !== "sudo-rs" && name !== "run0") return false
  return words.some((w) => w === undefined || w === "--shell" || w === "--login" || /^-[A-Za-z]*[si]/.test(w))
}

/** True when `name` runs another command (a wrapper or a shell), even if none is given. */
export const isWrapper = (name: string) => SHELLS.has(name) || Object.hasOwn(UNWRAP, name)

/**
 * The word that a command runs through replaces at run time: `{}` for `find -exec`, the
 * replace string of `xargs -I R` / `-i` / `--replace`. Words containing it are computed.
 */
export const placeholder = (name: string, words: Words): string | undefined => {
  if (name === "find") return "{}"
  // fd: {}, {/}, {//}, {.}, {/.}
  if (name === "fd" || name === "fdfind") return "{"
  if (name !== "xargs") return undefined
  for (let i = 1; i < words.length; i++) {
    const w = words[i]
    if (w === undefined || !w.startsWith("-") || w === "--") return undefined
    if (w === "--replace" || w === "-i") return "{}"
    if (w.startsWith("--replace=")) return w.slice("--replace=".length) || "{}"
    if (w.startsWith("--")) continue
    const letters = w.slice(1)
    for (let j = 0; j < letters.length; j++) {
      const c = letters[j]!
      if (c === "i") return letters.slice(j + 1) || "{}"
      if (c === "I" || c === "J") return letters.slice(j + 1) || words[i + 1]
      if ("nPdLsEaRS".includes(c)) {
        if (j + 1 === letters.length) i++
        break
      }
    }
  }
  return undefined
}

const INTERPRETERS = new Set([
  ...SHELLS,
  "python",
  "python2",
  "python3",
  "pypy",
  "pypy3",
  "node",
  "nodejs",
  "bun",
  "deno",
  "perl",
  "ruby",
  "php",
  "lua",
  "luajit",
  "Rscript",
  "R",
  "osascript",
  "pwsh",
  "powershell",
  "tclsh",
  "irb",
  "ts-node",
  "tsx",
  "groovy",
  "julia",
  "elixir",
  "racket",
  // they read a program from stdin too, and can run commands from it
  "expect",
  "wish",
  "ghci",
  "jshell",
  "gnuplot",
  "octave",
  "dc",
  "m4",
  "mongo",
  "mongosh",
  "lftp"
])

const INLINE_CODE = new Set(["-c", "-e", "-m", "-p", "-E", "-r", "--eval", "--print", "--command"])

/** True for shells and language interpreters (they run a program given as a file, code or stdin). */
export const isInterpreter = (name: string) => INTERPRETERS.has(name)

// operands that name stdin itself
const STDIN = new Set(["-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"])
// options that take the next word and are not code (shells' -o/-O are counted in their clusters)
const VALUE_OPTIONS = new Set(["--rcfile", "--init-file", "-W", "-X", "--require", "--import"])

/**
 * True when a shell or interpreter would read its program from stdin: no script operand (or `-`),
 * no inline-code flag, or an explicit `-s` for a shell.
 */
export const readsProgramFromStdin = (name: string, words: Words): boolean => {
  if (!INTERPRETERS.has(name)) return false
  for (let i = 1; i < words.length; i++) {
    const w = words[i]
    // a computed word may be `-` or an option: what it reads cannot be known
    if (w === undefined) return true
    if (STDIN.has(w)) return true
    if (VALUE_OPTIONS.has(w)) {
      i++
      continue
    }
    // shells: -c (alone or in a cluster) is code, -s reads stdin, -e -x … are flags
    if (SHELLS.has(name) && (w.startsWith("-") || w.startsWith("+")) && !w.startsWith("--")) {
      if (w.startsWith("-") && w.slice(1).includes("c")) return false
      if (w.startsWith("-") && w.slice(1).includes("s")) return true
      i += [...w.slice(1)].filter((c) => c === "o" || c === "O").length
      continue
    }
    // -r is code for php only; node and ruby require a module with it
    if (w === "-r" && !name.startsWith("php")) {
      i++
      continue
    }
    if (INLINE_CODE.has(w)) return false
    // `deno run -`, `bun run -`: the program follows the subcommand
    if (w === "run" && (name === "deno" || name === "bun")) continue
    if (!w.startsWith("-")) return false
  }
  return true
}
