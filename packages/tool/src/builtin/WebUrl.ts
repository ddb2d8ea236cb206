// The URL a webfetch call names, as the permission rules and the egress checks see it: http(s) only, no
// credentials, the host lower case without a trailing dot (IDN as punycode, IPv4 in any spelling as dotted
// decimal: the WHATWG parser's work), no fragment. Pure.
import { isPrivateAddress, normalizeHost } from "@reins/sandbox"

/** A URL webfetch may request: its normalized text (the permission subject) and its parts. */
export interface WebTarget {
  readonly url: URL
  /** The normalized URL: what the `webfetch` rules match and what is requested. */
  readonly subject: string
  /** The host as the sandbox's allowlist compares it (no brackets, no trailing dot). */
  readonly host: string
  /** Whether the host itself (an IP literal, `localhost`) is a loopback or private address, before any lookup. */
  readonly privateHost: boolean
}

// loaded on first use, as Hosts.ts does
const net = () => process.getBuiltinModule("node:net")

/** Whether a host, as written, is an IP literal (no lookup needed). */
export const isIpLiteral = (host: string) => net().isIP(normalizeHost(host)) !== 0

/** `localhost` and its subdomains resolve to loopback by definition (RFC 6761), whatever DNS says. */
const isLocalName = (host: string) => host === "localhost" || host.endsWith(".localhost")

/** The target for `raw` (against `base` for a redirect's Location), or why it cannot be fetched. */
export const parseTarget = (raw: string, base?: URL): WebTarget | string => {
  let url: URL
  try {
    url = base === undefined ? new URL(raw.trim()) : new URL(raw, base)
  } catch {
    return `"${raw}" is not a valid URL: give an absolute http:// or https:// URL.`
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return `webfetch fetches only http:// and https:// URLs, not ${url.protocol}`
  // a user name hides the host from a reader (https://docs.example.com@evil.test/), and credentials leak
  if (url.username !== "" || url.password !== "") return `"${redact(url)}" carries a user name or password: webfetch does not send credentials in URLs.`
  // the parser keeps a trailing dot; `example.com.` is `example.com` to DNS and must be to the rules too
  if (url.hostname.endsWith(".")) url.hostname = url.hostname.replace(/\.+$/, "")
  if (url.hostname === "") return `"${raw}" has no host.`
  url.hash = ""
  const host = normalizeHost(url.hostname)
  const privateHost = isLocalName(host) || (isIpLiteral(host) && isPrivateAddress(host))
  return { url, subject: url.href, host, privateHost }
}

/** The URL without its credentials, to quote back. */
const redact = (url: URL) => {
  const copy = new URL(url.href)
  copy.username = copy.username === "" ? "" : "…"
  copy.password = ""
  return copy.href
}

/** What "always" allows for a target: everything under its origin (scheme, host, port). */
export const alwaysPattern = (target: WebTarget) => `${target.url.origin}/*`
