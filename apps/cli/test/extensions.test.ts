// Custom tools, plugins and skills through the built CLI: files found in the project, a broken one reported on stderr.
import { beforeAll, describe, expect, test } from "bun:test"
import * as fs from "node:fs"
import * as path from "node:path"
import { ensureBuilt, events, lastToolResult, projects, reins, trust } from "./support.ts"

beforeAll(() => ensureBuilt())

const setup = projects()

const write = (file: string, text: string) => {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, text)
}

describe("extensions through reins run", () => {
  test("a custom tool (importing @reins/plugin) is called; a tool file with a syntax error is reported with its path and the run goes on; a plugin rewrites the output", async () => {
    const p = await setup([{ toolCalls: [{ name: "greet", arguments: { name: "Ada" } }] }, { text: "done" }])
    write(
      path.join(p.cwd, ".reins", "tools", "greet.ts"),
      `import { Tool, Schema, Effect } from "@reins/plugin"
export default Tool.define("greet", {
  description: "Greets someone",
  parameters: Schema.Struct({ name: Schema.String }),
  execute: (args) => Effect.succeed({ title: "greet", output: "hello " + args.name })
})`
    )
    write(path.join(p.cwd, ".reins", "tools", "broken.ts"), "export default { description: 'x', execute( => 1 }\n")
    write(path.join(p.cwd, ".reins", "plugins", "shout.ts"), `export default { "tool.after": ({ result }) => ({ output: result.output.toUpperCase() }) }`)
    write(path.join(p.cwd, ".reins", "skills", "release", "SKILL.md"), "---\nname: release\ndescription: How to cut a release\n---\nTag, then push.\n")
    // the project's tools and plugins are its code: they load once the directory is trusted
    await trust(p)
    const r = await reins(["run", "--yolo", "--format", "json", "greet Ada"], p)
    expect(r.code).toBe(0)
    expect(r.stderr).toContain(path.join(p.cwd, ".reins", "tools", "broken.ts"))
    expect(r.stderr).toContain("(line 1, column")
    expect(lastToolResult(p.server.requests)).toContain("HELLO ADA")
    const done = events(r.stdout).find(
      (e) => e.type === "part.updated" && e.part.type === "tool" && e.part.tool === "greet" && e.part.state.status === "completed"
    )
    expect(done).toBeDefined()
    const system = (p.server.requests[0]!.body.messages as Array<{ role: string; content: unknown }>)
      .filter((m) => m.role === "system")
      .map((m) => String(typeof m.content === "string" ? m.content : JSON.stringify(m.content)))
      .join("\n")
    expect(system).toContain("- release: How to cut a release")
  })

  // The bundle gives tool files a copy of Schema's module beside the runtime's (build.ts): what they make with it is
  // decoded, refused and described to the model by the runtime's own Schema
  test("a tool file's schemas work whole in the bundle: optional fields, literals, arrays, a refused argument, the JSON Schema the model sees", async () => {
    const p = await setup([
      { toolCalls: [{ name: "greet", arguments: { names: ["Ada"], tone: "hot" } }] },
      { toolCalls: [{ name: "greet", arguments: { names: ["Ada", "Alan"], tone: "warm", times: 2 } }] },
      { text: "done" }
    ])
    write(
      path.join(p.cwd, ".reins", "tools", "greet.ts"),
      `import { Tool, Schema, Effect } from "@reins/plugin"
const Tone = Schema.Literals(["warm", "cold"]).annotate({ description: "How to greet" })
export default Tool.define("greet", {
  description: "Greets people",
  parameters: Schema.Struct({ names: Schema.Array(Schema.String), tone: Tone, times: Schema.optional(Schema.Number) }),
  execute: (args) => Effect.succeed({ title: "greet", output: (args.tone === "warm" ? "hello " : "hi ") + args.names.join(" and ") + " x" + (args.times ?? 1) })
})`
    )
    await trust(p)
    const r = await reins(["run", "--yolo", "--format", "json", "greet them"], p)
    expect(r.code).toBe(0)
    const tools = p.server.requests[0]!.body.tools as Array<{ function: { name: string; parameters: any } }>
    const greet = tools.find((t) => t.function.name === "greet")!.function.parameters
    expect(greet.properties.tone.enum).toEqual(["warm", "cold"])
    expect(greet.properties.tone.description).toBe("How to greet")
    expect(greet.properties.names.type).toBe("array")
    expect(greet.required).toEqual(expect.arrayContaining(["names", "tone"]))
    expect(greet.required).not.toContain("times")
    // "hot" is no tone: the call is refused before it runs, saying which argument
    const refused = JSON.stringify(p.server.requests[1]!.body.messages.at(-1))
    expect(refused).toContain("tone")
    expect(refused).not.toContain("hello")
    expect(lastToolResult(p.server.requests)).toContain("hello Ada and Alan x2")
  })
})

describe("extensions in reins debug config", () => {
  test("skill is a built-in tool once there are skills; a command hook whose match is not a regular expression is skipped with why", async () => {
    const p = await setup([])
    write(path.join(p.cwd, ".reins", "skills", "release", "SKILL.md"), "---\nname: release\ndescription: How to cut a release\n---\nTag, then push.\n")
    const config = JSON.parse(fs.readFileSync(p.configFile, "utf8"))
    config.hooks = { "tool.before": [{ match: "edit(", command: "true" }], "tool.after": [{ match: "edit|write", command: "prettier --write $FILE" }] }
    fs.writeFileSync(p.configFile, JSON.stringify(config))
    const out = await reins(["debug", "config"], p)
    expect(out.code).toBe(0)
    expect(out.stdout).toMatch(/Built-in tools: .*apply_patch, task, skill/)
    expect(out.stdout).toContain("  hooks.tool.after[0]: prettier --write $FILE")
    expect(out.stdout).toMatch(/skipped hooks\.tool\.before\[0\]: `match` is not a regular expression/)
  })
})
