import { type Options, optionValues, parseOptions, type Parsed, valuesOf, has } from "./Options.ts"
import { sedRunsCode } from "./Programs.ts"

/**
 * Commands that read the contents of files named in their words (`cat .env`, `grep x .env`,
 * `cp .env /tmp`, `tar czf a.tgz .env`): which words those are. The bash scan turns each into a
 * `read` request judged by the read rules, as the read tool's request for that path would be.
 * Words are literal values, the command name first; a computed word is a placeholder that does
 * not start with `-` (an operand), so a computed option is read as a file too (the safe side).
 * Where an option's arity is not known it is read as a flag: its value may then count as a
 * file (one more read, never one less).
 */

type Words = ReadonlyArray<string | undefined>

interface Spec {
  readonly options: Options
  /** Operands before the files: grep's pattern, sed's script, awk's program, jq's filter, zip's archive. */
  readonly lead?: number
  /** Options that give the lead instead (grep -e/-f, sed -e/-f, awk -f): then every operand is a file. */
  readonly leadGivenBy?: ReadonlyArray<string>
  /** Options whose values are files read (grep -f, awk -f, file -m, sort --files0-from). */
  readonly files?: ReadonlyArray<string>
  /** Which operands are read: all (default), the first n (uniq IN OUT, cmp A B SKIP), all but the last (cp a b dest). */
  readonly operands?: "all" | number | "sources"
  /** Options naming the destination (cp -t dir): then every operand is a source. */
  readonly target?: ReadonlyArray<string>
  /** Options that make the command read nothing (install -d, ln's or cp's --help). */
  readonly none?: ReadonlyArray<string>
}

const plain: Spec = { options: { short: "" } }
const sums: Spec = { options: { short: "" }, none: ["-c", "--check"] }
const GREP: Spec = {
  options: {
    short: "efABCDdm",
    long: [
      "--regexp",
      "--file",
      "--after-context",
      "--before-context",
      "--context",
      "--devices",
      "--directories",
      "--max-count",
      "--include",
      "--exclude",
      "--exclude-from",
      "--exclude-dir",
      "--label",
      "--binary-files",
      "--group-separator"
    ]
  },
  lead: 1,
  leadGivenBy: ["-e", "-f", "--regexp", "--file"],
  files: ["-f", "--file", "--exclude-from"]
}
const SED: Spec = {
  options: { short: "efl", attached: "i", long: ["--expression", "--file", "--line-length"] },
  lead: 1,
  leadGivenBy: ["-e", "-f", "--expression", "--file"],
  files: ["-f", "--file"]
}
const AWK: Spec = {
  options: { short: "fvFeEilW", long: ["--file", "--assign", "--field-separator", "--source", "--exec", "--include", "--load"], stopAtOperand: true },
  lead: 1,
  leadGivenBy: ["-f", "--file", "-e", "--source", "-E", "--exec"],
  files: ["-f", "--file", "-E", "--exec", "-i", "--include"]
}
const RG: Spec = {
  options: {
    short: "efABCEgjMmTtrd",
    long: [
      "--regexp",
      "--file",
      "--glob",
      "--iglob",
      "--type",
      "--type-not",
      "--type-add",
      "--max-count",
      "--replace",
      "--encoding",
      "--max-columns",
      "--threads",
      "--context",
      "--after-context",
      "--before-context",
      "--pre",
      "--pre-glob",
      "--ignore-file",
      "--max-depth",
      "--max-filesize",
      "--path-separator",
      "--sort",
      "--sortr",
      "--colors",
      "--engine",
      "--context-separator"
    ]
  },
  lead: 1,
  leadGivenBy: ["-e", "-f", "--regexp", "--file"],
  files: ["-f", "--file", "--ignore-file"]
}
const COPY: Spec = {
  options: { short: "tS", long: ["--target-directory", "--suffix"] },
  operands: "sources",
  target: ["-t", "--target-directory"]
}
const COMPRESS: Spec = { options: { short: "S", long: ["--suffix"] } }
// C compilers and the preprocessor read every source operand (errors quote its lines); `-include f` too
const CC: Spec = { options: { short: "oIDUxLlB", long: ["--param"] } }
const TABS: Spec = { options: { short: "t", long: ["--tabs"] } }

const SPECS: Record<string, Spec> = {
  cat: plain,
  tac: { options: { short: "s", long: ["--separator"] } },
  head: { options: { short: "nc", long: ["--lines", "--bytes"] } },
  tail: { options: { short: "ncs", long: ["--lines", "--bytes", "--pid", "--sleep-interval", "--max-unchanged-stats"] } },
  less: { options: { short: "bhjkoOpPtTxyz", long: ["--log-file", "--LOG-FILE", "--pattern", "--prompt", "--tag", "--tag-file"] } },
  more: { options: { short: "n", long: ["--lines"] } },
  most: plain,
  bat: { options: { short: "lmHr", long: ["--language", "--map-syntax", "--highlight-line", "--line-range", "--theme", "--style", "--tabs", "--wrap"] } },
  batcat: { options: { short: "lmHr", long: ["--language", "--map-syntax", "--highlight-line", "--line-range", "--theme", "--style", "--tabs", "--wrap"] } },
  nl: { options: { short: "bdfhilnsvw" } },
  od: { options: { short: "AjNSt", attached: "w", long: ["--address-radix", "--skip-bytes", "--read-bytes", "--strings", "--format"] } },
  xxd: { options: { short: "cglosn" }, operands: 1 },
  hexdump: { options: { short: "efns" }, files: ["-f"] },
  hd: { options: { short: "efns" }, files: ["-f"] },
  strings: { options: { short: "nteT", long: ["--bytes", "--radix", "--encoding", "--target"] } },
  base64: { options: { short: "w", long: ["--wrap"] } },
  base32: { options: { short: "w", long: ["--wrap"] } },
  basenc: { options: { short: "w", long: ["--wrap"] } },
  sort: {
    options: {
      short: "ktoST",
      long: [
        "--key",
        "--field-separator",
        "--output",
        "--buffer-size",
        "--temporary-directory",
        "--files0-from",
        "--random-source",
        "--batch-size",
        "--parallel",
        "--compress-program",
        "--sort"
      ]
    },
    files: ["--files0-from", "--random-source"]
  },
  uniq: { options: { short: "fsw", long: ["--skip-fields", "--skip-chars", "--check-chars", "--all-repeated", "--group"] }, operands: 1 },
  wc: { options: { short: "", long: ["--files0-from"] }, files: ["--files0-from"] },
  cut: { options: { short: "bcdf", long: ["--bytes", "--characters", "--delimiter", "--fields", "--output-delimiter"] } },
  paste: { options: { short: "d", long: ["--delimiters"] } },
  fold: { options: { short: "w", long: ["--width"] } },
  fmt: { options: { short: "wgp", long: ["--width", "--goal", "--prefix"] } },
  column: { options: { short: "cso", long: ["--columns", "--separator", "--output-separator", "--table-columns", "--table-name"] } },
  rev: plain,
  join: { options: { short: "12aejotv" } },
  iconv: { options: { short: "fto", long: ["--from-code", "--to-code", "--output"] } },
  grep: GREP,
  egrep: GREP,
  fgrep: GREP,
  rg: RG,
  sed: SED,
  gsed: SED,
  ag: { ...RG, options: { ...RG.options, short: "ABCGgmpW" } },
  awk: AWK,
  gawk: AWK,
  mawk: AWK,
  nawk: AWK,
  diff: {
    options: {
      short: "CUFILSWxXD",
      long: [
        "--label",
        "--ignore-matching-lines",
        "--show-function-line",
        "--width",
        "--exclude",
        "--exclude-from",
        "--starting-file",
        "--ifdef",
        "--from-file",
        "--to-file"
      ]
    },
    files: ["-X", "--exclude-from", "--from-file", "--to-file"]
  },
  diff3: { options: { short: "L", long: ["--label", "--diff-program"] } },
  sdiff: { options: { short: "ow", long: ["--output", "--width", "--diff-program"] } },
  cmp: { options: { short: "in", long: ["--ignore-initial", "--bytes"] }, operands: 2 },
  comm: { options: { short: "", long: ["--output-delimiter"] } },
  cp: COPY,
  mv: COPY,
  ln: COPY,
  install: { ...COPY, options: { short: "gmotS", long: ["--group", "--mode", "--owner", "--target-directory", "--suffix"] }, none: ["-d", "--directory"] },
  scp: { options: { short: "cDFiJloPSX" }, operands: "sources", files: ["-i", "-F"] },
  rsync: {
    options: {
      short: "eBfMT",
      long: ["--rsh", "--rsync-path", "--filter", "--exclude", "--include", "--files-from", "--block-size", "--exclude-from", "--include-from"]
    },
    operands: "sources",
    files: ["--files-from", "--exclude-from", "--include-from"]
  },
  md5sum: sums,
  sha1sum: sums,
  sha224sum: sums,
  sha256sum: sums,
  sha384sum: sums,
  sha512sum: sums,
  b2sum: { options: { short: "l", long: ["--length"] }, none: ["-c", "--check"] },
  shasum: { options: { short: "a", long: ["--algorithm"] }, none: ["-c", "--check"] },
  cksum: { options: { short: "al", long: ["--algorithm", "--length"] }, none: ["-c", "--check"] },
  sum: plain,
  file: {
    options: { short: "mfFeP", long: ["--magic-file", "--files-from", "--separator", "--exclude", "--parameter"] },
    files: ["-m", "--magic-file", "-f", "--files-from"]
  },
  gzip: COMPRESS,
  gunzip: COMPRESS,
  zcat: COMPRESS,
  bzip2: plain,
  bunzip2: plain,
  bzcat: plain,
  xz: { options: { short: "CFMT", long: ["--check", "--format", "--memlimit", "--threads", "--suffix"] } },
  unxz: { options: { short: "CFMT", long: ["--check", "--format", "--memlimit", "--threads", "--suffix"] } },
  xzcat: { options: { short: "CFMT", long: ["--check", "--format", "--memlimit", "--threads", "--suffix"] } },
  zstd: { options: { short: "oD", long: ["--output-dir-flat", "--output-dir-mirror"] }, files: ["-D"] },
  zstdcat: { options: { short: "D" }, files: ["-D"] },
  look: { options: { short: "t", long: ["--terminate"] }, lead: 1 },
  shuf: {
    options: { short: "nio", long: ["--head-count", "--input-range", "--output", "--random-source"] },
    files: ["--random-source"],
    none: ["-e", "--echo", "-i", "--input-range"]
  },
  pr: {
    options: { short: "hlowNW", attached: "eiSsn", long: ["--header", "--length", "--indent", "--width", "--page-width", "--first-line-number", "--columns"] }
  },
  expand: TABS,
  unexpand: TABS,
  tsort: plain,
  cpp: CC,
  gcc: CC,
  "g++": CC,
  cc: CC,
  "c++": CC,
  clang: CC,
  "clang++": CC,
  tcc: CC,
  csplit: { options: { short: "bfn", long: ["--suffix-format", "--prefix", "--digits"] }, operands: 1 },
  split: {
    options: { short: "abClnt", long: ["--suffix-length", "--additional-suffix", "--bytes", "--line-bytes", "--lines", "--number", "--separator", "--filter"] },
    operands: 1
  }
}

/** True when {@link readWords} may find words for `name`. */
export const readsFiles = (name: string) => Object.hasOwn(SPECS, name) || Object.hasOwn(SPECIAL, name) || name === "source" || name === "."

const operandsOf = (spec: Spec, parsed: Parsed): ReadonlyArray<string | undefined> => {
  const given = spec.leadGivenBy !== undefined && has(parsed, ...spec.leadGivenBy)
  const rest = parsed.operands.slice(given ? 0 : (spec.lead ?? 0))
  if (typeof spec.operands === "number") return rest.slice(0, spec.operands)
  // `ln -s ../x` (one operand) links to it from here: it is the source
  if (spec.operands === "sources" && !(spec.target !== undefined && has(parsed, ...spec.target)) && rest.length > 1) return rest.slice(0, -1)
  return rest
}

const fromSpec = (spec: Spec, words: Words): Array<string | undefined> => {
  const parsed = parseOptions(words, spec.options)
  if (spec.none !== undefined && has(parsed, ...spec.none)) return []
  const files = spec.files === undefined ? [] : valuesOf(parsed, ...spec.files)
  const operands = operandsOf(spec, parsed)
  // awk's `var=value` operands assign, they name no file
  const assigns = spec === AWK
  return [...files, ...operands.filter((w) => !(assigns && w !== undefined && /^[A-Za-z_]\w*=/.test(w)))]
}

const TAR_OPTIONS: Options = {
  short: "bCfFgHIKLNTVX",
  long: [
    "--file",
    "--directory",
    "--files-from",
    "--exclude-from",
    "--exclude",
    "--use-compress-program",
    "--to-command",
    "--transform",
    "--owner",
    "--group",
    "--mode",
    "--mtime",
    "--label",
    "--format",
    "--newer",
    "--after-date",
    "--blocking-factor",
    "--tape-length",
    "--info-script",
    "--new-volume-script",
    "--listed-incremental",
    "--checkpoint-action",
    "--index-file"
  ]
}

/** `tar czf out.tgz src` (old style: the letters' values follow in order) as `tar -c -z -f out.tgz src`. */
const tarWords = (words: Words): Words => {
  const first = words[1]
  if (first === undefined || first.startsWith("-") || !/^[A-Za-z]+$/.test(first)) return words
  const out: Array<string | undefined> = [words[0]]
  let next = 2
  for (const letter of first) {
    out.push(`-${letter}`)
    if (TAR_OPTIONS.short.includes(letter)) out.push(words[next++])
  }
  return [...out, ...words.slice(next)]
}

/** tar's files when it creates or adds to an archive (`-c`, `-r`, `-u`, `-A`); `-C dir` moves the later ones. */
const tarReads = (words: Words): Array<string | undefined> => {
  const parsed = parseOptions(tarWords(words), TAR_OPTIONS)
  if (!has(parsed, "-c", "--create", "-r", "--append", "-u", "--update", "-A", "--catenate", "--concatenate")) return []
  // a `-C` anywhere makes the operands' directory uncertain (tar applies it in order): read them there too
  const dirs = valuesOf(parsed, "-C", "--directory")
  const files = [...valuesOf(parsed, "-T", "--files-from", "-X", "--exclude-from"), ...parsed.operands]
  const moved = dirs.flatMap((d) => parsed.operands.map((f) => (d === undefined || f === undefined ? undefined : f.startsWith("/") ? f : `${d}/${f}`)))
  return [...files, ...moved]
}

/** `zip [opts] out.zip files… [-x patterns…]`: the files after the archive; `-x`/`-i` lists are patterns. */
const zipReads = (words: Words): Array<string | undefined> => {
  const out: Array<string | undefined> = []
  let archive = false
  let list = false
  for (let i = 1; i < words.length; i++) {
    const w = words[i]
    // `zip - files`: the archive goes to stdout
    if (w?.startsWith("-") && !(w === "-" && !archive)) {
      list = /^-(x|i|xi|-exclude|-include)$/.test(w)
      // options with one value
      if (/^-([bntOPsZ]|tt|-temp-path|-password|-out|-split-size|-compression-method)$/.test(w)) i++
      continue
    }
    if (list || w?.startsWith("@")) continue
    if (!archive) archive = true
    else out.push(w)
  }
  return out
}

/** `dd if=f`: the input file. */
const ddReads = (words: Words) => words.filter((w) => w === undefined || w.startsWith("if=")).map((w) => w?.slice(3))

const OPENSSL_FILES = ["-in", "-inkey", "-key", "-kfile", "-signkey", "-cert", "-certfile", "-CAfile", "-CAkey", "-CA", "-infiles", "-prvkey", "-peerkey"]

/** openssl's input files (`-in f`, `-inkey f`), and `file:f` pass phrases. */
const opensslReads = (words: Words): Array<string | undefined> => {
  const out: Array<string | undefined> = []
  for (let i = 1; i < words.length; i++) {
    const w = words[i]
    if (w !== undefined && OPENSSL_FILES.includes(w)) out.push(words[++i])
    else if (w === "-passin" || w === "-passout" || w === "-pass") {
      const value = words[++i]
      if (value === undefined || value.startsWith("file:")) out.push(value?.slice(5))
    }
  }
  return out
}

/** jq's files: operands after the filter (all with `-f`), `--slurpfile`/`--rawfile` values; none after `--args`. */
const jqReads = (words: Words): Array<string | undefined> => {
  const out: Array<string | undefined> = []
  let filter = false
  for (let i = 1; i < words.length; i++) {
    const w = words[i]
    if (w === "--args" || w === "--jsonargs") break
    if (w === "-f" || w === "--from-file") {
      out.push(words[++i])
      filter = true
    } else if (w === "--arg" || w === "--argjson") i += 2
    else if (w === "--slurpfile" || w === "--rawfile") {
      out.push(words[i + 2])
      i += 2
    } else if (w === "--indent" || w === "-L") i++
    else if (w?.startsWith("-") && w !== "-") continue
    else if (!filter) filter = true
    else out.push(w)
  }
  return out
}

/** curl's uploads: `-T f`, `-d @f`, `--data-binary @f`, `-F name=@f`/`name=<f`, `--data-urlencode name@f`, `-K f`. */
const curlReads = (words: Words): Array<string | undefined> => {
  const at = (v: string | undefined) => (v === undefined ? [undefined] : v.startsWith("@") ? [v.slice(1)] : [])
  const out: Array<string | undefined> = [...optionValues(words, ["-T", "--upload-file", "-K", "--config"])]
  for (const v of optionValues(words, ["-d", "--data", "--data-binary", "--data-ascii", "--json"])) out.push(...at(v))
  for (const v of optionValues(words, ["--data-urlencode"]))
    out.push(...(v === undefined ? [undefined] : /^[^=@]*@/.test(v) ? [v.slice(v.indexOf("@") + 1)] : []))
  for (const v of optionValues(words, ["-F", "--form"])) {
    const m = v === undefined ? undefined : /^[^=]*=[@<]([^;]*)/.exec(v)
    if (v === undefined || m) out.push(m?.[1])
  }
  // `curl file:///abs/.env`, `curl file://$PWD/.env`: a file URL reads that path
  for (const w of words.slice(1)) out.push(...fileUrl(w))
  return out
}

/** The paths a `file:` URL may read (percent-decoded; with and without a query or fragment). */
export const fileUrl = (word: string | undefined): Array<string | undefined> => {
  const m = word === undefined ? undefined : /^file:(?:\/\/[^/]*)?(.*)$/is.exec(word)
  if (m === undefined || m === null) return []
  const decode = (p: string) => {
    try {
      return decodeURIComponent(p)
    } catch {
      return undefined
    }
  }
  const whole = m[1]!
  const bare = whole.replace(/[?#].*$/s, "")
  return [...new Set([decode(whole), decode(bare)])]
}

/** xargs's own options: `-a f`/`--arg-file=f` is read (its lines are the names). */
const xargsReads = (words: Words): Array<string | undefined> => {
  const out: Array<string | undefined> = []
  for (let i = 1; i < words.length; i++) {
    const w = words[i]
    if (w === undefined || !w.startsWith("-") || w === "--") break
    if (w.startsWith("--arg-file=")) out.push(w.slice("--arg-file=".length))
    else if (w === "--arg-file" || w === "-a") out.push(words[++i])
    else if (/^-[^-]/.test(w)) {
      // a short cluster: `-0a f`, `-af`; the letters that take a value end it
      const m = /^-[0prtx]*([adEILnPs])(.*)$/.exec(w)
      if (m?.[1] === "a") out.push(m[2] !== "" ? m[2] : words[++i])
      else if (m !== null && m[2] === "") i++
    } else if (/^--(delimiter|eof|replace|max-lines|max-args|max-procs|max-chars|process-slot-var)$/.test(w)) i++
  }
  return out
}

/** mail/mailx attachments and quoted files (`-a f`, `-q f`); mutt's `-a f… --`, `-i f`, `-H f`. */
const mailReads = (words: Words): Array<string | undefined> => {
  if (words[0] !== "mutt" && words[0] !== "neomutt") return optionValues(words, ["-a", "-q", "--attach"])
  const out: Array<string | undefined> = [...optionValues(words, ["-i", "-H"])]
  for (let i = 1; i < words.length; i++) {
    if (words[i] !== "-a") continue
    for (i++; i < words.length && words[i] !== "--" && !words[i]?.startsWith("-"); i++) out.push(words[i])
  }
  return out
}

const SED_OPTIONS: Options = { short: "efl", attached: "i", long: ["--expression", "--file", "--line-length"] }

/** sed's files, and the files its script reads with `r`/`R` (`sed '1r .env' x`). */
const sedReads = (words: Words): Array<string | undefined> => {
  const parsed = parseOptions(words, SED_OPTIONS)
  const scripts = valuesOf(parsed, "-e", "--expression")
  if (scripts.length === 0 && !has(parsed, "-f", "--file")) scripts.push(parsed.operands[0] ?? "", parsed.operands[0] === "" ? parsed.operands[1] : "")
  const reads: Array<string> = []
  for (const script of scripts) if (script !== undefined) sedRunsCode(script, reads)
  return [...fromSpec(SED, words), ...reads]
}

/** wget's uploads and input lists: `--post-file`, `--body-file`, `-i`. */
const wgetReads = (words: Words) => optionValues(words, ["--post-file", "--body-file", "-i", "--input-file"])

const SPECIAL: Record<string, (words: Words) => Array<string | undefined>> = {
  tar: tarReads,
  gtar: tarReads,
  bsdtar: tarReads,
  zip: zipReads,
  openssl: opensslReads,
  jq: jqReads,
  curl: curlReads,
  wget: wgetReads,
  dd: ddReads,
  xargs: xargsReads,
  sed: sedReads,
  gsed: sedReads,
  mail: mailReads,
  mailx: mailReads,
  "s-nail": mailReads,
  "bsd-mailx": mailReads,
  mutt: mailReads,
  neomutt: mailReads
}

/**
 * The words of `name`'s command line that name files it reads (undefined: a computed word the
 * command reads). `source`/`.` read their file; interpreters' scripts are found by `codeFiles`.
 */
export const readWords = (name: string, words: Words): Array<string | undefined> => {
  if (name === "source" || name === ".") return words.length > 1 ? [words[1]] : []
  if (Object.hasOwn(SPECIAL, name)) return SPECIAL[name]!(words)
  // `gcc @args`: a response file is read as well
  if (SPECS[name] === CC) return fromSpec(CC, words).map((w) => (w?.startsWith("@") ? w.slice(1) : w))
  if (Object.hasOwn(SPECS, name)) return fromSpec(SPECS[name]!, words)
  return []
}

/** A tree a command reads whole: the word naming it, and whether hidden names are read. */
export interface Tree {
  readonly word: string | undefined
  readonly hidden: boolean
}

const flags = (words: Words, re: RegExp) => words.slice(1).some((w) => w !== undefined && re.test(w))
const treesOf = (list: ReadonlyArray<string | undefined>, hidden: boolean): Array<Tree> => list.map((word) => ({ word, hidden }))

/**
 * The directories a command reads everything under (`grep -r S .`, `rg S`, `tar cf - .`, `zip -r
 * - .`, `cp -r . /tmp/x`, `diff -r a b`): a word that names a file is only that file. rg (and ag)
 * skip hidden names unless told (`--hidden`, `-uu`); the others read them.
 */
export const recursiveTrees = (name: string, words: Words): Array<Tree> => {
  const spec = SPECS[name]
  if (spec === GREP) {
    const parsed = parseOptions(words, GREP.options)
    const recurse = has(parsed, "-r", "-R", "--recursive", "--dereference-recursive") || valuesOf(parsed, "-d", "--directories").includes("recurse")
    if (!recurse) return []
    const operands = operandsOf(GREP, parsed)
    return treesOf(operands.length > 0 ? operands : ["."], true)
  }
  if (name === "rg" || name === "ag") {
    const parsed = parseOptions(words, SPECS[name]!.options)
    const us = parsed.options.filter((o) => o.name === "-u").length
    // ag's `-u` alone reaches hidden files; rg needs `-uu`
    const hidden = has(parsed, "--hidden", "-.", "--unrestricted") || us >= (name === "ag" ? 1 : 2) || (name === "ag" && has(parsed, "-a", "--all-types"))
    if (has(parsed, "--files") && name === "rg" && parsed.operands.length === 0) return treesOf(["."], hidden)
    const operands = operandsOf(SPECS[name]!, parsed)
    return treesOf(operands.length > 0 ? operands : ["."], hidden)
  }
  if (name === "tar" || name === "gtar" || name === "bsdtar") return flags(words, /^--no-recursion$/) ? [] : treesOf(tarReads(words), true)
  if (name === "zip") return flags(words, /^(-[A-Za-z]*[rR][A-Za-z]*|--recurse-paths|--recurse-patterns)$/) ? treesOf(zipReads(words), true) : []
  const recursive = /^(-[A-Za-z]*[rRa][A-Za-z]*|--recursive|--archive)$/
  if (name === "cp" || name === "rsync" || name === "scp") return flags(words, recursive) ? treesOf(readWords(name, words), true) : []
  if (name === "diff") return flags(words, /^(-[A-Za-z]*r[A-Za-z]*|--recursive)$/) ? treesOf(readWords(name, words), true) : []
  return []
}
