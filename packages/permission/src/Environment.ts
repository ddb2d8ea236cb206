import { harmlessProgram } from "./GitCode.ts"
import { plainSsh } from "./Opaque.ts"

/**
 * Environment variables that make programs run code no command line shows: a pager, an editor, a
 * preloaded library, options that load modules. Setting one (`VAR=x cmd`, `export VAR=x`,
 * `env VAR=x cmd`, `sudo VAR=x cmd`, `read VAR`) is opaque. Values that run nothing else stay
 * quiet (`GIT_EDITOR=true`, `PAGER=cat`, `PYTHONPATH=src`, `NODE_OPTIONS=--max-old-space-size=4096`).
 */

type Check = (value: string | undefined) => boolean

const always: Check = () => true
const program: Check = (v) => !harmlessProgram(v)
/** A search path of directories in the project (relative, not `..`), or the variable's own value. */
const searchPath =
  (own: string): Check =>
  (v) =>
    v === undefined || v.split(":").some((dir) => !(dir === "" || dir === `$${own}` || dir === `\${${own}}` || /^(?![/~]|\.\.(\/|$))[\w./-]+$/.test(dir)))
const matching =
  (pattern: RegExp): Check =>
  (v) =>
    v === undefined || pattern.test(v)

// PATH: a relative or computed directory lets a name run a file from there
const unsafePath: Check = (v) =>
  v === undefined || v.split(":").some((dir) => !(dir.startsWith("/") || /^(\$PATH|\$\{PATH\}|\$HOME\/.*|\$\{HOME\}\/.*|~\/.*)$/.test(dir)))

/** Per variable: when its value runs code. */
const VARIABLES: Record<string, Check> = {
  // programs
  GIT_SSH: (v) => !plainSsh(v),
  GIT_SSH_COMMAND: (v) => !plainSsh(v),
  RSYNC_RSH: (v) => !plainSsh(v),
  CVS_RSH: (v) => !plainSsh(v),
  SVN_SSH: (v) => !plainSsh(v),
  GIT_EDITOR: program,
  GIT_SEQUENCE_EDITOR: program,
  GIT_PAGER: program,
  PAGER: program,
  MANPAGER: program,
  SYSTEMD_PAGER: program,
  EDITOR: program,
  VISUAL: program,
  SUDO_EDITOR: program,
  FCEDIT: program,
  GIT_ASKPASS: program,
  SSH_ASKPASS: program,
  SUDO_ASKPASS: program,
  RUSTC_WRAPPER: program,
  CARGO_BUILD_RUSTC_WRAPPER: program,
  SHELL: (v) => !/^((\/usr)?\/bin\/)?(ba|da|z|k|fi|)sh$/.test(v ?? ""),
  GIT_EXTERNAL_DIFF: always,
  GIT_ALLOW_PROTOCOL: matching(/ext/),
  GIT_PROXY_COMMAND: always,
  BROWSER: always,
  RUSTC: always,
  RSYNC_CONNECT_PROG: always,
  // configuration and code that programs load
  GIT_CONFIG: always,
  GIT_CONFIG_GLOBAL: always,
  GIT_CONFIG_SYSTEM: always,
  GIT_CONFIG_PARAMETERS: always,
  GIT_CONFIG_COUNT: always,
  GIT_EXEC_PATH: always,
  GIT_TEMPLATE_DIR: always,
  GIT_DIR: always,
  GIT_COMMON_DIR: always,
  BASH_ENV: always,
  PROMPT_COMMAND: always,
  PS0: always,
  PS1: always,
  PS2: always,
  PS4: always,
  SHELLOPTS: always,
  BASHOPTS: always,
  // sh reads $ENV when interactive; ENV=production is a name, not a file
  ENV: matching(/[/.]/),
  HOME: always,
  XDG_CONFIG_HOME: always,
  ZDOTDIR: always,
  INPUTRC: always,
  GDBINIT: always,
  LD_PRELOAD: always,
  LD_AUDIT: always,
  DYLD_INSERT_LIBRARIES: always,
  LD_LIBRARY_PATH: searchPath("LD_LIBRARY_PATH"),
  DYLD_LIBRARY_PATH: searchPath("DYLD_LIBRARY_PATH"),
  DYLD_FRAMEWORK_PATH: searchPath("DYLD_FRAMEWORK_PATH"),
  PYTHONPATH: searchPath("PYTHONPATH"),
  PYTHONHOME: always,
  PYTHONUSERBASE: always,
  PYTHONSTARTUP: always,
  PYTHONBREAKPOINT: always,
  PYTHONWARNINGS: matching(/:[^:,]*\./),
  NODE_PATH: searchPath("NODE_PATH"),
  PERL5LIB: searchPath("PERL5LIB"),
  PERLLIB: searchPath("PERLLIB"),
  RUBYLIB: searchPath("RUBYLIB"),
  NODE_OPTIONS: matching(/(^|\s)(-r|--require|--import|--loader|--experimental-loader|--experimental-policy|--inspect[\w-]*|-e|--eval|-p|--print)(\s|=|$)/),
  NPM_CONFIG_SCRIPT_SHELL: always,
  NPM_CONFIG_NODE_OPTIONS: always,
  PERL5OPT: matching(/-[MmIdEe]/),
  PERL5DB: always,
  RUBYOPT: matching(/-[rIe]/),
  JAVA_TOOL_OPTIONS: matching(/-javaagent|-agentpath|-agentlib|OnError|OnOutOfMemoryError|-Djava\.library\.path/),
  _JAVA_OPTIONS: matching(/-javaagent|-agentpath|-agentlib|OnError|OnOutOfMemoryError|-Djava\.library\.path/),
  JDK_JAVA_OPTIONS: matching(/-javaagent|-agentpath|-agentlib|OnError|OnOutOfMemoryError|-Djava\.library\.path/),
  DOTNET_STARTUP_HOOKS: always,
  LESSOPEN: always,
  LESSCLOSE: always,
  LESSKEY: always,
  LESSKEYIN: always,
  LESS: matching(/[+!|]/),
  MANOPT: matching(/-P|--pager|-H|--html/),
  TAR_OPTIONS: matching(/to-command|checkpoint-action|compress-program|info-script|new-volume-script|rsh-command|-I|-F/),
  ZIPOPT: matching(/-TT|unzip-command/),
  GOFLAGS: matching(/exec/),
  RUSTFLAGS: matching(/linker|link-arg|-Z|plugin/),
  CARGO_ENCODED_RUSTFLAGS: always,
  CARGO_HOME: always,
  CARGO_BUILD_RUSTC: always,
  PATH: unsafePath,
  // make reads options and more makefiles from these
  MAKEFLAGS: matching(/eval|SHELL|(^|\s)-[a-zA-Z]*[fE]|--file|--makefile/),
  GNUMAKEFLAGS: matching(/eval|SHELL|(^|\s)-[a-zA-Z]*[fE]|--file|--makefile/),
  MFLAGS: matching(/eval|SHELL|(^|\s)-[a-zA-Z]*[fE]|--file|--makefile/),
  MAKEFILES: always,
  NPM_CONFIG_USERCONFIG: always,
  NPM_CONFIG_GLOBALCONFIG: always,
  NPM_CONFIG_PREFIX: always,
  // git writes its traces to a file named here
  GIT_TRACE: matching(/[/~.]/),
  GIT_TRACE2: matching(/[/~.]/),
  GIT_TRACE2_EVENT: matching(/[/~.]/),
  GIT_TRACE2_PERF: matching(/[/~.]/),
  GIT_TRACE_PACKET: matching(/[/~.]/),
  GIT_TRACE_PERFORMANCE: matching(/[/~.]/),
  GIT_TRACE_SETUP: matching(/[/~.]/),
  GIT_TRACE_CURL: matching(/[/~.]/)
}

// families: exported bash functions, git's numbered configuration
const PREFIXES = ["BASH_FUNC_", "GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_", "CARGO_TARGET_"]

/**
 * Why assigning `name` makes programs run code that no command line shows; undefined for ordinary
 * variables and harmless values. `value` is as written (variables unexpanded); undefined when it
 * comes from elsewhere (`read VAR`).
 */
export const opaqueVariable = (name: string, value: string | undefined): string | undefined => {
  const upper = name.toUpperCase()
  if (PREFIXES.some((p) => upper.startsWith(p))) return `${name} names code that other programs run`
  const check = Object.hasOwn(VARIABLES, upper) ? VARIABLES[upper]! : undefined
  if (check === undefined || !check(value)) return undefined
  return name === "PATH" ? "PATH puts a relative or computed directory in the command search path" : `${name} names a program or code that other programs run`
}
