import { describe, expect, test } from "bun:test"
import Ajv, { type ErrorObject } from "ajv"
import { Effect, type SchemaAST } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Config } from "../src/Config.ts"
import { readConfigFile } from "../src/ConfigLoader.ts"
import { CONFIG_SCHEMA_URL, configJsonSchema, configJsonSchemaText, configKeyPaths } from "../src/ConfigSchema.ts"

const COMMITTED = path.resolve(import.meta.dir, "../../../schema/reins.schema.json")

const validate = new Ajv({ allErrors: true, strict: true }).compile(configJsonSchema())

const tmp = () => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-schema-")))

/** What the loader says of `config` written to a reins.json: the config, or the error's field and message. */
const load = async (config: unknown) => {
  const file = path.join(tmp(), "reins.json")
  fs.writeFileSync(file, JSON.stringify(config))
  const exit = await Effect.runPromise(Effect.exit(readConfigFile(file)))
  if (exit._tag === "Success") return { ok: true as const, config: exit.value }
  const reason = exit.cause.reasons[0]
  if (reason?._tag !== "Fail") throw new Error(`the loader died: ${String(reason)}`)
  return { ok: false as const, file, field: reason.error.field, message: reason.error.message }
}

/** The dotted path an ajv error is about: the object's path and, for an unknown key, that key. */
const errorPath = (error: ErrorObject) => {
  const at = error.instancePath
    .split("/")
    .slice(1)
    .map((p) => p.replaceAll("~1", "/").replaceAll("~0", "~"))
  const key = error.keyword === "additionalProperties" ? [String(error.params.additionalProperty)] : []
  return [...at, ...key].join(".")
}

/** Every key path the Effect schema declares, spelled as configKeyPaths spells them (`*` for a map's keys, `[]` for items). */
const effectPaths = (ast: SchemaAST.AST, at: string, out: Set<string>): Set<string> => {
  switch (ast._tag) {
    case "Objects":
      for (const p of ast.propertySignatures) {
        const key = at === "" ? String(p.name) : `${at}.${String(p.name)}`
        out.add(key)
        effectPaths(p.type, key, out)
      }
      for (const index of ast.indexSignatures) effectPaths(index.type, `${at}.*`, out)
      break
    case "Union":
      for (const member of ast.types) effectPaths(member, at, out)
      break
    case "Arrays":
      for (const item of [...ast.elements, ...ast.rest]) effectPaths(item, `${at}[]`, out)
      break
    case "Suspend":
      effectPaths(ast.thunk(), at, out)
      break
  }
  return out
}

describe("the config JSON Schema", () => {
  test("the committed schema/reins.schema.json is what the generator writes today (bun run schema in packages/domain)", () => {
    // the same JSON, key order included (the file is formatted by Biome, as all JSON in the repository)
    expect(JSON.stringify(JSON.parse(fs.readFileSync(COMMITTED, "utf8")), null, 2)).toBe(configJsonSchemaText().trimEnd())
  })

  test("every key of the loader's schema is in the JSON Schema, at every depth, and nothing else", () => {
    const fromEffect = [...effectPaths(Config.ast, "", new Set())].sort()
    const fromJson = [...configKeyPaths()].sort()
    expect(fromJson).toEqual(fromEffect)
    // the walk reaches the depths that matter
    for (const key of [
      "sandbox.network.allow",
      "provider.*.models.*.price.cache_read",
      "mcp.*.sandbox.writable",
      "agent.*.permission",
      "hooks.tool.before[].command"
    ]) {
      expect(fromJson).toContain(key)
    }
  })

  test("it says what it is, and fields carry descriptions for editors", () => {
    const schema = configJsonSchema()
    expect(schema.$schema).toBe("http://json-schema.org/draft-07/schema#")
    expect(schema.$id).toBe(CONFIG_SCHEMA_URL)
    expect(schema.additionalProperties).toBe(false)
    const properties = schema.properties as Record<string, { description?: string }>
    const undescribed = Object.entries(properties)
      .filter(([, p]) => !p.description)
      .map(([k]) => k)
    expect(undescribed).toEqual([])
  })

  test('"$schema" in reins.json is accepted by the loader and the schema', async () => {
    const config = { $schema: CONFIG_SCHEMA_URL, model: "anthropic/claude-sonnet-4-5" }
    expect(validate(config)).toBe(true)
    const loaded = await load(config)
    expect(loaded.ok).toBe(true)
    if (loaded.ok) expect(loaded.config.model).toBe("anthropic/claude-sonnet-4-5")
  })

  test("a config using most keys passes both the schema and the loader", async () => {
    const config = {
      $schema: CONFIG_SCHEMA_URL,
      model: "ollama/qwen2.5-coder:14b",
      variant: "high",
      provider: {
        ollama: {
          type: "openai-compatible",
          baseURL: "http://127.0.0.1:11434/v1",
          apiKey: "k",
          headers: { "X-Team": "a" },
          timeout: { connect: 300, first_byte: 0, idle: 60 },
          models: {
            "qwen2.5-coder:14b": {
              context: 32768,
              output: 8192,
              input: 30000,
              name: "Qwen",
              price: { input: 0, output: 0, cache_read: 0, cache_write: 0 },
              tools: true,
              reasoning: false,
              images: false,
              options: { store: true },
              variants: { deep: { thinking: { type: "enabled", budgetTokens: 30000 } } },
              variant: "deep"
            }
          }
        }
      },
      permission: { bash: { "*": "ask", "git status *": "allow", "rm *": "deny" }, edit: "allow", sandbox: { "network *": "allow" } },
      permission_mode: "deny-wins",
      permission_persist: "project",
      permission_timeout: 120,
      agent: {
        steps: 50,
        prompt: "prompts/agent.md",
        docs: {
          description: "Writes docs",
          mode: "subagent",
          model: "anthropic/claude-sonnet-4-5",
          tools: ["read", "edit"],
          permission: { bash: "deny" },
          steps: 20
        },
        plan: { disable: true, tools: { "*": false, read: true }, variant: "low", prompt: "Plan only." }
      },
      retry: { attempts: 5, initial_delay_ms: 1000, max_delay_ms: 30000 },
      provider_timeout: { connect: 60, first_byte: 180, idle: 120 },
      instructions: ["docs/*.md"],
      tool_output: {
        max_lines: 2000,
        max_bytes: 51200,
        reducers: true,
        retention_days: 7,
        spill_max_bytes: 268435456,
        tools: { bash: { max_lines: 500, max_bytes: 10000, direction: "head_tail", reducers: false } }
      },
      compaction: { auto: true, reserved: 4000, tail_turns: 2, protected_tools: ["skill"], prune_keep_lines: 10, template: "summary.md" },
      hooks: { "tool.after": [{ match: "edit|write", command: 'prettier --write "$FILE"', timeout: 10000 }], "tool.before": [{ command: "./check.sh" }] },
      doom_loop: { identical: 3, cycles: 3, pairs: 3 },
      edit_tool: "apply_patch",
      mcp: {
        docs: {
          type: "local",
          command: ["bunx", "my-mcp-server"],
          env: { API_TOKEN: "t" },
          enabled: true,
          timeout: 10000,
          sandbox: { network: "none", writable: ["/srv"] }
        },
        raw: { type: "local", command: ["./server"], sandbox: false },
        search: { type: "remote", url: "https://mcp.example.com/mcp", headers: { Authorization: "Bearer t" }, enabled: false, timeout: 5000 }
      },
      sandbox: {
        mode: "required",
        network: { mode: "allow", allow: ["@registries", "api.example.com", "*.internal.example", "10.0.0.1"] },
        writable: ["/opt/cache"],
        deny_read: ["~/secrets"],
        env: { pass: ["GITHUB_TOKEN", "MY_*"] }
      }
    }
    expect(validate.errors ?? validate(config)).toBe(true)
    expect(await load(config)).toMatchObject({ ok: true })
  })

  // A typo anywhere: the schema (as an editor shows it) and the loader name the same key at the same path.
  const typos: ReadonlyArray<readonly [string, unknown, string]> = [
    ["modle", { modle: "a/b" }, "model"],
    ["sandbox.network.alow", { sandbox: { network: { alow: ["github.com"] } } }, "allow"],
    ["sandbox.deny_reads", { sandbox: { deny_reads: [] } }, "deny_read"],
    ["provider.local.baseUrl", { provider: { local: { type: "openai-compatible", baseUrl: "http://127.0.0.1:1/v1" } } }, "baseURL"],
    ["provider.local.models.m.pirce", { provider: { local: { type: "openai", models: { m: { pirce: { input: 1, output: 1 } } } } } }, "price"],
    ["mcp.docs.enabeld", { mcp: { docs: { type: "local", command: ["x"], enabeld: true } } }, "enabled"],
    ["agent.docs.modle", { agent: { docs: { modle: "a/b" } } }, "model"],
    ["hooks.tool.after.0.comand", { hooks: { "tool.after": [{ comand: "x" }] } }, "command"],
    ["compaction.tail_turn", { compaction: { tail_turn: 1 } }, "tail_turns"],
    ["permision", { permision: { bash: "deny" } }, "permission"]
  ]
  for (const [where, config, meant] of typos) {
    test(`a typo at ${where} fails the schema and the loader, both naming ${where}`, async () => {
      expect(validate(config)).toBe(false)
      const schemaPaths = (validate.errors ?? []).filter((e) => e.keyword === "additionalProperties").map(errorPath)
      expect(schemaPaths).toContain(where)
      const loaded = await load(config)
      if (loaded.ok) throw new Error("the loader took a config with a typo")
      expect(loaded.field).toBe(where)
      const key = where.split(".").at(-1)
      expect(loaded.message).toBe(`${loaded.file}: ${where}: unknown key "${key}"; did you mean "${meant}"?`)
    })
  }

  test("a map entry named like a field of the map is named as that field misspelt (agent.stesp)", async () => {
    const loaded = await load({ agent: { stesp: 3 } })
    expect(loaded).toMatchObject({ ok: false, field: "agent.stesp" })
    if (!loaded.ok) expect(loaded.message).toEndWith('agent.stesp: Expected object; did you mean "steps"?')
    expect(validate({ agent: { stesp: 3 } })).toBe(false)
    expect(validate.errors?.map(errorPath)).toContain("agent.stesp")
    // a real agent's bad value is not mistaken for a typo
    const agent = await load({ agent: { docs: 3 } })
    if (!agent.ok) expect(agent.message).toEndWith("agent.docs: Expected object")
  })

  test("an unknown key like no other lists the keys allowed there", async () => {
    const loaded = await load({ sandbox: { zzz: 1 } })
    expect(loaded).toMatchObject({ ok: false, field: "sandbox.zzz" })
    if (!loaded.ok) expect(loaded.message).toEndWith('sandbox.zzz: unknown key "zzz"; the keys here are mode, network, writable, deny_read, env')
    expect(validate({ sandbox: { zzz: 1 } })).toBe(false)
  })

  test("a wrong value fails both too: the schema's enums, patterns and bounds are the loader's", async () => {
    for (const [config, field] of [
      [{ permission: { bash: { "*": "alow" } } }, "permission.bash.*"],
      [{ model: "no-slash" }, "model"],
      [{ sandbox: { network: { allow: ["https://github.com/x"] } } }, "sandbox.network.allow.0"],
      [{ retry: { attempts: 0 } }, "retry.attempts"],
      [{ mcp: { s: { type: "remote", url: "ftp://x" } } }, "mcp.s.url"],
      [{ tool_output: { max_lines: 1.5 } }, "tool_output.max_lines"]
    ] as const) {
      expect(validate(config)).toBe(false)
      const loaded = await load(config)
      expect(loaded).toMatchObject({ ok: false, field })
    }
  })
})
