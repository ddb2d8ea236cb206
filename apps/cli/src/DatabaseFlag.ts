// `--database URL` anywhere on the command line picks the session database, as REINS_DATABASE_URL does: it is taken
// off the line before the command is parsed and set in the environment, so every command that opens the store (run,
// chat, serve, acp, sessions, permissions, …), the runtime it builds and the reins processes it starts use the same
// database. A postgres:// URL is PostgreSQL; without one, SQLite in the data directory.

export type DatabaseFlag = { readonly args: ReadonlyArray<string>; readonly url?: string } | { readonly problem: string }

/** The line without `--database URL` / `--database=URL`, and the URL; the last one wins. */
export const takeDatabaseFlag = (args: ReadonlyArray<string>): DatabaseFlag => {
  const rest: Array<string> = []
  let url: string | undefined
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    // after `--`, everything is the prompt's
    if (arg === "--") {
      rest.push(...args.slice(i))
      break
    }
    if (arg === "--database" || arg.startsWith("--database=")) {
      const value = arg === "--database" ? args[++i] : arg.slice("--database=".length)
      if (value === undefined || value === "" || value.startsWith("-")) {
        return { problem: "--database needs a URL: reins --database postgres://user@host:5432/reins run …" }
      }
      url = value
      continue
    }
    rest.push(arg)
  }
  return url === undefined ? { args: rest } : { args: rest, url }
}

/** Whether a database URL carries a password (user:password@ or ?password=). */
export const passwordIn = (url: string): boolean => {
  try {
    const parsed = new URL(url)
    return parsed.password !== "" || parsed.searchParams.has("password")
  } catch {
    return /:[^/@]*[^/@:]@|[?&]password=/i.test(url)
  }
}

/**
 * What a URL taken off the line does (main, and bin.ts's fast path to the interactive session): it becomes
 * REINS_DATABASE_URL, with a warning on stderr when it carries a password (every user of this machine can read a
 * command line in the process list).
 */
export const applyDatabaseUrl = (url: string, env: Record<string, string | undefined>, warn: (line: string) => void) => {
  if (passwordIn(url))
    warn(
      "reins: warning: the --database URL carries a password, which other users of this machine can read in the process list; set REINS_DATABASE_URL in the environment instead.\n"
    )
  env.REINS_DATABASE_URL = url
}
