// What trust would switch on in a project's config: a local MCP server that leaves the sandbox, or widens it, is named.
import { describe, expect, test } from "bun:test"
import { Schema } from "effect"
import { Config } from "../src/Config.ts"
import { splitProjectConfig } from "../src/Trust.ts"

describe("a project's MCP server and the sandbox", () => {
  test('"sandbox": false and more writable directories are items of their own; network none tightens and is not', () => {
    const config = Schema.decodeUnknownSync(Config)({
      mcp: {
        plain: { type: "local", command: ["srv"], sandbox: false },
        wide: { type: "local", command: ["srv"], sandbox: { writable: ["~/notes"] } },
        quiet: { type: "local", command: ["srv"], sandbox: { network: "none" } }
      }
    })
    const { items, inert } = splitProjectConfig(config)
    expect(items.map((i) => [i.kind, i.name, i.detail])).toEqual([
      ["mcp", "mcp.plain", "srv"],
      ["sandbox", "mcp.plain.sandbox", "off"],
      ["mcp", "mcp.wide", "srv"],
      ["sandbox", "mcp.wide.sandbox.writable", "~/notes"],
      ["mcp", "mcp.quiet", "srv"]
    ])
    expect(inert.mcp).toBeUndefined()
  })

  test("a bad sandbox entry is refused with what to write", () => {
    expect(() => Schema.decodeUnknownSync(Config)({ mcp: { x: { type: "local", command: ["srv"], sandbox: "off" } } })).toThrow()
  })
})
