// T27 as a user sees it: the system prompt's static header is the model family's file, or the one
// `agent.prompt` names in reins.json; it is byte-identical in every request across steps and turns.
import { beforeAll, expect, test } from "bun:test"
import * as fs from "node:fs"
import * as path from "node:path"
import { ensureBuilt, projects, reins } from "./support.ts"

beforeAll(ensureBuilt)
const project = projects()

const shipped = (family: string) =>
  fs.readFileSync(path.join(import.meta.dir, "..", "..", "..", "packages", "session", "src", "prompt", `${family}.txt`), "utf8").trim()

/** The static header of a recorded chat-completions request: its system text before the env block. */
const header = (body: any): string => {
  const system = (body.messages as Array<{ role: string; content: unknown }>).filter((m) => m.role === "system")
  const text = system.map((m) => (typeof m.content === "string" ? m.content : (m.content as Array<{ text: string }>).map((c) => c.text).join(""))).join("\n\n")
  expect(text).toContain("\n\n<env>\n")
  return text.slice(0, text.indexOf("\n\n<env>\n"))
}

const configure = (p: { configFile: string; server: { url: string } }, modelID: string, extra: Record<string, unknown> = {}) =>
  fs.writeFileSync(
    p.configFile,
    JSON.stringify({
      model: `local/${modelID}`,
      provider: { local: { type: "openai-compatible", baseURL: p.server.url, models: { [modelID]: { context: 32000, output: 4000 } } } },
      ...extra
    })
  )

test.each([
  ["claude-sonnet-4-5", "anthropic"],
  ["gpt-5-mini", "gpt"],
  ["o3", "gpt"],
  ["gemini-2.5-pro", "gemini"],
  ["mistral-large-latest", "default"]
])(
  "model %s gets the %s header",
  async (modelID, family) => {
    const p = await project([{ text: "hi" }])
    configure(p, modelID)
    const r = await reins(["run", "hello"], p)
    expect(r.code).toBe(0)
    expect(header(p.server.requests[0]!.body)).toBe(shipped(family))
  },
  60_000
)

test("agent.prompt (a file in the project) replaces the header, byte-identical across steps and two turns", async () => {
  const p = await project([
    { toolCalls: [{ name: "bash", arguments: { command: "echo one", description: "one" } }] },
    { text: "first done" },
    { toolCalls: [{ name: "bash", arguments: { command: "echo two", description: "two" } }] },
    { text: "second done" }
  ])
  fs.mkdirSync(path.join(p.cwd, "prompts"))
  fs.writeFileSync(path.join(p.cwd, "prompts", "house.txt"), "You are the house agent.\nAnswer in one line.\n")
  configure(p, "claude-sonnet-4-5", { agent: { prompt: "prompts/house.txt" } })
  expect((await reins(["run", "--yolo", "first"], p)).code).toBe(0)
  expect((await reins(["run", "--yolo", "--continue", "second"], p)).code).toBe(0)
  const headers = p.server.requests.map((r) => header(r.body))
  expect(headers).toHaveLength(4)
  expect(new Set(headers).size).toBe(1)
  expect(headers[0]).toBe("You are the house agent.\nAnswer in one line.")
}, 60_000)

test("agent.prompt as inline text; a prompt file that is missing is one line and exit 2, before any request", async () => {
  const p = await project([{ text: "ok" }])
  configure(p, "gpt-5", { agent: { prompt: "Review only. Never change files." } })
  expect((await reins(["run", "look"], p)).code).toBe(0)
  expect(header(p.server.requests[0]!.body)).toBe("Review only. Never change files.")
  configure(p, "gpt-5", { agent: { prompt: "./prompts/missing.txt" } })
  const r = await reins(["run", "look"], p)
  expect(r.code).toBe(2)
  expect(r.stderr.trim()).toBe(
    `reins: reins.json: agent.prompt: cannot read the prompt file ${path.join(p.cwd, "prompts", "missing.txt")}: no such file. Fix the path (relative to ${p.cwd}) or give the prompt text inline.`
  )
  expect(p.server.requests).toHaveLength(1)
}, 60_000)
