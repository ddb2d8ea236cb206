import { describe, expect, test } from "bun:test"
import { Effect, Exit } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { familyHeader, headerFor, isPromptPath, loadPromptSettings, promptFamily } from "../src/PromptFamily.ts"
import { systemPrompt } from "../src/Prompt.ts"

const file = (name: string) => fs.readFileSync(path.join(import.meta.dir, "..", "src", "prompt", name), "utf8").trim()

describe("system prompt header by model family (T27)", () => {
  test.each([
    ["anthropic", "claude-sonnet-4-5", "anthropic"],
    ["anthropic", "claude-opus-4-1-20250805", "anthropic"],
    ["amazon-bedrock", "us.anthropic.claude-sonnet-4-5-20250929-v1:0", "anthropic"],
    ["openrouter", "anthropic/claude-haiku-4.5", "anthropic"],
    ["openai", "gpt-5", "gpt"],
    ["openai", "gpt-5-mini", "gpt"],
    ["openai", "gpt-5-codex", "gpt"],
    ["openai", "o3", "gpt"],
    ["openai", "o4-mini", "gpt"],
    ["openrouter", "openai/o3-mini", "gpt"],
    ["azure", "my-gpt-4.1-deployment", "gpt"],
    ["google", "gemini-2.5-pro", "gemini"],
    ["openrouter", "google/gemini-2.5-flash", "gemini"],
    ["mistral", "mistral-large-latest", "default"],
    ["local", "scripted", "default"],
    ["deepseek", "deepseek-chat", "default"],
    ["mistral", "codestral-latest", "default"],
    ["local", "ollama/llama3.3", "default"]
  ] as const)("%s/%s → %s", (providerID, modelID, family) => {
    expect(promptFamily({ providerID, modelID })).toBe(family)
    expect(headerFor({ providerID, modelID }, {})).toBe(file(`${family}.txt`))
  })

  test("each family has its own real prompt; only gpt's teaches apply_patch", () => {
    const headers = (["anthropic", "gpt", "gemini", "default"] as const).map(familyHeader)
    expect(new Set(headers).size).toBe(4)
    for (const header of headers) {
      expect(header).toContain("reins")
      expect(header.length).toBeGreaterThan(1000)
      for (const tool of ["read", "bash", "glob", "grep", "list"]) expect(header).toContain(tool)
    }
    expect(familyHeader("gpt")).toContain("*** Begin Patch")
    expect(familyHeader("anthropic")).not.toContain("apply_patch")
    expect(familyHeader("default")).not.toContain("apply_patch")
  })

  test("agent.prompt: a file path (relative to the project) or inline text replaces the header for every family", async () => {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-agent-prompt-")))
    fs.mkdirSync(path.join(dir, "prompts"))
    fs.writeFileSync(path.join(dir, "prompts", "mine.txt"), "You are the house agent.\nBe terse.\n")
    const fromFile = await Effect.runPromise(loadPromptSettings("prompts/mine.txt", dir))
    expect(fromFile).toEqual({ header: "You are the house agent.\nBe terse." })
    expect(await Effect.runPromise(loadPromptSettings("./prompts/mine.txt", dir))).toEqual(fromFile)
    const inline = await Effect.runPromise(loadPromptSettings("You are a careful reviewer. Never edit files.", dir))
    expect(inline).toEqual({ header: "You are a careful reviewer. Never edit files." })
    for (const modelID of ["claude-sonnet-4-5", "gpt-5", "gemini-2.5-pro", "mistral-large"]) {
      expect(headerFor({ providerID: "x", modelID }, fromFile)).toBe("You are the house agent.\nBe terse.")
    }
    expect(await Effect.runPromise(loadPromptSettings(undefined, dir))).toEqual({})
    const [header] = await Effect.runPromise(systemPrompt(dir, new Date(0), headerFor({ providerID: "anthropic", modelID: "claude-sonnet-4-5" }, inline)))
    expect(header).toBe("You are a careful reviewer. Never edit files.")
  })

  test("a prompt file that is missing or empty is a config error naming agent.prompt and the path", async () => {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-agent-prompt-")))
    fs.writeFileSync(path.join(dir, "empty.md"), "  \n")
    const missing = await Effect.runPromiseExit(loadPromptSettings("prompts/nope.txt", dir))
    expect(Exit.isFailure(missing)).toBe(true)
    const message = Exit.isFailure(missing) ? String(missing.cause.reasons.map((r) => (r._tag === "Fail" ? r.error.message : "")).join("")) : ""
    expect(message).toContain("agent.prompt")
    expect(message).toContain(path.join(dir, "prompts", "nope.txt"))
    const empty = await Effect.runPromiseExit(loadPromptSettings("empty.md", dir))
    expect(Exit.isFailure(empty)).toBe(true)
  })

  test("what counts as a path", () => {
    for (const p of ["prompt.txt", "./p", "../shared/p.md", "/etc/reins/p", "~/p.txt", "docs/AGENT.MD"]) expect(isPromptPath(p)).toBe(true)
    for (const t of ["You are terse.", "Be brief.\nUse tools.", "prompts/mine", "review-only"]) expect(isPromptPath(t)).toBe(false)
  })
})
