import { beforeAll, describe, expect, test } from "bun:test"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ensureBuilt, projects, reins, type Project, writeUserConfig } from "./support.ts"

beforeAll(() => ensureBuilt())
const project = projects()

/** A directory with this reins.json (or none) and an env with these variables. */
const plain = (config: Record<string, unknown> | undefined, vars: Record<string, string> = {}): Project => {
  const cwd = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-models-")))
  const dataDir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-models-data-")))
  if (config) writeUserConfig(dataDir, JSON.stringify(config))
  return { cwd, dataDir, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dataDir, REINS_DATA_DIR: dataDir, NO_COLOR: "1", ...vars } }
}

const row = (stdout: string, model: string) =>
  stdout
    .split("\n")
    .find((l) => l.split(/\s+/).includes(model))
    ?.trim()
    .split(/\s+/)

describe("reins models", () => {
  test("text: one provider's models with limits, prices and capabilities; the default starred", async () => {
    const r = await reins(["models", "anthropic"], plain(undefined, { ANTHROPIC_API_KEY: "k" }))
    expect(r.code).toBe(0)
    expect(r.stderr).toBe("")
    const lines = r.stdout.split("\n")
    expect(lines[0]!.trim().split(/\s+/)).toEqual(["MODEL", "CONTEXT", "INPUT", "OUTPUT", "$IN", "$OUT", "$CACHE-R", "$CACHE-W", "CAPABILITIES"])
    // with only ANTHROPIC_API_KEY set, a run would use anthropic/claude-sonnet-4-5
    expect(row(r.stdout, "anthropic/claude-sonnet-4-5")).toEqual([
      "*",
      "anthropic/claude-sonnet-4-5",
      "200k",
      "-",
      "64k",
      "3",
      "15",
      "0.3",
      "3.75",
      "tools,reasoning,images"
    ])
    expect(row(r.stdout, "anthropic/claude-3-haiku-20240307")).toEqual([
      "anthropic/claude-3-haiku-20240307",
      "200k",
      "-",
      "4096",
      "0.25",
      "1.25",
      "0.03",
      "0.3",
      "tools,images"
    ])
    expect(lines.filter((l) => l.includes("/") && !l.includes("anthropic/")).filter((l) => /^\s*\*?\s*[a-z-]+\/\S+\s+\d/.test(l))).toEqual([])
    expect(r.stdout).toContain("* is the default (anthropic/claude-sonnet-4-5)")
    expect(r.stdout).toMatch(/Catalogue: models\.dev via @tokenlens\/models [\d.]+, prices @pydantic\/genai-prices [\d.]+ \(\d{4}-\d{2}-\d{2}\)/)
  })

  test("json: configured models and overrides join the catalogue; the configured default is marked", async () => {
    const p = plain({
      model: "local/coder",
      provider: {
        local: {
          type: "openai-compatible",
          baseURL: "http://127.0.0.1:9/v1",
          models: { coder: { context: 32_000, output: 4_000, price: { input: 0.2, output: 0.8, cache_read: 0.02 }, tools: true } }
        },
        anthropic: { type: "anthropic", models: { "claude-sonnet-4-5": { output: 16_000 } } }
      }
    })
    const r = await reins(["models", "--format", "json"], p)
    expect(r.code).toBe(0)
    const out = JSON.parse(r.stdout)
    expect(out.default).toBe("local/coder")
    expect(out.source.models).toContain("models.dev")
    const find = (provider: string, model: string) => out.models.find((m: any) => m.provider === provider && m.model === model)
    expect(find("local", "coder")).toEqual({
      provider: "local",
      model: "coder",
      default: true,
      configured: true,
      context: 32_000,
      output: 4_000,
      price: { input: 0.2, output: 0.8, cache_read: 0.02, cache_write: null },
      tools: true,
      reasoning: null,
      images: null
    })
    expect(find("anthropic", "claude-sonnet-4-5")).toMatchObject({
      default: false,
      configured: true,
      context: 200_000,
      output: 16_000,
      price: { input: 3, cache_write: 3.75 },
      reasoning: true
    })
    expect(find("openai", "gpt-5")).toMatchObject({ context: 400_000, output: 128_000, price: { input: 1.25, output: 10, cache_read: 0.125 }, tools: true })
    const providers = new Set(out.models.map((m: any) => m.provider))
    for (const id of ["anthropic", "openai", "google", "amazon-bedrock", "azure", "openrouter", "mistral", "groq", "deepseek", "xai", "local"])
      expect(providers.has(id)).toBe(true)
    expect(out.models.filter((m: any) => m.default)).toHaveLength(1)
  })

  test("an unknown provider is a usage error naming the known ones", async () => {
    const r = await reins(["models", "nope"], plain(undefined))
    expect(r.code).toBe(2)
    expect(r.stdout).toBe("")
    expect(r.stderr).toBe(
      'reins: Unknown provider "nope": reins knows anthropic, openai, google, amazon-bedrock, azure, openrouter, mistral, groq, deepseek, xai, and those under "provider" in reins.json\n'
    )
  })
})

describe("a provider's missing key is one line naming the variable, before any request", () => {
  test.each([
    [
      "google/gemini-2.5-pro",
      {},
      'reins: No API key for google: set GOOGLE_GENERATIVE_AI_API_KEY or "apiKey" for provider "google" in reins.json, or run reins auth login google\n'
    ],
    [
      "openrouter/anthropic/claude-sonnet-4",
      { OPENAI_API_KEY: "not this one" },
      'reins: No API key for openrouter: set OPENROUTER_API_KEY or "apiKey" for provider "openrouter" in reins.json, or run reins auth login openrouter\n'
    ],
    [
      "amazon-bedrock/anthropic.claude-sonnet-4-20250514-v1:0",
      { AWS_REGION: "us-east-1" },
      "reins: No AWS credentials for amazon-bedrock: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_BEARER_TOKEN_BEDROCK\n"
    ]
  ])("reins run --model %s", async (model, vars, message) => {
    const p = await project([{ text: "never asked" }])
    const r = await reins(["run", "--model", model, "hello"], { ...p, env: { ...p.env, ...vars } })
    expect(r.code).toBe(2)
    expect(r.stderr).toBe(message)
    expect(p.server.requests).toHaveLength(0)
  })
})

describe("an unknown model", () => {
  test("runs with the defaults and is warned about once on stderr; a configured one is not", async () => {
    // the project's provider "local" configures only the model "scripted"
    const p = await project([{ text: "first" }, { text: "second" }], { model: "local/mystery-7b" })
    const r = await reins(["run", "hello"], p)
    expect(r.code).toBe(0)
    expect(r.stdout).toContain("first")
    expect(r.stderr.split("\n").filter((l) => l.includes("is not in reins's catalogue"))).toHaveLength(1)
    expect(r.stderr).toContain(
      'Model local/mystery-7b is not in reins\'s catalogue: assuming a 128000-token context, 8192-token output and no price. Set provider.local.models["mystery-7b"]'
    )
    const known = await reins(["run", "--model", "local/scripted", "hello"], p)
    expect(known.code).toBe(0)
    expect(known.stderr).not.toContain("catalogue")
  })
})
