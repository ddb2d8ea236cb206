// Which hosts a sandboxed command may reach through reins's proxy (`sandbox.network.mode` "allow"):
// the allowlist's entries (exact names, `*.suffix`, IP literals), the package registries it defaults to,
// and the addresses a name may not resolve to unless the list names it exactly (loopback, private
// ranges: a public name that resolves there is DNS rebinding, not a registry). Pure.

// loaded on first use: startup of a command that never checks a host does not pay for node:net
const net = () => process.getBuiltinModule("node:net")

/** Stands for DEFAULT_ALLOWED_HOSTS inside an `allow` list (`["@registries", "api.example.com"]`). */
export const REGISTRIES = "@registries"

/** The package registries `allow` mode reaches when the config lists no hosts. */
export const DEFAULT_ALLOWED_HOSTS: ReadonlyArray<string> = [
  // npm, yarn
  "registry.npmjs.org",
  "registry.yarnpkg.com",
  // pip
  "pypi.org",
  "files.pythonhosted.org",
  // cargo
  "crates.io",
  "index.crates.io",
  "static.crates.io",
  // go
  "proxy.golang.org",
  "sum.golang.org",
  // gem
  "rubygems.org",
  "index.rubygems.org",
  // maven, gradle
  "repo.maven.apache.org",
  "repo1.maven.org",
  "plugins.gradle.org",
  // git dependencies and release downloads from GitHub
  "github.com",
  "codeload.github.com",
  "objects.githubusercontent.com",
  "raw.githubusercontent.com"
]

/** A host as the proxy compares it: lower case, no trailing dot, no IPv6 brackets. */
export const normalizeHost = (host: string) => {
  const h = host.trim().toLowerCase().replace(/\.$/, "")
  return h.startsWith("[") && h.endsWith("]") ? h.slice(1, -1) : h
}

/** The allowlist with `@registries` expanded and every entry normalized, duplicates dropped. */
export const expandAllowList = (entries: ReadonlyArray<string> | undefined): ReadonlyArray<string> => {
  const out = (entries ?? [REGISTRIES]).flatMap((e) => (e === REGISTRIES ? DEFAULT_ALLOWED_HOSTS : [e])).map(normalizeHost)
  return [...new Set(out)]
}

/** How `host` is listed: `exact` (named, or the same IP literal), `wildcard` (`*.suffix` or `*`), or not at all. */
export const hostListing = (allow: ReadonlyArray<string>, host: string): "exact" | "wildcard" | undefined => {
  const h = normalizeHost(host)
  if (allow.includes(h)) return "exact"
  // an IP literal is reached only when listed as it is, never through a wildcard
  if (net().isIP(h) !== 0) return undefined
  return allow.some((e) => e === "*" || (e.startsWith("*.") && h.endsWith(e.slice(1)))) ? "wildcard" : undefined
}

const v4 = (address: string) => address.split(".").map(Number) as [number, number, number, number]

/** Whether an address is not on the public internet: loopback, private, link-local, CGNAT, multicast, reserved, unspecified. */
export const isPrivateAddress = (address: string): boolean => {
  const family = net().isIP(address)
  if (family === 4) {
    const [a, b] = v4(address)
    return (
      a === 0 ||
      a === 10 ||
      a === 127 ||
      a >= 224 ||
      (a === 100 && b >= 64 && b <= 127) ||
      (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) ||
      (a === 192 && b === 0) ||
      (a === 198 && (b === 18 || b === 19))
    )
  }
  if (family !== 6) return true
  const a = address.toLowerCase()
  // IPv4-mapped and NAT64 addresses carry an IPv4 address: judged by it
  const mapped = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(a)
  if (mapped?.[1]) return isPrivateAddress(mapped[1])
  if (/^::ffff:[0-9a-f]{1,4}:[0-9a-f]{1,4}$/.test(a)) {
    const [hi, lo] = a
      .slice(7)
      .split(":")
      .map((x) => Number.parseInt(x, 16)) as [number, number]
    return isPrivateAddress(`${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`)
  }
  return a === "::" || a === "::1" || /^(f[cd][0-9a-f]{2}|fe[89ab][0-9a-f]|ff[0-9a-f]{2}):/.test(a)
}
