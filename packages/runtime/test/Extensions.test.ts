// Skills, custom tools, plugins and command hooks (T20) through the composed runtime and a scripted model.
import { afterEach, describe, expect, test } from "bun:test"
import { Storage } from "@reins/storage"
import { startScriptedServer, type ScriptedServer, type ScriptedStep } from "@reins/testkit"
import type { Plugin } from "@reins/tool"
import * as fs from "node:fs"
import * as path from "node:path"
import { makeRuntime, type RuntimeOptions } from "../src/Runtime.ts"
import { aliveWith, runIn, sessionTurns, tmp } from "./support.ts"

let server: ScriptedServer | undefined
afterEach(async () => {
  await server?.stop()
  server = undefined
})

const write = (file: string, text: string) => {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, text)
}

/** One turn of a non-yolo runtime whose questions are answered "allow" (the config's rules still deny). */
const turn = async (
  steps: ReadonlyArray<ScriptedStep>,
  options: { cwd: string; home: string; config?: Record<string, unknown>; plugins?: ReadonlyArray<Plugin> }
) => {
  server = await startScriptedServer(steps)
  const layer = makeRuntime({
    cwd: options.cwd,
    dataDir: tmp(),
    home: options.home,
    env: {},
    config: {
      provider: { local: { type: "openai-compatible", baseURL: server.url, models: { m: { context: 32_000, output: 2_000 } } } },
      ...options.config
    } as RuntimeOptions["config"],
    store: Storage.layerMemory,
    permission: { nonInteractive: "allow" },
    ...(options.plugins ? { plugins: options.plugins } : {})
  })
  const { messages } = await runIn(layer, sessionTurns([{ text: "go", model: { providerID: "local", modelID: "m" } }], options.cwd))
  const tools = messages.flatMap((m) => m.parts).flatMap((p) => (p.type === "tool" ? [p] : []))
  const byTool = (id: string) => tools.filter((t) => t.tool === id).map((t) => t.state)
  return { requests: server.requests, tools, byTool }
}

const systemText = (body: { messages: ReadonlyArray<{ role: string; content: unknown }> }) =>
  body.messages
    .filter((m) => m.role === "system")
    .map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)))
    .join("\n")

describe("skills", () => {
  test("listed in the dynamic system prompt from the project and home folders; the skill tool loads one; a `skill` rule denies by name", async () => {
    const cwd = tmp()
    const home = tmp()
    write(path.join(cwd, ".reins", "skills", "alpha", "SKILL.md"), "---\nname: alpha\ndescription: Use for alpha work\n---\nStep 1: read reference.md.\n")
    write(path.join(cwd, ".reins", "skills", "alpha", "reference.md"), "alpha facts\n")
    write(path.join(cwd, ".reins", "skills", "secret-keys", "SKILL.md"), "---\nname: secret-keys\ndescription: Rotate keys\n---\nThe keys are in the vault.\n")
    write(path.join(home, ".claude", "skills", "beta", "SKILL.md"), "---\nname: beta\ndescription: Beta from home\n---\nBeta body.\n")
    write(path.join(home, ".config", "reins", "skills", "gamma", "SKILL.md"), "---\nname: gamma\ndescription: Gamma from home\n---\nGamma body.\n")
    write(path.join(cwd, ".claude", "skills", "delta", "SKILL.md"), "---\nname: delta\ndescription: Delta, Claude layout\n---\nDelta body.\n")
    const { requests, byTool } = await turn(
      [
        {
          toolCalls: [
            { name: "skill", arguments: { name: "alpha" } },
            { name: "skill", arguments: { name: "secret-keys" } }
          ]
        },
        { text: "done" }
      ],
      { cwd, home, config: { permission: { skill: { "secret-*": "deny" } } } }
    )
    const system = systemText(requests[0]!.body)
    for (const line of ["- alpha: Use for alpha work", "- beta: Beta from home", "- gamma: Gamma from home", "- delta: Delta, Claude layout"])
      expect(system).toContain(line)
    // a skill the rules deny is not offered in the list
    expect(system).not.toContain("secret-keys")
    expect((requests[0]!.body.tools ?? []).map((t: { function: { name: string } }) => t.function.name)).toContain("skill")
    const [alpha, secret] = byTool("skill")
    expect(alpha?.status).toBe("completed")
    const output = alpha?.status === "completed" ? alpha.output : ""
    expect(output).toContain("Step 1: read reference.md.")
    expect(output).toContain(path.join(cwd, ".reins", "skills", "alpha"))
    expect(output).toContain("- reference.md")
    expect(secret?.status).toBe("error")
    expect(secret?.status === "error" ? secret.error : "").not.toContain("The keys are in the vault")
  })
})

describe("custom tools and plugins", () => {
  test("tools from .reins/tools (Tool.define and a plain object with a JSON Schema) are called; a file with a syntax error is skipped; plugins change output and call params and see events", async () => {
    const cwd = tmp()
    const home = tmp()
    write(
      path.join(cwd, ".reins", "tools", "greet.ts"),
      `import { Tool, Schema, Effect } from "@reins/plugin"
export default Tool.define("greet", {
  description: "Greets someone",
  parameters: Schema.Struct({ name: Schema.String }),
  execute: (args) => Effect.succeed({ title: "greet", output: "hello " + args.name })
})`
    )
    write(
      path.join(home, ".config", "reins", "tools", "sum.ts"),
      `export default { description: "Adds two numbers", parameters: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] }, execute: async ({ a, b }) => String(a + b) }`
    )
    write(path.join(cwd, ".reins", "tools", "broken.ts"), "export default { description: 'x', execute( => 1 }\n")
    write(
      path.join(cwd, ".reins", "plugins", "checked.ts"),
      `export default {
  "tool.after": ({ tool, result }) => (tool === "sum" ? { output: result.output + " (checked)" } : undefined),
  "chat.params": () => ({ temperature: 0.25 })
}`
    )
    const events: Array<string> = []
    const plugins: ReadonlyArray<Plugin> = [{ event: (e) => void events.push((e as { type: string }).type) }]
    const { requests, byTool } = await turn(
      [
        {
          toolCalls: [
            { name: "greet", arguments: { name: "Ada" } },
            { name: "sum", arguments: { a: 2, b: 3 } },
            { name: "sum", arguments: { a: "two" } }
          ]
        },
        { text: "done" }
      ],
      { cwd, home, plugins }
    )
    const offered = (requests[0]!.body.tools ?? []).map((t: { function: { name: string } }) => t.function.name)
    expect(offered).toContain("greet")
    expect(offered).toContain("sum")
    expect(offered).not.toContain("broken")
    // the model is given the plain tool's own JSON Schema
    const sum = (requests[0]!.body.tools ?? []).find((t: { function: { name: string } }) => t.function.name === "sum")
    expect(sum.function.parameters.required).toEqual(["a", "b"])
    expect(requests[0]!.body.temperature).toBe(0.25)
    const greet = byTool("greet")[0]
    expect(greet?.status === "completed" ? greet.output : "").toBe("hello Ada")
    const [ok, bad] = byTool("sum")
    expect(ok?.status === "completed" ? ok.output : "").toBe("5 (checked)")
    expect(bad?.status === "error" ? bad.error : "").toContain("The sum tool was called with invalid arguments")
    // the next request carries the results
    expect(JSON.stringify(requests[1]!.body.messages)).toContain("5 (checked)")
    expect(events).toContain("part.updated")
  })
})

describe("command hooks", () => {
  test("a tool.after hook runs a formatter on the edited file; a hook the permission rules deny is not run", async () => {
    const cwd = tmp()
    const home = tmp()
    write(path.join(cwd, "fmt.sh"), `printf 'formatted: %s\\n' "$(cat "$1")" > "$1"\n`)
    write(path.join(cwd, "leak.sh"), `touch "$(dirname "$1")/leaked"\n`)
    const { byTool } = await turn([{ toolCalls: [{ name: "write", arguments: { filePath: "a.txt", content: "ugly" } }] }, { text: "done" }], {
      cwd,
      home,
      config: {
        permission: { bash: { "sh ./leak.sh *": "deny" } },
        hooks: {
          "tool.after": [
            { match: "edit|write", command: "sh ./fmt.sh $FILE", timeout: 10_000 },
            { match: "write", command: "sh ./leak.sh $FILE" },
            { match: "read", command: "sh ./fmt.sh $FILE" }
          ]
        }
      }
    })
    expect(byTool("write")[0]?.status).toBe("completed")
    expect(fs.readFileSync(path.join(cwd, "a.txt"), "utf8")).toBe("formatted: ugly\n")
    expect(fs.existsSync(path.join(cwd, "leaked"))).toBe(false)
  })

  test("a hook past its timeout is killed with its process group; the call keeps its output and the failure is in its metadata", async () => {
    const cwd = tmp()
    const home = tmp()
    // a day-long sleep named uniquely: its shell and it are found by that name, whenever the timeout
    // caught them (on a loaded machine it may come before the shell has done anything)
    const n = `3${Math.floor(Math.random() * 90000) + 10000}.5`
    const { byTool } = await turn([{ toolCalls: [{ name: "write", arguments: { filePath: "c.txt", content: "x" } }] }, { text: "done" }], {
      cwd,
      home,
      config: { hooks: { "tool.after": [{ command: `sleep ${n} & wait`, timeout: 300 }] } }
    })
    const state = byTool("write")[0]
    expect(state?.status).toBe("completed")
    expect(JSON.stringify(state?.status === "completed" ? state.metadata : {})).toContain("did not finish within 300 ms")
    // the shell led its own group: nothing of it is alive, the backgrounded sleep included
    // (a killed child may stay a zombie until the container's init collects it: dead all the same)
    expect(aliveWith(`sleep ${n}`)).toEqual([])
  })

  test("a tool.before hook that exits non-zero denies the call with its output", async () => {
    const cwd = tmp()
    const home = tmp()
    const { byTool } = await turn([{ toolCalls: [{ name: "write", arguments: { filePath: "b.txt", content: "x" } }] }, { text: "done" }], {
      cwd,
      home,
      config: { hooks: { "tool.before": [{ match: "write", command: "echo 'writes are frozen' >&2; exit 1" }] } }
    })
    const state = byTool("write")[0]
    expect(state?.status === "error" ? state.error : "").toContain("writes are frozen")
    expect(fs.existsSync(path.join(cwd, "b.txt"))).toBe(false)
  })
})

describe("hooks around MCP tools", () => {
  test("a plugin's tool.after rewrites an MCP server's tool output like a built-in's", async () => {
    const cwd = tmp()
    const home = tmp()
    write(
      path.join(cwd, ".reins", "plugins", "shout.ts"),
      `export default { "tool.after": ({ tool, result }) => (tool === "fx_echo" ? { output: result.output.toUpperCase() } : undefined) }`
    )
    const fixture = path.join(import.meta.dir, "fixtures", "mcp-server.ts")
    const { requests, byTool } = await turn([{ toolCalls: [{ name: "fx_echo", arguments: { text: "hi there" } }] }, { text: "done" }], {
      cwd,
      home,
      config: { mcp: { fx: { type: "local", command: [process.execPath, fixture] } } }
    })
    const state = byTool("fx_echo")[0]
    expect(state?.status === "completed" ? state.output : "").toBe("ECHO: HI THERE")
    expect(JSON.stringify(requests[1]!.body.messages)).toContain("ECHO: HI THERE")
  })
})
