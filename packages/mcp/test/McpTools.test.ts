import { describe, expect, test } from "bun:test"
import { Effect, Exit } from "effect"
import { connect, serverEnv } from "../src/McpConnect.ts"
import { renderResult, toolId } from "../src/McpTools.ts"

describe("tool ids", () => {
  test("<server>_<tool> in the characters providers accept, at most 64 long", () => {
    expect(toolId("docs", "search")).toBe("docs_search")
    expect(toolId("my server", "files/read.v2")).toBe("my_server_files_read_v2")
    expect(toolId("a".repeat(40), "b".repeat(40))).toHaveLength(64)
    expect(toolId("ünï", "ok-name")).toMatch(/^[A-Za-z0-9_-]+$/)
  })
})

describe("a local server's environment", () => {
  const env = { PATH: "/usr/bin:/bin", HOME: "/home/u", OPENAI_API_KEY: "sk-secret", AWS_SECRET_ACCESS_KEY: "aws", LANG: "C.UTF-8" }

  test("the base keys and its own env, not the rest of reins's", () => {
    expect(serverEnv(env, { TOKEN: "t", PATH: "/opt/bin" })).toEqual({ PATH: "/opt/bin", HOME: "/home/u", LANG: "C.UTF-8", TOKEN: "t" })
  })

  test("a real child sees its own env and the base, not reins's secrets (its stderr is the failure's reason)", async () => {
    const exit = await Effect.runPromiseExit(
      connect(
        "probe",
        {
          type: "local",
          command: ["sh", "-c", 'echo "seen:${OPENAI_API_KEY:-none}:${AWS_SECRET_ACCESS_KEY:-none}:${TOKEN}:${HOME}" >&2; exit 1'],
          env: { TOKEN: "mine" }
        },
        { env, cwd: "/", track: () => {} }
      )
    )
    expect(Exit.isFailure(exit)).toBe(true)
    const message = JSON.stringify(exit)
    expect(message).toContain("seen:none:none:mine:/home/u")
    expect(message).toContain('MCP server \\"probe\\" could not start')
  })

  test("a command that does not exist fails with its name", async () => {
    const exit = await Effect.runPromiseExit(connect("nope", { type: "local", command: ["/no/such/mcp-server"] }, { env, cwd: "/", track: () => {} }))
    expect(JSON.stringify(exit)).toContain(
      'MCP server \\"nope\\" could not start: there is no program \\"/no/such/mcp-server\\" (install it, or fix mcp.nope.command in reins.json)'
    )
  })
})

describe("tool results", () => {
  test("text joined, images as attachments, embedded text resources, the rest noted", () => {
    const r = renderResult({
      content: [
        { type: "text", text: "one" },
        { type: "image", data: "AAAA", mimeType: "image/png" },
        { type: "resource", resource: { uri: "file:///a.txt", text: "from a resource" } },
        { type: "resource", resource: { uri: "file:///b.bin", blob: "AAAA", mimeType: "application/octet-stream" } },
        { type: "audio", data: "AAAA", mimeType: "audio/wav" }
      ]
    })
    expect(r.output).toBe("one\nfrom a resource\n[resource file:///b.bin (application/octet-stream): binary, not shown]\n[audio content: not shown]")
    expect(r.attachments).toEqual([{ mime: "image/png", url: "data:image/png;base64,AAAA" }])
  })

  test("structured content alone is shown as JSON", () => {
    expect(renderResult({ content: [], structuredContent: { n: 1 } }).output).toBe('{"n":1}')
  })
})
