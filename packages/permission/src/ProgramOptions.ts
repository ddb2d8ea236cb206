import { optionValues } from "./Options.ts"

/**
 * Options of common tools that name a program for the tool to run (`gcc -wrapper`,
 * `wget --use-askpass`, `sort --compress-program`, `split --filter`): the command runs code its
 * words do not show. Words are literal values (`undefined` when computed), the name first.
 */

type Words = ReadonlyArray<string | undefined>

// gcc, g++, cc, c++, clang, clang++, and versioned or cross names (gcc-12, x86_64-linux-gnu-gcc)
const COMPILERS = /^([\w.-]+-)?(gcc|g\+\+|cc|c\+\+|clang|clang\+\+)(-[\d.]+)?$/

/** `-wrapper prog,args`, `-B dir` (cc1, as, ld from there), plugins, spec files, a linker path. */
const compilerCode = (w: Words): string | undefined => {
  for (let i = 1; i < w.length; i++) {
    const x = w[i]
    if (x === undefined) continue
    if (x === "-wrapper" || x.startsWith("-wrapper=") || x.startsWith("--wrapper")) return `${w[0]} -wrapper runs the program given in its options`
    if (/^-B|^--prefix(=|$)/.test(x)) return `${w[0]} -B runs the compiler's programs from the directory given in its options`
    if (/^-(fplugin|specs|-specs|-ld-path|fpass-plugin|load|Xclang)(=|$)/.test(x))
      return `${w[0]} ${x.split("=")[0]} loads or runs a program given in its options`
    if (/^-fuse-ld=.*\//.test(x)) return `${w[0]} -fuse-ld runs the linker given in its options`
  }
  return undefined
}

/** `wget --use-askpass=prog`, `-e use_askpass=prog`, a startup file (`--config`) that may set it. */
const wgetCode = (w: Words): string | undefined => {
  if (longGiven(w, ["--use-askpass", "--config"])) return "wget runs the program or reads the startup file given in its options"
  return optionValues(w, ["-e", "--execute"]).some((v) => v === undefined || /askpass/i.test(v)) ? "wget -e runs the askpass program it sets" : undefined
}

/** True when a long option (`--name`, `--name=v`) or an abbreviation of it that getopt accepts (`--compress-p=v`) is given. */
const longGiven = (w: Words, names: ReadonlyArray<string>) =>
  w.some((x, i) => {
    if (i === 0 || x === undefined || !x.startsWith("--")) return false
    const option = x.split("=")[0]!
    return option.length >= 5 && names.some((n) => n.startsWith(option))
  })

/** `--name=prog` / `--name prog` options that run a program. */
const programOption =
  (names: ReadonlyArray<string>, what: string) =>
  (w: Words): string | undefined =>
    longGiven(w, names) ? `${w[0]} ${what}` : undefined

// apt's hooks: `-o APT::Update::Pre-Invoke::=cmd`, `-o DPkg::Post-Invoke=…`, `-c file`
const aptCode = (w: Words): string | undefined =>
  optionValues(w, ["-o", "--option"]).some((v) => v === undefined || /invoke|pkgs|::(exec|command|path)|diff::|tool/i.test(v)) ||
  optionValues(w, ["-c", "--config-file"]).length > 0
    ? `${w[0]} runs hook commands set in its options`
    : undefined

/** Short options (`-D lib.so`, `-Dlib.so`) that load a library or run a program. */
const shortOption =
  (letters: ReadonlyArray<string>, what: string) =>
  (w: Words): string | undefined =>
    optionValues(w, letters).length > 0 ? `${w[0]} ${what}` : undefined

// openssl: `engine ID|path`, `-engine`, `-provider`, `-provider-path` load a library
const opensslCode = (w: Words): string | undefined =>
  w[1] === "engine" || w.some((x) => x === undefined || /^-(engine|provider|provider-path|keyform\s*engine)(=|$)/.test(x))
    ? "openssl loads an engine or provider library"
    : undefined

const PROGRAM_OPTIONS: Record<string, (w: Words) => string | undefined> = {
  wget: wgetCode,
  sort: programOption(["--compress-program"], "runs the compression program given in its options"),
  split: programOption(["--filter"], "--filter runs shell code for each piece"),
  sdiff: programOption(["--diff-program"], "runs the diff program given in its options"),
  diff3: programOption(["--diff-program"], "runs the diff program given in its options"),
  install: programOption(["--strip-program"], "runs the strip program given in its options"),
  cpio: programOption(["--rsh-command"], "runs the remote shell given in its options"),
  "apt-get": aptCode,
  apt: aptCode,
  aptitude: aptCode,
  "ssh-keygen": shortOption(["-D", "-w"], "loads the PKCS#11 or security-key library given in its options"),
  "ssh-add": shortOption(["-s", "-S", "-e"], "loads the PKCS#11 or security-key library given in its options"),
  openssl: opensslCode,
  gpg: programOption(["--photo-viewer", "--exec-path"], "runs the viewer or helper programs given in its options"),
  gpg2: programOption(["--photo-viewer", "--exec-path"], "runs the viewer or helper programs given in its options")
}

/** Why a command runs a program named in its options; undefined when none does. */
export const programInOptions = (name: string, words: Words): string | undefined => {
  if (COMPILERS.test(name)) return compilerCode(words)
  return Object.hasOwn(PROGRAM_OPTIONS, name) ? PROGRAM_OPTIONS[name]!(words) : undefined
}
