import * as fs from "node:fs"
import * as path from "node:path"

/** True when `target` is `dir` or somewhere below it (both absolute). */
export const isInside = (dir: string, target: string) => {
  const rel = path.relative(dir, target)
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel))
}

/**
 * `~`, `~/x` and `~user/x` expanded (the last to a sibling of `home`, which is right for the usual
 * /home/<user> and good enough to see that it is outside the worktree).
 */
export const expandTilde = (given: string, home: string) => {
  if (given === "~") return home
  if (given.startsWith("~/")) return home + given.slice(1)
  if (given.startsWith("~")) {
    const slash = given.indexOf("/")
    const user = slash === -1 ? given.slice(1) : given.slice(1, slash)
    const rest = slash === -1 ? "" : given.slice(slash)
    return (user === "root" ? "/root" : path.join(path.dirname(home), user)) + rest
  }
  return given
}

/** Symlinks resolved on the longest prefix of a normalised path that exists, the rest appended. */
const realPrefix = (target: string): string => {
  const missing: Array<string> = []
  let current = target
  for (;;) {
    try {
      return path.join(fs.realpathSync.native(current), ...missing.reverse())
    } catch {
      const parent = path.dirname(current)
      if (parent === current) return target
      missing.push(path.basename(current))
      current = parent
    }
  }
}

/**
 * The real location of `target`: symlinks resolved on the longest prefix that exists, the rest
 * appended. A link inside the worktree that points outside is therefore seen as outside. `..`
 * is taken where the kernel takes it, after the link before it (`link/../x` is next to the
 * link's target, not next to the link), so pass paths as written, not normalised.
 */
export const realLocation = (target: string): string => {
  const absolute = path.isAbsolute(target) ? target : `${process.cwd()}${path.sep}${target}`
  const root = path.parse(absolute).root
  const parts = absolute.slice(root.length).split(path.sep === "\\" ? /[\\/]+/ : /\/+/)
  if (!parts.includes("..")) return realPrefix(path.resolve(absolute))
  let current = root
  for (const part of parts) {
    if (part === "" || part === ".") continue
    current = part === ".." ? path.dirname(current) : realPrefix(path.join(current, part))
  }
  return current
}

/** True when `file` itself is a symbolic link: one system call, false when it is missing or cannot be read. */
export const isSymlink = (file: string) => {
  try {
    // most words name no file: no ENOENT error is built for each of them
    return fs.lstatSync(file, { throwIfNoEntry: false })?.isSymbolicLink() === true
  } catch {
    return false
  }
}

/** The directory to ask about for a path: the path itself when it is a directory, else its parent. */
export const askDirectory = (real: string) => {
  try {
    if (fs.statSync(real).isDirectory()) return real
  } catch {
    // missing: its parent is what would be written into
  }
  return path.dirname(real)
}

/** Device files every shell command may use without a question. */
export const harmlessDevice = (target: string) =>
  target === "/dev/null" ||
  target === "/dev/stdin" ||
  target === "/dev/stdout" ||
  target === "/dev/stderr" ||
  target === "/dev/tty" ||
  target === "/dev/zero" ||
  target === "/dev/random" ||
  target === "/dev/urandom" ||
  /^\/dev\/fd\/\d+$/.test(target)

/**
 * Commands whose operands are files they read, write or run. An operand of theirs that is computed
 * when the command runs (`cat $X`, `cp "$A" "$B"`) is a file at an unknown place.
 */
export const FILE_COMMANDS = new Set([
  "cat",
  "tac",
  "head",
  "tail",
  "less",
  "more",
  "most",
  "bat",
  "batcat",
  "nl",
  "rev",
  "fold",
  "fmt",
  "cut",
  "paste",
  "sort",
  "uniq",
  "comm",
  "join",
  "wc",
  "tr",
  "od",
  "xxd",
  "hexdump",
  "hd",
  "strings",
  "base64",
  "base32",
  "basenc",
  "md5sum",
  "sha1sum",
  "sha224sum",
  "sha256sum",
  "sha384sum",
  "sha512sum",
  "b2sum",
  "cksum",
  "sum",
  "shasum",
  "iconv",
  "diff",
  "diff3",
  "sdiff",
  "cmp",
  "file",
  "stat",
  "ls",
  "du",
  "tree",
  "find",
  "fd",
  "grep",
  "egrep",
  "fgrep",
  "rg",
  "ag",
  "ack",
  "sed",
  "gsed",
  "awk",
  "gawk",
  "mawk",
  "nawk",
  "jq",
  "yq",
  "cp",
  "mv",
  "ln",
  "rm",
  "rmdir",
  "mkdir",
  "touch",
  "truncate",
  "shred",
  "unlink",
  "chmod",
  "chown",
  "chgrp",
  "chattr",
  "setfacl",
  "install",
  "tee",
  "dd",
  "split",
  "csplit",
  "tar",
  "gtar",
  "bsdtar",
  "zip",
  "unzip",
  "gzip",
  "gunzip",
  "zcat",
  "bzip2",
  "bunzip2",
  "bzcat",
  "xz",
  "unxz",
  "xzcat",
  "zstd",
  "unzstd",
  "zstdcat",
  "lz4",
  "7z",
  "7za",
  "cpio",
  "ar",
  "scp",
  "rsync",
  "sftp",
  "curl",
  "wget",
  "openssl",
  "gpg",
  "ssh-keygen",
  "readlink",
  "realpath",
  "source",
  ".",
  "vim",
  "vi",
  "nvim",
  "nano",
  "emacs",
  "code",
  "open",
  "xdg-open",
  "patch",
  "sqlite3",
  "mount",
  "umount",
  "losetup",
  "mkfifo",
  "mknod",
  "sponge",
  "ed",
  "ex"
])
