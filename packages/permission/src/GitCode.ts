// git's ways of running a program its command line does not show: configuration keys whose value is a
// command (`-c core.fsmonitor=…`, `git config alias.x '!…'`), `--config-env`, `--exec-path`, `ext::`
// remotes and subcommand options (`rebase --exec`). Part of the opaque-command table (Opaque.ts).

type Words = ReadonlyArray<string | undefined>

// git configuration keys whose value is a command, a program, or more configuration
const GIT_CODE_KEY =
  /^(alias\..*|core\.(pager|sshcommand|editor|fsmonitor|hookspath|askpass|gitproxy|alternaterefscommand)|sequence\.editor|diff\.external|diff\..*\.(command|textconv)|merge\..*\.driver|filter\..*|credential\.(.*\.)?helper|gpg\.(.*\.)?program|pager\..*|interactive\.difffilter|uploadpack\.packobjectshook|remote\..*\.(uploadpack|receivepack|vcs|proxy)|protocol\..*|url\..*|includeif\..*|include\..*|sendemail\..*|web\.browser|browser\..*|man\..*|mergetool\..*|difftool\..*|instaweb\..*|init\.templatedir|submodule\..*\.update)$/i

/** True for a git configuration key (`core.fsmonitor`, `diff.x.textconv`, `include.path`) whose value is a command, a program or more configuration. */
export const isGitCodeKey = (key: string) => GIT_CODE_KEY.test(key)

// a program run with a file (pager, editor, askpass) that does nothing else with it
const HARMLESS_PROGRAM =
  /^((\/usr)?\/bin\/)?(true|false|:|cat|echo|less|more|most|head|tail|vi|vim|nvim|nano|emacs|ed|code --wait|sccache|ccache)( -[A-Za-z]+)*$/

/** True for a pager, editor or wrapper value that runs nothing but itself (`cat`, `true`, `less -R`). */
export const harmlessProgram = (value: string | undefined) => value !== undefined && (value.trim() === "" || HARMLESS_PROGRAM.test(value.trim()))

// keys that name a pager or an editor: `cat`, `true` and the like run nothing else
const HARMLESS_KEY = /^(core\.(pager|editor)|sequence\.editor|pager\..*)$/

const gitKey = (setting: string | undefined) => (setting === undefined ? undefined : setting.split("=")[0]!.toLowerCase())

// git subcommand options that run a program
const GIT_SUBCOMMAND_CODE: Record<string, ReadonlyArray<string>> = {
  grep: ["-O", "--open-files-in-pager"],
  rebase: ["-x", "--exec"],
  difftool: ["-x", "--extcmd"],
  "filter-branch": [
    "--env-filter",
    "--tree-filter",
    "--index-filter",
    "--parent-filter",
    "--msg-filter",
    "--commit-filter",
    "--tag-name-filter",
    "--subdirectory-filter"
  ],
  clone: ["-u", "--upload-pack", "--template", "-c", "--config"],
  fetch: ["--upload-pack"],
  pull: ["--upload-pack"],
  push: ["--receive-pack", "--exec"],
  "ls-remote": ["--upload-pack"],
  archive: ["--exec"],
  "send-email": ["--to-cmd", "--cc-cmd", "--header-cmd", "--smtp-server"],
  init: ["--template"],
  submodule: ["foreach"],
  bisect: ["run"]
}

/** git: `-c key=value` and `--config-env`, `--exec-path`, `git config` of such keys, subcommand options. */
export const gitCode = (words: Words): string | undefined => {
  let i = 1
  for (; i < words.length; i++) {
    const w = words[i]
    if (w === undefined) return undefined
    // `-c key=value`, `-ckey=value`
    if (w.startsWith("-c") && !w.startsWith("--")) {
      const setting = w === "-c" ? words[++i] : w.slice(2)
      const key = gitKey(setting)
      if (key === undefined) return "git -c sets configuration computed when it runs"
      if (GIT_CODE_KEY.test(key) && !(HARMLESS_KEY.test(key) && harmlessProgram(setting!.slice(setting!.indexOf("=") + 1))))
        return `git -c ${key} runs a command`
      continue
    }
    if (w.startsWith("--config-env")) return "git --config-env takes configuration from the environment"
    if (w.startsWith("--exec-path=")) return "git --exec-path runs git commands from another directory"
    if (w === "-C" || w === "--git-dir" || w === "--work-tree" || w === "--namespace" || w === "--super-prefix") {
      i++
      continue
    }
    if (w.startsWith("-")) continue
    break
  }
  const sub = words[i]
  const rest = words.slice(i + 1)
  // `ext::cmd` remotes run a command (when the ext protocol is allowed)
  if (rest.some((w) => w !== undefined && /^ext::/i.test(w))) return "git's ext:: transport runs a command"
  if (sub === "config") {
    for (const w of rest) {
      if (w === undefined) return "git config sets a key computed when it runs"
      if (!w.startsWith("-") && GIT_CODE_KEY.test(gitKey(w) ?? "")) return `git config sets ${gitKey(w)}, which runs a command`
    }
    return undefined
  }
  const options = sub === undefined ? undefined : Object.hasOwn(GIT_SUBCOMMAND_CODE, sub) ? GIT_SUBCOMMAND_CODE[sub] : undefined
  for (const w of rest) {
    if (w === undefined || options === undefined) continue
    const option = w.includes("=") ? w.slice(0, w.indexOf("=")) : w
    if (options.includes(option) || options.some((o) => o.length === 2 && w.startsWith(o) && !w.startsWith("--"))) return `git ${sub} ${option} runs a command`
  }
  return undefined
}
