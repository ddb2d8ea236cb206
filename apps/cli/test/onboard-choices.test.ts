// What the first-run setup and /model offer (pure): the providers that work first, a provider's models with the
// default first, and /model limited to providers with a key or configured.
import { describe, expect, test } from "bun:test"
import { keyedProviders } from "../src/KeySources.ts"
import { modelChoices, providerChoices } from "../src/onboard/Choices.ts"
import { probesFrom } from "../src/onboard/LocalServers.ts"
import { modelChoices as pickerChoices } from "../src/tui/Models.ts"

const stored = { groq: { type: "api" as const, key: "gsk" } }

describe("the first-run setup's choices", () => {
  test("providers with a key (environment, store), local servers and configured endpoints come first, marked", () => {
    const local = [{ id: "ollama", name: "Ollama", baseURL: "http://127.0.0.1:11434/v1", models: ["qwen3:8b"] }]
    const config = { provider: { mine: { type: "openai-compatible" as const, baseURL: "http://10.0.0.2/v1" } } }
    const choices = providerChoices({ config, env: { OPENAI_API_KEY: "sk" }, storedKeys: stored }, local)
    expect(choices.map((c) => [c.id, c.ready, c.detail])).toEqual([
      ["mine", true, "configured, http://10.0.0.2/v1"],
      ["ollama", true, "Ollama running at http://127.0.0.1:11434/v1 (1 model)"],
      ["openai", true, "key in OPENAI_API_KEY"],
      ["groq", true, "key stored"],
      ["anthropic", false, "paste an API key (or set ANTHROPIC_API_KEY)"],
      ["google", false, "paste an API key (or set GOOGLE_GENERATIVE_AI_API_KEY)"],
      ["openrouter", false, "paste an API key (or set OPENROUTER_API_KEY)"],
      ["mistral", false, "paste an API key (or set MISTRAL_API_KEY)"],
      ["deepseek", false, "paste an API key (or set DEEPSEEK_API_KEY)"],
      ["xai", false, "paste an API key (or set XAI_API_KEY)"]
    ])
  })

  test("a provider's models: the suggested default first, only its own, tool-capable", () => {
    const choices = providerChoices({ config: {}, env: {}, storedKeys: {} }, [])
    const anthropic = modelChoices({}, choices.find((c) => c.id === "anthropic")!)
    expect(anthropic[0]).toBe("claude-sonnet-4-5")
    expect(anthropic.every((m) => m.startsWith("claude"))).toBe(true)
    expect(new Set(anthropic).size).toBe(anthropic.length)
    expect(modelChoices({}, choices.find((c) => c.id === "openai")!)[0]).toBe("gpt-5")
  })

  test("REINS_LOCAL_PROBE replaces the default ports; empty probes nothing", () => {
    expect(probesFrom({}).map((p) => `${p.id}=${p.address}`)).toEqual(["ollama=127.0.0.1:11434", "lmstudio=127.0.0.1:1234", "llamacpp=127.0.0.1:8080"])
    expect(probesFrom({ REINS_LOCAL_PROBE: "" })).toEqual([])
    expect(probesFrom({ REINS_LOCAL_PROBE: "llamacpp=127.0.0.1:9000,nope=1.2.3.4:5" }).map((p) => p.address)).toEqual(["127.0.0.1:9000"])
  })
})

describe("/model", () => {
  test("lists the configured models and the catalogues of providers with a key; the others are left out", () => {
    const config = { provider: { local: { type: "openai-compatible" as const, baseURL: "http://127.0.0.1:1/v1", models: { scripted: {} } } } }
    const current = { providerID: "local", modelID: "scripted" }
    const keyed = keyedProviders({ config, env: { ANTHROPIC_API_KEY: "sk" }, storedKeys: stored })
    expect([...keyed].sort()).toEqual(["anthropic", "groq"])
    const providers = new Set(pickerChoices(config, current, keyed).map((c) => c.ref.providerID))
    expect([...providers]).toEqual(["local", "anthropic", "groq"])
    // nothing keyed: only what is configured
    expect(pickerChoices(config, current, new Set()).map((c) => `${c.ref.providerID}/${c.ref.modelID}`)).toEqual(["local/scripted"])
  })
})
