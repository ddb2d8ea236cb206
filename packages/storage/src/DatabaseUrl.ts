// What a database URL says, without loading a database driver: which adapter it picks, and how it may be shown.
import * as path from "node:path"

/** Whether a database URL names PostgreSQL. */
export const isPostgresUrl = (url: string): boolean => /^postgres(ql)?:\/\//i.test(url)

/** A database URL as it may be shown: user, host, port and database, never the password or the query. */
export const redactUrl = (url: string): string => {
  try {
    const parsed = new URL(url)
    const user = parsed.username === "" ? "" : `${decodeURIComponent(parsed.username)}@`
    return `${parsed.protocol}//${user}${parsed.host}${parsed.pathname}`
  } catch {
    // not a URL: what follows an "@" (a password, if any, comes before it)
    return url.slice(url.lastIndexOf("@") + 1)
  }
}

/**
 * Which database a configuration names, as it may be shown and compared: the SQLite file of the data dir, or the
 * PostgreSQL server and database (no user, password or query: the same database however it is reached).
 */
export const databaseIdentity = (config: { readonly url?: string | undefined; readonly dataDir: string }): string => {
  const url = config.url?.trim() ?? ""
  if (url === "") return `sqlite:${path.resolve(config.dataDir, "reins.db")}`
  try {
    const parsed = new URL(url)
    return `postgres://${parsed.host.toLowerCase()}${parsed.pathname}`
  } catch {
    return redactUrl(url)
  }
}
