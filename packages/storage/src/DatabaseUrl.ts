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
 * path), or the PostgreSQL server, port, user, database and `options` (a `search_path` tells one database's schemas
 * apart, and so does the user: the default search path starts with the user's own schema), each found as the driver
 * finds it (`?host`, `?port`, `?user`, `?dbname` over the URL's parts; the user from USER or USERNAME, the database the
 * user's name); never the password. Two spellings of one database may differ (safe for a prune: it then leaves a store
 * alone); two databases never look the same.
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
    const param = (key: string) => parsed.searchParams.get(key) ?? undefined
    const decoded = (part: string) => (part === "" ? undefined : decodeURIComponent(part))
    const host = (param("host") ?? decoded(parsed.hostname.replace(/^\[(.*)\]$/, "$1")) ?? "localhost").toLowerCase()
    const port = param("port") ?? (parsed.port || "5432")
    const user = param("user") ?? decoded(parsed.username) ?? env.USER ?? env.USERNAME ?? ""
    const database = param("dbname") ?? decoded(parsed.pathname.replace(/^\//, "")) ?? user
    const options = param("options")
    const shown = (part: string) => encodeURIComponent(part)
    return `postgres://${shown(user)}@${host}:${port}/${shown(database)}${options === undefined ? "" : `?options=${shown(options)}`}`
  } catch {
    return redactUrl(url)
  }
}
