import * as path from "node:path"
import { valueOptions } from "./GlobalOptions.ts"
import { locate, type State } from "./ScanState.ts"
import { isInterpreter } from "./Wrappers.ts"

/**
 * Files that a command line creates or changes and then runs: `printf … > s.sh; sh s.sh`,
 * `curl -o x.py … && python3 x.py`, `chmod +x s.sh && ./s.sh`. What runs is not in the text, so
 * running such a file is opaque. Words are literal values (`undefined` when computed).
 */

type Words = ReadonlyArray<string | undefined>

const operands = (words: Words, from = 1) => {
  const out: Array<string> = []
  let options = true
  for (let i = from; i < words.length; i++) {
    const w = words[i]
    if (w === undefined) continue
    if (options && w === "--") {
      options = false
      continue
    }
    if (options && w.startsWith("-") && w !== "-") continue
    out.push(w)
  }
  return out
}

const basenameOfUrl = (url: string | undefined) => {
  if (url === undefined) return undefined
  const pathPart = url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, "").split(/[?#]/)[0] ?? ""
  return pathPart.split("/").pop() || undefined
}

/** `cp a b`, `cp a b dir/`, `cp -t dir a b`: what the copy creates (directories as `dir/name`). */
const copies = (words: Words): Array<string> => {
  const target = words.findIndex((w) => w === "-t" || w === "--target-directory")
  const attached = words.find((w) => w?.startsWith("--target-directory="))
  const list = operands(words).filter((_, i, all) => !(target !== -1 && all[i] === words[target + 1]))
  const dir = attached?.slice("--target-directory=".length) ?? (target !== -1 ? words[target + 1] : undefined)
  if (dir !== undefined) return [dir, ...list.map((f) => `${dir}/${f.split("/").pop()}`)]
  if (list.length < 2) return list
  const dest = list[list.length - 1]!
  // the destination, and the destination as a directory holding each source
  return [dest, ...list.slice(0, -1).map((f) => `${dest}/${f.split("/").pop()}`)]
}

/** A hard link (`ln` without -s, `cp -l`) makes its source writable under another name: the sources count as written. */
const hardLinkSources = (words: Words): Array<string> => {
  const symbolic = words.some((w) => w !== undefined && (/^-[a-zA-Z]*s/.test(w) || w === "--symbolic"))
  if (symbolic) return []
  const list = operands(words)
  const target = words.findIndex((w) => w === "-t" || w === "--target-directory")
  const hasTarget = target !== -1 || words.some((w) => w?.startsWith("--target-directory="))
  return hasTarget ? list.filter((f) => f !== words[target + 1]) : list.slice(0, -1)
}

const WRITERS = new Set([
  "sponge",
  "tee",
  "touch",
  "truncate",
  "cp",
  "mv",
  "install",
  "ln",
  "rsync",
  "chmod",
  "dd",
  "sed",
  "gsed",
  "perl",
  "curl",
  "wget",
  "npm",
  "pnpm",
  "yarn",
  "bun",
  // `git config …` writes a config file (gitConfigWrite)
  "git"
])

// git options that take a separate value before the subcommand (`git -C dir config …`): GlobalOptions' table
const GIT_VALUE_OPTIONS = valueOptions("git")
// `git config` forms that only read
const GIT_CONFIG_READS = /^(--get|--get-all|--get-regexp|--get-urlmatch|--get-color|--get-colorbool|-l|--list|--show-origin|--show-scope|--name-only|get|list)$/

// git config keys that name no program, path or URL git would act on: setting them is ordinary work. Everything
// else (core.fsmonitor, core.hooksPath, alias.*, filter.*, diff.*.textconv, credential.helper, include.path, …) is an
// edit of the config file. Section and key names are case-insensitive.
const HARMLESS_GIT_KEY =
  /^(user\.(name|email)|init\.defaultbranch|pull\.(rebase|ff)|push\.(default|autosetupremote)|fetch\.prune|rebase\.autostash|rerere\.enabled|merge\.conflictstyle|diff\.(algorithm|renames|colormoved)|status\.showuntrackedfiles|log\.date|core\.(autocrlf|eol|filemode|ignorecase|quotepath)|advice\.[a-z0-9-]+|color\.[a-z0-9.-]+|branch\.[^\s]+\.(remote|merge|rebase|description))$/i

/**
 * The config file `git config …` writes: `-f FILE`, `~/.gitconfig` (`--global`), `/etc/gitconfig`
 * (`--system`) or the repository's `.git/config` (`local`); undefined when it only reads or is not
 * `git config`.
 */
export const gitConfigWrite = (words: Words): { readonly file: string } | "local" | undefined => {
  let i = 1
  for (; i < words.length; i++) {
    const w = words[i]
    if (w === undefined) return undefined
    if (!w.startsWith("-")) break
    if (GIT_VALUE_OPTIONS.has(w)) i++
  }
  if (words[i] !== "config") return undefined
  const rest = words.slice(i + 1)
  if (rest.some((w) => w !== undefined && GIT_CONFIG_READS.test(w))) return undefined
  // `-e` / `--edit` rewrites it in an editor the environment names: a write of anything
  const edits = rest.some((w) => w === "-e" || w === "--edit" || w === "edit")
  if (
    !edits &&
    rest.filter((w) => w !== undefined && !w.startsWith("-")).length < 2 &&
    !rest.some((w) => w !== undefined && /^(--unset|--unset-all|--add|--replace-all|--rename-section|--remove-section|set|unset)/.test(w))
  )
    return undefined
  // setting a key that runs nothing (user.name, a branch's upstream…) is ordinary work
  const key = rest.find((w) => w !== undefined && !w.startsWith("-") && w !== "set" && w !== "unset")
  if (!edits && !rest.some((w) => w === "--rename-section" || w === "--remove-section") && key !== undefined && HARMLESS_GIT_KEY.test(key)) return undefined
  for (let j = 0; j < rest.length; j++) {
    const w = rest[j]
    if ((w === "-f" || w === "--file") && rest[j + 1] !== undefined) return { file: rest[j + 1]! }
    if (w?.startsWith("--file=")) return { file: w.slice("--file=".length) }
    if (w === "--global") return { file: "~/.gitconfig" }
    if (w === "--system") return { file: "/etc/gitconfig" }
  }
  return "local"
}

/** True when {@link writtenBy} or {@link codeFiles} may find something for `name`. */
export const touchesFiles = (name: string) =>
  WRITERS.has(name) || isInterpreter(name) || name === "source" || name === "." || Object.hasOwn(CODE_OPTIONS, name) || Object.hasOwn(IMPLICIT, name)

/** The files (as written) that a command writes, creates or makes executable. */
export const writtenBy = (name: string, words: Words): Array<string> => {
  switch (name) {
    case "tee":
    case "sponge":
    case "touch":
    case "truncate":
      return operands(words)
    case "cp":
      // `cp -l` / `--link` hard-links instead of copying
      return words.some((w) => w !== undefined && (w === "--link" || /^-[a-zA-Z]*l/.test(w))) ? [...copies(words), ...hardLinkSources(words)] : copies(words)
    case "mv":
    case "install":
    case "rsync":
      return copies(words)
    case "ln":
      return [...copies(words), ...hardLinkSources(words)]
    case "chmod":
      // `chmod +x f`, `chmod 755 f`, `chmod u+x,g+x f`: the first operand is the mode
      return operands(words).slice(1)
    case "dd":
      return words.filter((w): w is string => w?.startsWith("of=") === true).map((w) => w.slice(3))
    case "sed":
    case "gsed":
    case "perl":
      return words.some((w) => w !== undefined && /^-[a-zA-Z]*i/.test(w)) ? operands(words).slice(1) : []
    case "curl": {
      const out: Array<string> = []
      for (let i = 1; i < words.length; i++) {
        const w = words[i]
        if ((w === "-o" || w === "--output") && words[i + 1] !== undefined) out.push(words[i + 1]!)
        else if (w?.startsWith("--output=")) out.push(w.slice("--output=".length))
        else if (w === "-O" || w === "--remote-name" || w === "--remote-name-all")
          out.push(
            ...operands(words)
              .map(basenameOfUrl)
              .filter((x): x is string => x !== undefined)
          )
      }
      return out
    }
    case "wget": {
      const out: Array<string> = []
      for (let i = 1; i < words.length; i++) {
        const w = words[i]
        if ((w === "-O" || w === "--output-document") && words[i + 1] !== undefined) out.push(words[i + 1]!)
        else if (w?.startsWith("--output-document=")) out.push(w.slice("--output-document=".length))
      }
      return out.length > 0
        ? out
        : operands(words)
            .map(basenameOfUrl)
            .filter((x): x is string => x !== undefined)
    }
    case "npm":
    case "pnpm":
    case "yarn":
    case "bun":
      // `npm pkg set scripts.x=…`, `npm set-script x …`: the scripts change
      return words.includes("set-script") || (words.includes("pkg") && words.some((w) => w === "set" || w === "delete")) ? ["package.json"] : []
    case "unzip":
    case "tar":
    case "patch":
    case "git":
      // what these write is known only when they run; not counted
      return []
    default:
      return []
  }
}

// files that a tool runs by convention (a Makefile, package.json scripts, build.rs, …)
const IMPLICIT: Record<string, ReadonlyArray<string>> = {
  make: ["Makefile", "makefile", "GNUmakefile"],
  gmake: ["Makefile", "makefile", "GNUmakefile"],
  npm: ["package.json"],
  pnpm: ["package.json"],
  yarn: ["package.json"],
  bun: ["package.json", "bunfig.toml"],
  just: ["justfile", "Justfile", ".justfile"],
  rake: ["Rakefile", "rakefile"],
  cargo: ["build.rs", "Cargo.toml", ".cargo/config.toml"]
}

const implicitCode = (name: string, words: Words): ReadonlyArray<string> => {
  if (!Object.hasOwn(IMPLICIT, name)) return []
  // `make -f other.mk` names its makefile (checked below)
  if ((name === "make" || name === "gmake") && words.some((w) => w === "-f" || w === "--file" || w === "--makefile")) return []
  return IMPLICIT[name]!
}

// options whose value is a file of code, per program
const CODE_OPTIONS: Record<string, ReadonlyArray<string>> = {
  sed: ["-f", "--file"],
  gsed: ["-f", "--file"],
  awk: ["-f", "--file", "-i", "--include", "-E", "--exec"],
  gawk: ["-f", "--file", "-i", "--include", "-E", "--exec"],
  mawk: ["-f"],
  nawk: ["-f"],
  make: ["-f", "--file", "--makefile"],
  gmake: ["-f", "--file", "--makefile"],
  gdb: ["-x", "--command", "-ix", "--init-command"],
  lldb: ["-s", "-S", "--source"],
  vim: ["-S", "-u", "-s"],
  vi: ["-S", "-u", "-s"],
  nvim: ["-S", "-u", "-s"],
  ex: ["-S", "-u"],
  emacs: ["-l", "--load", "--script"],
  ssh: ["-F"],
  scp: ["-F"],
  sftp: ["-F", "-b"],
  sqlite3: ["-init"],
  psql: ["-f", "--file"],
  cmake: ["-P", "-C"],
  lftp: ["-f"]
}

// stdin and pipes as file names
const STDIN_FILE = /^(-|\/dev\/stdin|\/dev\/fd\/\d+|\/proc\/(self|thread-self|\d+)\/fd\/\d+)$/

/** Why a code file named in a command's words cannot be read: stdin, a pipe, a computed name. */
export const unreadableCode = (name: string, file: string | undefined): string | undefined =>
  file === undefined ? `${name} runs code from a file named at run time` : STDIN_FILE.test(file) ? `${name} reads its code from stdin or a pipe` : undefined

/**
 * The words of a command that name files it runs as code: a shell's or interpreter's script (and
 * the values of options before it, `node --require x.js s.js`), `python -m mod`'s module, and
 * the code files of awk -f, sed -f, make -f, gdb -x, vim -S, ssh -F and the like.
 */
export const codeFiles = (name: string, words: Words): Array<string | undefined> => {
  const out: Array<string | undefined> = [...implicitCode(name, words)]
  if (isInterpreter(name) || name === "source" || name === ".") {
    for (let i = 1; i < words.length; i++) {
      const w = words[i]
      if (w === undefined) continue
      if (w === "-m" && words[i + 1] !== undefined) out.push(`${words[i + 1]}.py`, `${words[i + 1]}/__main__.py`)
      if (w.startsWith("-")) {
        if (w.includes("=")) out.push(w.slice(w.indexOf("=") + 1))
        continue
      }
      out.push(w)
      // the first operand that is not an option's value is the script: its arguments are data
      if (!words[i - 1]?.startsWith("-") || i === 1) break
    }
    return out
  }
  const options = Object.hasOwn(CODE_OPTIONS, name) ? CODE_OPTIONS[name]! : []
  for (let i = 1; i < words.length; i++) {
    const w = words[i]
    if (w === undefined) continue
    for (const option of options) {
      // a computed value (`-f <(…)`, `-f $F`) is undefined: code from a place nobody can read
      if (w === option && i + 1 < words.length) out.push(words[i + 1])
      else if (option.startsWith("--") && w.startsWith(`${option}=`)) out.push(w.slice(option.length + 1))
    }
  }
  return out
}

// programs that run the project's code files by convention (tests, builds, imports)
const RUNNERS = new Set([
  "make",
  "gmake",
  "npm",
  "npx",
  "pnpm",
  "yarn",
  "bun",
  "bunx",
  "deno",
  "pytest",
  "py.test",
  "tox",
  "nox",
  "jest",
  "vitest",
  "mocha",
  "cargo",
  "go",
  "gradle",
  "gradlew",
  "mvn",
  "mvnw",
  "just",
  "rake",
  "bundle",
  "rspec",
  "phpunit",
  "composer",
  "dotnet",
  "swift",
  "mix",
  "sbt",
  "ctest",
  "cmake",
  "meson",
  "bazel",
  "bazelisk",
  "task",
  "pre-commit",
  "foreman",
  "honcho",
  "direnv",
  "uv",
  "poetry",
  "pipenv",
  "pdm",
  "hatch"
])

// files whose contents make git run commands: hooks, configuration, attributes (filters), hook managers
const GIT_CODE =
  /(^|\/)\.git\/(hooks|config|info|modules)(\/|$)|(^|\/)\.(gitattributes|gitmodules|gitconfig|husky|githooks|lefthook\.yml|pre-commit-config\.yaml)(\/|$)/

/** Files (by their path) that make `name` run code when a line writes them before it runs. */
export const configCode = (name: string): RegExp | undefined => (name === "git" ? GIT_CODE : undefined)

/** True when `name` may run any code file of the project (an import, a test, a build script). */
export const runsProjectCode = (name: string) => isInterpreter(name) || RUNNERS.has(name)

const CODE_FILE =
  /\.(py|pyw|pth|js|mjs|cjs|jsx|ts|mts|cts|tsx|rb|pl|pm|php|lua|sh|bash|zsh|go|rs|java|kt|kts|swift|ex|exs|r|jl|mk|cmake|bzl|sbt|scala|csproj|fsproj|vbproj|props|targets|gemspec)$|(^|\/)(Makefile|makefile|GNUmakefile|justfile|Rakefile|Gemfile|conftest\.py|setup\.py|package\.json|build\.rs|Cargo\.toml|pyproject\.toml|setup\.cfg|tox\.ini|pytest\.ini|build\.gradle(\.kts)?|settings\.gradle(\.kts)?|pom\.xml|CMakeLists\.txt|meson\.build|BUILD(\.bazel)?|WORKSPACE(\.bazel)?|MODULE\.bazel|composer\.json|deno\.jsonc?|Taskfile\.ya?ml|\.pre-commit-config\.yaml|Procfile|\.envrc|\.npmrc|\.yarnrc(\.yml)?|bunfig\.toml|config\.toml)$/i

/** True for a file name that a runner may load as code (`helper.py`, `test_x.py`, `Makefile`). */
export const isCodeFile = (file: string) => CODE_FILE.test(file)

/** True when `file` or a directory above it was written (`cp -r x build; sh build/run.sh`). */
const writtenOrUnder = (written: ReadonlySet<string>, file: string | undefined) => {
  for (let at = file; at !== undefined; at = path.dirname(at)) {
    if (written.has(at)) return true
    if (path.dirname(at) === at) return false
  }
  return false
}

/** A file that this line writes and then runs: what runs is not in the text, so the run is opaque. */
export const writtenThenRun = (st: State) => {
  if (st.runs.length === 0 || st.written.length === 0) return
  const written = new Set(st.written.map((w) => locate(st, w.word, w.cwd)).filter((x): x is string => x !== undefined))
  for (const run of st.runs) {
    const request = st.out.get(run.key)
    if (request === undefined || request.opaque !== undefined) continue
    // `echo … > helper.py && python3 main.py`: main.py may import it; a test runner may collect it
    // (what a command itself writes, `python3 gen.py > out.py`, is its output)
    const others = st.written.filter((_, i) => i < run.own[0] || i >= run.own[1])
    const code = (run.project && others.some((w) => isCodeFile(w.word))) || (run.config !== undefined && others.some((w) => run.config!.test(w.word)))
    if (!code && !run.files.some((f) => writtenOrUnder(written, locate(st, f.word, f.cwd)))) continue
    st.out.set(run.key, { ...request, always: request.patterns, opaque: "it runs a file that the same command writes" })
  }
}
