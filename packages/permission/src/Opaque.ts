import { has, optionValues, parseOptions, valuesOf, type Options } from "./Options.ts"
import { gitCode } from "./GitCode.ts"
import { programInOptions } from "./ProgramOptions.ts"
import { awkRunsCode, sedRunsCode } from "./Programs.ts"

/**
 * Commands that run code their command line does not show: interpreter one-liners, options that
 * name a program to run, sandboxes (variables are in Environment.ts). Such a command is opaque:
 * asked, never allowed by a broad rule. Words are literal values (`undefined` when computed),
 * the command name first.
 */

type Words = ReadonlyArray<string | undefined>

/** Where an interpreter takes inline code: whole option words, letters of a short cluster. */
interface Inline {
  /** Option words whose value is code (`-c`, `--eval`); also attached (`-cCODE`, `--eval=CODE`). */
  readonly code: ReadonlyArray<string>
  /** Letters that make a short cluster take code (`perl -ne`). */
  readonly cluster?: string
  /** Letters that take the rest of a cluster as a value (nothing after them is a flag). */
  readonly valueLetters?: string
  /** Option words that take the next word as a value. */
  readonly values?: ReadonlyArray<string>
  /** Subcommands that take code (`deno eval`). */
  readonly subcommands?: ReadonlyArray<string>
  /** Subcommands after which options go on (`deno repl --eval`). */
  readonly through?: ReadonlyArray<string>
  readonly ignoreCase?: boolean
}

const PYTHON: Inline = { code: ["-c"], cluster: "c", valueLetters: "WXm", values: ["-W", "-X", "--check-hash-based-pycs"] }
const NODE: Inline = {
  code: ["-e", "-p", "--eval", "--print", "-pe"],
  values: ["-r", "--require", "--import", "--loader", "--experimental-loader", "--input-type", "-C", "--conditions"]
}
const PERL: Inline = { code: ["-e", "-E"], cluster: "eE", valueLetters: "iIMmdDxC0l" }
const RUBY: Inline = { code: ["-e"], cluster: "e", valueLetters: "rIiCxEFKTWUX0l", values: ["-r", "-I", "-C", "-E", "-F"] }

const INLINE: Record<string, Inline> = {
  python: PYTHON,
  python2: PYTHON,
  python3: PYTHON,
  pypy: PYTHON,
  pypy3: PYTHON,
  node: NODE,
  nodejs: NODE,
  "ts-node": NODE,
  tsx: NODE,
  bun: { code: ["-e", "--eval", "-p", "--print"] },
  deno: { code: ["--eval", "--eval-file"], subcommands: ["eval"], through: ["repl", "run"] },
  gnuplot: { code: ["-e"] },
  octave: { code: ["--eval"] },
  matlab: { code: ["-batch", "-r"] },
  dc: { code: ["-e", "--expression"] },
  mongo: { code: ["--eval"] },
  mongosh: { code: ["--eval"] },
  lftp: { code: ["-c", "-e"] },
  perl: PERL,
  ruby: RUBY,
  php: { code: ["-r", "-R", "-B", "-E", "--run", "--process-code", "--process-begin", "--process-end"], values: ["-c", "-d", "-z", "-t", "-f"] },
  lua: { code: ["-e"], values: ["-l"] },
  ipython: { code: ["-c"] },
  ipython3: { code: ["-c"] },
  luajit: { code: ["-e"], values: ["-l", "-j", "-O"] },
  Rscript: { code: ["-e", "--expr"] },
  R: { code: ["-e"] },
  osascript: { code: ["-e"] },
  julia: { code: ["-e", "-E", "--eval", "--print"] },
  elixir: { code: ["-e", "--eval"] },
  erl: { code: ["-eval", "-s", "-run"] },
  racket: { code: ["-e", "--eval"] },
  guile: { code: ["-c"] },
  groovy: { code: ["-e"] },
  scala: { code: ["-e"] },
  expect: { code: ["-c"] },
  pwsh: { code: ["-c", "-command", "-ec", "-encodedcommand", "-e"], ignoreCase: true },
  powershell: { code: ["-c", "-command", "-ec", "-encodedcommand", "-e"], ignoreCase: true }
}

/** The inline code flag an interpreter is given before its first operand, if any. */
const inlineCode = (spec: Inline, words: Words): string | undefined => {
  for (let i = 1; i < words.length; i++) {
    const raw = words[i]
    if (raw === undefined || raw === "--" || raw === "-") return undefined
    const w = spec.ignoreCase ? raw.toLowerCase() : raw
    if (!w.startsWith("-") && spec.through?.includes(w) && i === 1) continue
    if (!w.startsWith("-")) return spec.subcommands?.includes(w) ? w : undefined
    const option = w.includes("=") ? w.slice(0, w.indexOf("=")) : w
    if (spec.code.includes(option)) return option
    // attached value: `-cCODE`, `-eCODE`
    if (spec.code.some((c) => c.length === 2 && w.startsWith(c) && !w.startsWith("--"))) return w.slice(0, 2)
    if (spec.values?.includes(w)) {
      i++
      continue
    }
    if (spec.cluster && !w.startsWith("--")) {
      for (const letter of w.slice(1)) {
        if (spec.cluster.includes(letter)) return `-${letter}`
        if (spec.valueLetters?.includes(letter)) break
      }
    }
  }
  return undefined
}

const AWKS = new Set(["awk", "gawk", "mawk", "nawk"])

const AWK_OPTIONS: Options = {
  short: "fvFeEilW",
  long: ["--file", "--assign", "--field-separator", "--source", "--exec", "--include", "--load"],
  stopAtOperand: true
}

/** awk's program: `-e`/`--source` texts, or the first operand unless `-f`/`-E`/`-i` name files. */
const awkProgram = (words: Words): string | undefined => {
  const parsed = parseOptions(words, AWK_OPTIONS)
  if (has(parsed, "-l", "--load")) return "awk loads an extension library"
  const sources = valuesOf(parsed, "-e", "--source")
  if (sources.length === 0 && !has(parsed, "-f", "--file", "-E", "--exec", "-i", "--include"))
    sources.push(parsed.operands.length > 0 ? parsed.operands[0] : "")
  for (const source of sources) {
    if (source === undefined) return "awk's program is computed when it runs"
    const reason = awkRunsCode(source)
    if (reason) return reason
  }
  return undefined
}

const SED_OPTIONS: Options = { short: "efl", attached: "i", long: ["--expression", "--file", "--line-length"] }

/** sed's scripts: `-e`/`--expression` texts, or the first operand unless `-f` names a file. */
const sedScripts = (words: Words): string | undefined => {
  const parsed = parseOptions(words, SED_OPTIONS)
  const scripts = valuesOf(parsed, "-e", "--expression")
  if (scripts.length === 0 && !has(parsed, "-f", "--file")) {
    scripts.push(parsed.operands.length > 0 ? parsed.operands[0] : "")
    // BSD `sed -i '' script f`: the empty word is the suffix, the script comes next
    if (parsed.operands[0] === "" && parsed.operands.length > 1) scripts.push(parsed.operands[1])
  }
  for (const script of scripts) {
    if (script === undefined) return "the sed script is computed when it runs"
    const reason = sedRunsCode(script)
    if (reason) return reason
  }
  return undefined
}

const COMPRESSORS = new Set([
  "gzip",
  "pigz",
  "bzip2",
  "pbzip2",
  "lbzip2",
  "xz",
  "pixz",
  "zstd",
  "pzstd",
  "lz4",
  "lzip",
  "plzip",
  "lzma",
  "lzop",
  "brotli",
  "compress",
  "unzstd",
  "unxz",
  "gunzip"
])

/** A compressor program as tar and others take it: a known compressor and its options, nothing else. */
const plainCompressor = (value: string | undefined) => {
  if (value === undefined) return false
  const [program, ...options] = value.trim().split(/\s+/)
  return program !== undefined && COMPRESSORS.has(program) && options.every((o) => /^-[A-Za-z0-9=-]*$/.test(o))
}

const TAR_OPTIONS: Options = {
  short: "bCfFgHIKLNTVX",
  long: ["--to-command", "--info-script", "--new-volume-script", "--rsh-command", "--use-compress-program", "--checkpoint-action", "--file", "--directory"]
}

const tarCode = (words: Words): string | undefined => {
  const parsed = parseOptions(words, TAR_OPTIONS)
  if (has(parsed, "--to-command", "--info-script", "--new-volume-script", "-F", "--rsh-command")) return "tar runs a command given in its options"
  if (valuesOf(parsed, "--checkpoint-action").some((v) => v === undefined || /exec/.test(v))) return "tar runs a command at checkpoints"
  if (!valuesOf(parsed, "--use-compress-program", "-I").every(plainCompressor)) return "tar runs a compression program given in its options"
  return undefined
}

// ssh options whose value runs a local command or loads a library
const SSH_CODE_OPTIONS = /^(proxycommand|localcommand|remotecommand|knownhostscommand|pkcs11provider|securitykeyprovider)$/i

const SSH_LIKE: Record<string, Options> = {
  ssh: { short: "BbcDEeFIiJLlmOoPpQRSWw" },
  scp: { short: "cDFiJloPSX" },
  sftp: { short: "BbcDFiJloPRS" }
}

/** ssh/scp/sftp `-o Name=value` (or `-oName value`, `-vo …`) that runs a command; `-I`/`-S`/`-D` programs. */
const sshCode = (words: Words, name: string): string | undefined => {
  const parsed = parseOptions(words, SSH_LIKE[name] ?? SSH_LIKE.ssh!)
  for (const value of valuesOf(parsed, "-o")) {
    if (value === undefined) return `${name} -o sets an option computed when it runs`
    const option = value.trim().split(/[\s=]/)[0] ?? ""
    if (SSH_CODE_OPTIONS.test(option)) return `${name} -o ${option} runs a command`
  }
  // a configuration file may set ProxyCommand or LocalCommand
  if (valuesOf(parsed, "-F").some((v) => v !== "/dev/null" && v !== "none")) return `${name} -F reads a configuration file that may run commands`
  if (name === "ssh" && has(parsed, "-I")) return "ssh -I loads a library"
  if ((name === "scp" || name === "sftp") && has(parsed, "-S")) return `${name} -S runs another program as ssh`
  if (name === "sftp" && has(parsed, "-D")) return "sftp -D runs a local program"
  return undefined
}

/** A remote shell given as text (`ssh -p 2222`, `ssh -i key`): ssh with options that run nothing else. */
export const plainSsh = (value: string | undefined) => {
  const [program, ...rest] = value?.trim().split(/\s+/) ?? []
  return (program === "ssh" || program === "/usr/bin/ssh") && sshCode(["ssh", ...rest], "ssh") === undefined && rest.every((w) => /^[\w@.:=/~+-]+$/.test(w))
}

const RSYNC_OPTIONS: Options = { short: "eBfMT", long: ["--rsh", "--rsync-path", "--filter", "--exclude", "--include", "--files-from", "--block-size"] }

const rsyncCode = (words: Words): string | undefined => {
  const parsed = parseOptions(words, RSYNC_OPTIONS)
  if (parsed.options.some((o) => o.name === "--remove-source-files" || o.name.startsWith("--delete") || o.name === "--del"))
    return "rsync removes files (--delete, --remove-source-files)"
  for (const value of valuesOf(parsed, "-e", "--rsh")) if (!plainSsh(value)) return "rsync runs the remote shell given in its options"
  if (!valuesOf(parsed, "--rsync-path").every((v) => v !== undefined && /^(sudo )?(\/[\w/.-]*\/)?rsync$/.test(v.trim())))
    return "rsync runs the command given by --rsync-path"
  return undefined
}

const VIMS = new Set(["vim", "vi", "nvim", "view", "vimdiff", "nvimdiff", "ex", "gvim", "rvim", "evim", "gview"])

/** vim: `-c cmd`, `--cmd cmd`, `+cmd` (not `+N` or `+/pattern`), `-S file`, `-s scriptin`, `-u file`. */
const vimCode = (words: Words, fed: boolean): string | undefined => {
  for (let i = 1; i < words.length; i++) {
    const w = words[i]
    if (w === undefined) continue
    if (w === "--") break
    if (w === "-c" || w === "--cmd" || w === "-S" || w === "-s" || w === "-w" || w === "-W") return `${words[0]} ${w} runs editor commands`
    if ((w === "-u" || w === "-U") && !["NONE", "NORC", "DEFAULTS"].includes(words[i + 1] ?? "")) return `${words[0]} ${w} loads editor commands from a file`
    if (w.startsWith("+") && !/^\+([0-9]*|\/.*|\?.*)$/.test(w)) return `${words[0]} ${w} runs an editor command`
    if (fed && /^-[a-zA-Z]*[eE]/.test(w)) return `${words[0]} runs editor commands from stdin`
  }
  return fed && words[0] === "ex" ? "ex runs editor commands from stdin" : undefined
}

// make variables that name a program its recipes run (`make CC='sh -c …'`)
const MAKE_PROGRAM =
  /^(CC|CXX|CPP|LD|AR|AS|FC|RANLIB|STRIP|NM|OBJCOPY|INSTALL|MAKE|RM|CP|MV|LN|MKDIR|ECHO|SED|AWK|PYTHON|PERL|YACC|LEX|[A-Z_]*(CMD|COMMAND|PROG|TOOL|WRAPPER|RUNNER))$/

const makeCode = (words: Words): string | undefined => {
  if (optionValues(words, ["--eval", "-E"]).length > 0) return "make runs recipes given in its options"
  for (const w of words.slice(1)) {
    const eq = w?.indexOf("=") ?? -1
    if (w === undefined || eq <= 0) continue
    const name = w.slice(0, eq).replace(/[+:?]$/, "")
    if (name === "SHELL" || name === ".SHELLFLAGS") return `make ${name}= changes the shell its recipes run in`
    if (MAKE_PROGRAM.test(name) && !/^[\w.+-]+$/.test(w.slice(eq + 1))) return `make ${name}= names a program its recipes run`
  }
  return undefined
}

/**
 * sqlite3: dot-commands that run programs, load code or name files (`.shell`, `.output`, `.read`,
 * `.open`, `ATTACH`), `-cmd`/`-init`, and commands read from stdin.
 */
const sqliteCode = (w: Words, fed: boolean): string | undefined => {
  if (fed) return "sqlite3 reads dot-commands (which can run programs) from stdin"
  if (optionValues(w, ["-cmd", "-init"]).length > 0) return "sqlite3 runs commands given in its options"
  if (
    w.some(
      (x) =>
        x === undefined ||
        /(^|;)\s*\.(sh|shell|system|load|output|once|import|read|open|backup|save|restore|clone|log|excel|cd)\b|\battach\b|\bvacuum\s+into\b|\bload_extension\b|\bwritefile\b|\breadfile\b|\bfsdir\b|\bedit\s*\(/i.test(
          x
        )
    )
  )
    return "sqlite3 runs a command, loads code or names a file in its words"
  return undefined
}

/** mysql/mariadb: `system`, `\!`, `source`, files in SQL, and commands from stdin. */
const mysqlCode = (w: Words, fed: boolean): string | undefined => {
  if (fed) return `${w[0]} reads commands (which can run programs) from stdin`
  const code = optionValues(w, ["-e", "--execute", "--init-command"])
  if (code.some((v) => v === undefined || /\bsystem\b|\\!|\\\.|\bsource\b|\btee\b|\bpager\b|\binto\s+(out|dump)file\b|\bload_file\b|\bload\s+data\b/i.test(v)))
    return `${w[0]} -e runs a command or touches a file`
  return undefined
}

/** Maven: the exec plugin runs the program its properties name. */
const mavenCode = (w: Words): string | undefined =>
  w.some((x) => x === undefined || /^(exec:|org\.codehaus\.mojo:exec-maven-plugin)|^-Dexec\.(executable|args)/.test(x))
    ? "maven's exec plugin runs the program given in its words"
    : undefined

// python modules that run code given in their arguments
const PYTHON_CODE_MODULES = /^(timeit|pdb|IPython|cProfile|profile|trace)$/

/** `python -m timeit 'code'`, `-m pdb -c '!…'`: the module runs code from its words. */
const pythonModule = (words: Words): string | undefined => {
  const at = words.indexOf("-m")
  const module = at === -1 ? undefined : words[at + 1]
  if (at === -1 || !(module === undefined || PYTHON_CODE_MODULES.test(module))) return undefined
  return words.length > at + 2 && !words.slice(at + 2).every((w) => w === "-h" || w === "--help")
    ? `python -m ${module ?? "…"} runs code given in its words`
    : undefined
}

/** `perl -M'Mod;system(…)'`: a -M/-m value is pasted into a `use` statement. */
const perlModule = (words: Words): string | undefined =>
  words.some((w) => w !== undefined && /^-[mM]/.test(w) && !/^-[mM]-?[\w:]*(=[\w:,.-]*)?$/.test(w)) ? "perl -M pastes code into a use statement" : undefined

/** `hg --config k=v`, `svn --config-option …`, `--editor-cmd`: settings that name programs. */
const vcsCode = (words: Words): string | undefined => {
  for (let i = 1; i < words.length; i++) {
    const w = words[i]
    if (w === undefined) continue
    const value =
      w === "--config" || w === "--config-option"
        ? words[i + 1]
        : w.startsWith("--config=") || w.startsWith("--config-option=")
          ? w.slice(w.indexOf("=") + 1)
          : undefined
    if ((w === "--config" || w === "--config-option") && value === undefined) return `${words[0]} ${w} sets configuration computed when it runs`
    if (
      value !== undefined &&
      /(^|[.:])(alias|hooks|extensions|pager|merge-tools|extdiff)\.|ui\.(editor|merge|ssh|remotecmd)|editor|-cmd|merge-tool|ssh|diff-cmd|diff3-cmd/i.test(value)
    )
      return `${words[0]} ${w} sets a command to run`
    if (/^--(editor-cmd|diff-cmd|diff3-cmd)(=|$)/.test(w) || (words[0] === "cvs" && w === "-e")) return `${words[0]} ${w} runs the program given`
  }
  return undefined
}

/** LaTeX engines: `--shell-escape` lets a document run commands. */
const texCode = (words: Words): string | undefined =>
  words.some((w) => w === undefined || /^--?(shell-escape|enable-write18)$/.test(w)) ? `${words[0]} lets the document run commands (shell escape)` : undefined

/** ImageMagick: `|cmd` names, `msl:` scripts, `ephemeral:` (deletes its input). */
const magickCode = (words: Words): string | undefined =>
  words.slice(1).some((w) => w === undefined || /^(\||msl:|ephemeral:)/i.test(w))
    ? `${words[0]} runs a command, a script or deletes a file named in its words`
    : undefined

/** Package managers' persistent configuration: script shells, node options, user config files. */
const packageConfig = (words: Words): string | undefined =>
  (words[1] === "config" && (words[2] === "set" || words[2] === "edit")) || words[1] === "set"
    ? `${words[0]} config set changes configuration that later commands run with`
    : undefined

/** Per command: why it runs code its words do not show. */
const COMMANDS: Record<string, (words: Words, fed: boolean) => string | undefined> = {
  git: gitCode,
  tar: tarCode,
  gtar: tarCode,
  bsdtar: tarCode,
  rsync: rsyncCode,
  ssh: (w) => sshCode(w, "ssh"),
  scp: (w) => sshCode(w, "scp"),
  sed: sedScripts,
  gsed: sedScripts,
  find: (w) => {
    if (w.includes("-delete")) return "find -delete removes files"
    const writes = w.find((x) => x === "-fprint" || x === "-fprint0" || x === "-fprintf" || x === "-fls")
    return writes ? `find ${writes} writes a file` : undefined
  },
  gdb: (w, fed) =>
    w.some((x) => x !== undefined && /^--?(ex|iex|x|ix|eval-command|init-eval-command|command|init-command)(=|$)/.test(x))
      ? "gdb runs debugger commands given in its options"
      : fed
        ? "gdb reads debugger commands from stdin"
        : undefined,
  lldb: (w, fed) =>
    w.some((x) => x !== undefined && /^(-o|-O|-s|-S|-k|-K|--one-line.*|--source.*)$/.test(x)) || fed
      ? "lldb runs debugger commands given in its options or stdin"
      : undefined,
  ed: (_, fed) => (fed ? "ed reads editor commands (which may run commands) from stdin" : undefined),
  emacs: (w) => (w.some((x) => x !== undefined && /^--?(eval|load|funcall|script|l|f|x)(=|$)/.test(x)) ? "emacs runs Lisp given in its options" : undefined),
  less: (w) => (w.some((x) => x !== undefined && /^\+.*[!|]/.test(x)) ? "less runs a command given in its options" : undefined),
  more: (w) => (w.some((x) => x !== undefined && /^\+.*[!|]/.test(x)) ? "more runs a command given in its options" : undefined),
  man: (w) =>
    has(parseOptions(w, { short: "CPeELmMpRSr", attached: "H", long: ["--pager", "--config-file"] }), "-P", "--pager", "-H", "--html", "-C", "--config-file")
      ? "man runs the program given in its options"
      : undefined,
  zip: (w) => (optionValues(w, ["-TT", "--unzip-command"]).length > 0 ? "zip runs the test command given in its options" : undefined),
  npx: (w) => (optionValues(w, ["--script-shell"]).length > 0 ? "npx runs scripts with the shell given in its options" : undefined),
  npm: (w) =>
    packageConfig(w) ??
    (optionValues(w, ["--script-shell", "--node-options", "--userconfig", "--globalconfig"]).length > 0
      ? "npm runs scripts with the shell given in its options"
      : (w[1] === "exec" || w[1] === "x") && optionValues(w, ["-c", "--call"]).length > 0
        ? "npm exec -c runs shell code"
        : undefined),
  cargo: (w) => (optionValues(w, ["--config"]).length > 0 ? "cargo --config can name a runner, a linker or a wrapper" : undefined),
  go: (w) =>
    optionValues(w, ["-toolexec", "--toolexec", "-exec", "--exec", "-vettool", "--vettool"]).length > 0
      ? "go runs the program given in its options"
      : undefined,
  enable: (w) => (w.some((x) => x === undefined || /^-[a-z]*f/.test(x)) ? "enable -f loads a builtin from a library" : undefined),
  hash: (w) => (w.some((x) => x === undefined || /^-[a-z]*p/.test(x)) ? "hash -p makes a name run another file" : undefined),
  make: makeCode,
  gmake: makeCode,
  tmux: (w) =>
    w.some(
      (x) =>
        x !== undefined &&
        /^(new|new-session|new-window|neww|split-window|splitw|send-keys|send|run-shell|run|respawn-pane|respawnp|respawn-window|pipe-pane|pipep|if-shell|if|display-popup|popup|source-file|source)$/.test(
          x
        )
    )
      ? "tmux runs a command in a terminal"
      : undefined,
  screen: (w) =>
    w.length > 1 && !w.slice(1).every((x) => x !== undefined && /^-(ls|list|r|R|x|d|D|S|wipe|v|version)$/.test(x))
      ? "screen runs a command in a terminal"
      : undefined,
  sqlite3: sqliteCode,
  psql: (w, fed) => {
    if (fed) return "psql reads commands (which can run programs) from stdin"
    const parsed = parseOptions(w, {
      short: "cfdhpUvoLTFPRW",
      long: ["--command", "--file", "--dbname", "--host", "--port", "--username", "--set", "--variable", "--output", "--log-file"]
    })
    if (valuesOf(parsed, "-c", "--command").some((v) => v === undefined || /\\(!|o|g|w|i|ir|copy|lo_|setenv)|\bprogram\b/i.test(v)))
      return "psql -c runs a meta-command that runs a program or touches a file"
    if (has(parsed, "-f", "--file", "-o", "--output", "-L", "--log-file")) return "psql runs or writes a file given in its options"
    return undefined
  },
  mysql: mysqlCode,
  mariadb: mysqlCode,
  unlink: () => "unlink removes a file",
  hg: vcsCode,
  svn: vcsCode,
  cvs: vcsCode,
  pdflatex: texCode,
  xelatex: texCode,
  lualatex: texCode,
  latex: texCode,
  tex: texCode,
  pdftex: texCode,
  luatex: texCode,
  etex: texCode,
  latexmk: (w) =>
    w.some(
      (x) =>
        x === undefined ||
        /^-(e|r|(pdf|xe|lua|dvi|ps)?latex=?|pdflatex.*|bibtex=.*|biber=.*|makeindex=.*|dvipdf=.*|ps2pdf=.*|pdf_previewer=.*|.*viewer=.*)$/.test(x)
    )
      ? "latexmk runs Perl or a program given in its options"
      : undefined,
  groff: (w) => (w.includes("-U") ? "groff -U lets the document run commands" : undefined),
  troff: (w) => (w.includes("-U") ? "troff -U lets the document run commands" : undefined),
  gs: (w) =>
    w.some((x) => x === undefined || /%pipe%|^-sOutputFile=\||^-dNOSAFER$|^-dDELAYSAFER$/.test(x))
      ? "ghostscript runs a command or unsafe PostScript"
      : undefined,
  ghostscript: (w) =>
    w.some((x) => x === undefined || /%pipe%|^-sOutputFile=\||^-dNOSAFER$|^-dDELAYSAFER$/.test(x))
      ? "ghostscript runs a command or unsafe PostScript"
      : undefined,
  convert: magickCode,
  magick: magickCode,
  mogrify: magickCode,
  identify: magickCode,
  composite: magickCode,
  montage: magickCode,
  just: (w) =>
    w.some((x) => x === undefined || /^(-c|--command|--shell-command)$/.test(x)) ||
    optionValues(w, ["--shell"]).some((v) => v === undefined || !/^((\/usr)?\/bin\/)?(ba|z|da)?sh$/.test(v))
      ? "just runs a command or a shell given in its options"
      : undefined,
  cmake: (w) => {
    const at = w.indexOf("-E")
    const tool = at === -1 ? undefined : w[at + 1]
    return at !== -1 && (tool === undefined || /^(rm|remove|remove_directory)$/.test(tool)) ? "cmake -E removes files" : undefined
  },
  sftp: (w, fed) => (fed ? "sftp reads commands (with ! shell escapes) from stdin" : sshCode(w, "sftp")),
  ftp: (_, fed) => (fed ? "ftp reads commands (with ! shell escapes) from stdin" : undefined),
  yarn: packageConfig,
  pnpm: packageConfig,
  perl: perlModule,
  php: (w) => (w.some((x) => x !== undefined && /auto_(prepend|append)_file/.test(x)) ? "php -d auto_prepend_file runs another file" : undefined),
  python: pythonModule,
  python3: pythonModule,
  python2: pythonModule,
  pypy3: pythonModule,
  fc: (w) => (w.some((x) => x === "-l") ? undefined : "fc runs commands from the history"),
  shred: () => "shred destroys a file's contents",
  mvn: mavenCode,
  mvnw: mavenCode,
  at: () => "at schedules shell code to run later",
  batch: () => "batch schedules shell code to run later",
  crontab: (w) => (w.some((x) => x === "-l") ? undefined : "crontab installs shell code that runs later")
}

const LOADERS = /^ld(-linux[\w.-]*)?\.so(\.\d+)?$|^ld-musl[\w.-]*\.so(\.\d+)?$/

/** Namespace and sandbox runners: paths inside them are not the paths the scan sees. */
const SANDBOXES = new Set([
  "nsenter",
  "unshare",
  "systemd-run",
  "firejail",
  "bwrap",
  "proot",
  "toybox",
  "chroot",
  "systemd-nspawn",
  "lxc-attach",
  "lxc-execute"
])

/** Why a simple command runs code its text does not show (a one-liner, an option, a sandbox); else undefined. */
export const opaqueUse = (name: string, words: Words, fed: boolean): string | undefined => {
  if (SANDBOXES.has(name)) return `${name} runs a command in another namespace or root`
  if (LOADERS.test(name)) return `${name} runs a program by hand`
  if (AWKS.has(name)) return awkProgram(words)
  if (VIMS.has(name)) return vimCode(words, fed)
  if (Object.hasOwn(INLINE, name)) {
    const flag = inlineCode(INLINE[name]!, words)
    if (flag !== undefined) return `${name} ${flag} runs inline code`
    // `deno run 'data:…'`, `node --import 'data:…'`: the program is in the URL; or on a server
    if (words.some((w) => w !== undefined && /^data:/i.test(w.slice(w.indexOf("=") + 1)))) return `${name} runs code from a data: URL`
    if (words.some((w) => w !== undefined && /^https?:\/\//i.test(w.slice(w.indexOf("=") + 1)))) return `${name} runs code from a URL`
  }
  return Object.hasOwn(COMMANDS, name) ? COMMANDS[name]!(words, fed) : programInOptions(name, words)
}
