// What GET /config shows of the config: every secret hidden. Values under keys that name a secret,
// every header and environment value, a URL's credentials and secret query parameters, a command's
// secret flags and `NAME=value` assignments, bearer tokens, and strings shaped like API keys.
const SECRET_KEY = /key|token|secret|password|authorization|credential/i
/** A command-line flag whose value is a secret: `--api-key X`, `--token=X`. */
const SECRET_FLAG = /^(--?[\w-]*(?:key|token|secret|password|credential)[\w-]*)(=.*)?$/i

/** Strings shaped like credentials: provider and forge API keys, cloud keys, JWTs, long hex or base64 secrets. */
const SECRET_SHAPES = [
  /\b(sk|pk|rk)-(?:ant-|proj-|live-|test-)?[A-Za-z0-9_-]{16,}/g,
  /\b(gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_-]{20,}|xox[abprs]-[A-Za-z0-9-]{10,})/g,
  /\b(AKIA|ASIA)[0-9A-Z]{16}\b/g,
  /\bAIza[0-9A-Za-z_-]{35}\b/g,
  /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g,
  /\b[a-f0-9]{32,}\b/gi
]
/** `Bearer x`, `Basic x`, `Token x` in a header written into a command. */
const AUTH_SCHEME = /\b(Bearer|Basic|Token)\s+[^\s"']+/gi
/** `API_KEY=x`, `export GITHUB_TOKEN=x`: an assignment to a secret-named variable. */
const SECRET_ASSIGNMENT = /\b([A-Za-z_][A-Za-z0-9_]*(?:key|token|secret|password|passwd|credential|auth)[A-Za-z0-9_]*)=("[^"]*"|'[^']*'|[^\s"'&;]+)/gi

/** A string with the secrets it carries written `***`. */
export const redactText = (text: string): string => {
  let out = text.replace(AUTH_SCHEME, "$1 ***").replace(SECRET_ASSIGNMENT, "$1=***")
  for (const shape of SECRET_SHAPES) out = out.replace(shape, "***")
  return out
}

/** A URL's user and password, and the values of its secret-named query parameters, as "***"; any other string as it is. */
const redactUrl = (text: string): string => {
  const url = /^[a-z][a-z\d+.-]*:\/\//i.test(text) ? URL.parse(text) : null
  if (url === null) return redactText(text)
  const secrets = [...url.searchParams.keys()].filter((name) => SECRET_KEY.test(name))
  if (url.username === "" && url.password === "" && secrets.length === 0) return redactText(text)
  if (url.username !== "") url.username = "***"
  if (url.password !== "") url.password = "***"
  for (const name of secrets) url.searchParams.set(name, "***")
  return redactText(url.toString())
}

/** A command's arguments with the values of secret-named flags hidden. */
const redactCommand = (args: ReadonlyArray<unknown>) =>
  args.map((arg, i) => {
    if (typeof arg !== "string") return redact(arg)
    const flag = SECRET_FLAG.exec(arg)
    if (flag?.[2] !== undefined) return `${flag[1]}=***`
    const previous = args[i - 1]
    return typeof previous === "string" && SECRET_FLAG.exec(previous)?.[2] === undefined && SECRET_FLAG.test(previous) ? "***" : redactUrl(arg)
  })

/**
 * The config as GET /config shows it: API keys, tokens and every header and environment value as "***",
 * and the secrets a URL or a command line can carry (credentials, `?api_key=`, `--token X`).
 */
export const redact = (value: unknown, hide = false): unknown => {
  if (Array.isArray(value)) return value.map((v) => redact(v, hide))
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [
        k,
        !hide && (k === "command" || k === "args") && (Array.isArray(v) || typeof v === "string")
          ? Array.isArray(v)
            ? redactCommand(v)
            : redactCommand(redactText(v).split(" ")).join(" ")
          : redact(v, hide || k === "headers" || k === "env" || k === "environment" || (SECRET_KEY.test(k) && typeof v !== "object"))
      ])
    )
  }
  if (hide && value !== undefined && value !== null) return "***"
  return typeof value === "string" ? redactUrl(value) : value
}
