// What a database URL says, without loading a database driver: which adapter it picks, and how it may be shown.

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
