// What a database URL says, without loading a database driver: which adapter it picks, and how it may be shown.
import * as fs from "node:fs"
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
 * Which database a configuration names, as it may be shown and compared: the SQLite file of the data dir (its real
 * path), or the PostgreSQL server, port, database and connection options such as `options=-c search_path=…` (one
 * database's schemas are told apart), with what the URL leaves out taken from PGHOST, PGPORT and PGDATABASE as the
 * driver does; never the user or the password. Two spellings of one database may differ (safe for a prune: it then
 * leaves a store alone); two databases never look the same.
 */
export const databaseIdentity = (config: {
  readonly url?: string | undefined
  readonly dataDir: string
  readonly env?: Readonly<Record<string, string | undefined>>
}): string => {
  const url = config.url?.trim() ?? ""
  if (url === "") {
    const file = path.resolve(config.dataDir, "reins.db")
    try {
      return `sqlite:${fs.realpathSync(file)}`
    } catch {
      return `sqlite:${file}`
    }
  }
  const env = config.env ?? {}
  try {
    const parsed = new URL(url)
    const query = [...parsed.searchParams].filter(([key]) => key !== "password" && key !== "user").sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    const host = (parsed.hostname || env.PGHOST || "localhost").toLowerCase()
    const port = parsed.port || env.PGPORT || "5432"
    const database = decodeURIComponent(parsed.pathname.slice(1)) || env.PGDATABASE || decodeURIComponent(parsed.username) || env.PGUSER || ""
    const options = query.length === 0 ? "" : `?${new URLSearchParams(query).toString()}`
    return `postgres://${host}:${port}/${database}${options}`
  } catch {
    return redactUrl(url)
  }
}
