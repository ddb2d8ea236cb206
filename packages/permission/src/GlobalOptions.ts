// Options a program takes before its subcommand (`git -C . push`, `npm --loglevel x publish`,
// `kubectl -n prod delete`): a rule names the subcommand (`git push *`), the command names options first.
// The scan judges the command also as if they were not there, so a multi-word deny or ask still applies.
// Per program: the options that take a separate value (the next word is theirs); any other word starting
// with `-` (or `+` for cargo's toolchain) before the subcommand is a flag. Where a value option is not in
// the table, the form where every option takes the next word is judged as well.

const VALUE_OPTIONS: Readonly<Record<string, ReadonlySet<string>>> = {
  git: new Set(["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env", "--super-prefix", "--list-cmds", "--attr-source"]),
  npm: new Set([
    "--loglevel",
    "--prefix",
    "--registry",
    "--userconfig",
    "--globalconfig",
    "--cache",
    "-w",
    "--workspace",
    "--otp",
    "-C",
    "--dir",
    "--tag",
    "--scope"
  ]),
  pnpm: new Set(["-C", "--dir", "-F", "--filter", "-w", "--workspace-root", "--reporter", "--loglevel", "--store-dir", "--registry"]),
  yarn: new Set(["--cwd", "--modules-folder", "--cache-folder", "--registry", "--network-timeout", "--mutex"]),
  bun: new Set(["--cwd", "-c", "--config", "--env-file", "--preload", "-r", "--require", "--filter", "-F"]),
  kubectl: new Set([
    "-n",
    "--namespace",
    "--context",
    "--kubeconfig",
    "--cluster",
    "--user",
    "-s",
    "--server",
    "--token",
    "--as",
    "--as-group",
    "--request-timeout",
    "--cache-dir",
    "-v",
    "--certificate-authority",
    "--client-certificate",
    "--client-key",
    "--tls-server-name"
  ]),
  helm: new Set([
    "-n",
    "--namespace",
    "--kube-context",
    "--kubeconfig",
    "--kube-apiserver",
    "--kube-token",
    "--registry-config",
    "--repository-config",
    "--repository-cache"
  ]),
  docker: new Set(["-H", "--host", "--context", "-c", "--config", "-l", "--log-level", "--tlscacert", "--tlscert", "--tlskey"]),
  podman: new Set(["--url", "--connection", "-c", "--root", "--runroot", "--log-level", "--storage-driver", "--cgroup-manager"]),
  cargo: new Set(["-Z", "--config", "--color", "-C"]),
  terraform: new Set([]),
  aws: new Set(["--profile", "--region", "--output", "--endpoint-url", "--query", "--ca-bundle", "--cli-read-timeout", "--cli-connect-timeout", "--color"]),
  gcloud: new Set(["--project", "--account", "--configuration", "--verbosity", "--format", "--impersonate-service-account", "--billing-project"]),
  gh: new Set(["-R", "--repo", "--hostname"]),
  make: new Set([
    "-C",
    "--directory",
    "-f",
    "--file",
    "--makefile",
    "-I",
    "--include-dir",
    "-j",
    "--jobs",
    "-l",
    "--load-average",
    "-o",
    "--old-file",
    "-W",
    "--what-if",
    "--assume-new",
    "--new-file"
  ]),
  systemctl: new Set(["-H", "--host", "-M", "--machine", "-t", "--type", "-p", "--property", "-s", "--signal", "--state", "--root"]),
  composer: new Set(["-d", "--working-dir"]),
  go: new Set([]),
  mvn: new Set(["-f", "--file", "-s", "--settings", "-P", "--activate-profiles", "-pl", "--projects", "-D", "-T", "--threads"]),
  gradle: new Set(["-p", "--project-dir", "-b", "--build-file", "-c", "--settings-file", "-g", "--gradle-user-home", "-D", "-P", "-x", "--exclude-task"]),
  "./gradlew": new Set(["-p", "--project-dir", "-b", "--build-file", "-D", "-P", "-x", "--exclude-task"])
}

/** The options `program` takes before its subcommand that take a separate value (`git -C dir`); empty when it has no table. */
export const valueOptions = (program: string): ReadonlySet<string> => VALUE_OPTIONS[program] ?? new Set()

const isOption = (program: string, word: string) => word.startsWith("-") || (program === "cargo" && word.startsWith("+"))

/**
 * `git -C . push origin` → [`git push origin`]: the command without the options before its subcommand,
 * read with the program's table (and, when an option is not in it, read as taking a value too).
 * Empty when the program is not in the table or nothing precedes the subcommand.
 */
export const withoutGlobalOptions = (command: string): Array<string> => {
  const words = command.trim().split(/\s+/)
  const program = words[0]
  if (program === undefined) return []
  const table = VALUE_OPTIONS[program.split("/").pop() === "gradlew" ? "./gradlew" : program]
  if (table === undefined || words.length < 3 || !isOption(program, words[1]!)) return []
  const read = (everyOptionTakesAValue: boolean) => {
    let i = 1
    while (i < words.length && isOption(program, words[i]!)) {
      const word = words[i]!
      const attached = word.includes("=") || (/^-[A-Za-z]/.test(word) && word.length > 2 && table.has(word.slice(0, 2)))
      i += !attached && (table.has(word) || (everyOptionTakesAValue && !word.startsWith("--no-"))) ? 2 : 1
    }
    return i < words.length ? [program, ...words.slice(i)].join(" ") : undefined
  }
  return [...new Set([read(false), read(true)].filter((form): form is string => form !== undefined && form !== command.trim()))]
}
