// The MCP SDK (client, transports, zod, ajv) is loaded only when a server is started: importing
// @reins/mcp, as every runtime does, must not load it.
import { expect, test } from "bun:test"
import * as path from "node:path"

const loaded = async (code: string) => {
  const proc = Bun.spawn(
    ["bun", "-e", `${code}; console.log(JSON.stringify(Object.keys(require.cache).filter((k) => k.includes("@modelcontextprotocol") || k.includes("/ajv/"))))`],
    {
      cwd: path.join(import.meta.dir, ".."),
      stdout: "pipe",
      stderr: "pipe"
    }
  )
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()])
  expect(await proc.exited, err).toBe(0)
  return JSON.parse(out.trim().split("\n").pop()!) as Array<string>
}

test("importing the package loads none of the MCP SDK", async () => {
  expect(await loaded(`await import("./src/index.ts")`)).toEqual([])
})

test("the SDK-backed modules do load it (the check sees it)", async () => {
  expect((await loaded(`await import("./src/McpConnect.ts")`)).length).toBeGreaterThan(0)
})
