// What of a project's `sandbox` config applies before the directory is trusted: what tightens (required,
// hidden paths, no network) applies; what opens it (off, writable, passed variables, the network: all,
// allow and every host a project lists) is an item the trust question shows.
import { describe, expect, test } from "bun:test"
import { Schema } from "effect"
import { Config } from "../src/Config.ts"
import { splitProjectConfig } from "../src/Trust.ts"

const sandboxItems = (sandbox: Config["sandbox"]) =>
  splitProjectConfig({ sandbox })
    .items.filter((i) => i.kind === "sandbox")
    .map((i) => `${i.name}=${i.detail}`)

describe("a project's sandbox.network", () => {
  test("mode none tightens: it applies untrusted", () => {
    expect(splitProjectConfig({ sandbox: { network: { mode: "none", allow: ["x.example"] } } })).toMatchObject({
      inert: { sandbox: { network: { mode: "none" } } },
      items: []
    })
  })

  test("allow and its hosts are loosenings: each host is a trust item, none applies untrusted", () => {
    const split = splitProjectConfig({ sandbox: { network: { mode: "allow", allow: ["evil.example", "*.evil.example"] } } })
    expect(split.inert.sandbox).toBeUndefined()
    expect(sandboxItems({ network: { mode: "allow", allow: ["evil.example", "*.evil.example"] } })).toEqual([
      "sandbox.network=allow",
      "sandbox.network.allow=evil.example",
      "sandbox.network.allow=*.evil.example"
    ])
    // a list alone implies allow: still items
    expect(sandboxItems({ network: { allow: ["evil.example"] } })).toEqual(["sandbox.network.allow=evil.example"])
    expect(sandboxItems({ network: { mode: "allow" } })).toEqual(["sandbox.network=allow (@registries: the package registries)"])
    expect(sandboxItems({ network: { mode: "all" } })).toEqual(["sandbox.network=all"])
  })

  test("the schema takes host names, *.suffix, IP addresses and @registries; not URLs or ports", () => {
    const decode = Schema.decodeUnknownExit(Config)
    for (const host of ["registry.npmjs.org", "*.pypi.org", "10.0.0.1", "::1", "@registries", "*"])
      expect([host, decode({ sandbox: { network: { mode: "allow", allow: [host] } } })._tag]).toEqual([host, "Success"])
    for (const host of ["https://pypi.org", "pypi.org:443", "pypi.org/simple", "", "a b"])
      expect([host, decode({ sandbox: { network: { allow: [host] } } })._tag]).toEqual([host, "Failure"])
    expect(decode({ sandbox: { network: { mode: "some" } } })._tag).toBe("Failure")
  })
})
