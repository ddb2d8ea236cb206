// Discovery of skills, tool files and plugin files (T20): what loads, and what is reported with its path and error.
import { describe, expect, test } from "bun:test"
import { Effect, Fiber, Layer, Schema } from "effect"
import { TestClock } from "effect/testing"
import { Bus } from "@reins/domain"
import { eventually, runTest } from "@reins/testkit"
import * as fs from "node:fs"
import * as path from "node:path"
import { define } from "../src/Tool.ts"
import { ToolHooks, chatParamsFor, checkChatParams, type ChatParams, type ToolHook } from "../src/plugin/Hooks.ts"
import { EventHookTimeout, Extensions, discoverExtensions, layerEventHooks } from "../src/plugin/Extensions.ts"
import { Skills, skillsBlock } from "../src/plugin/Skills.ts"
import { skill as skillTool } from "../src/builtin/skill.ts"
import { PluginSetupTimeout, loadPluginFiles, sessionHooksOf, toolHookOf, type Plugin } from "../src/plugin/Loader.ts"
import { tempDir, toolCall } from "./helpers.ts"

const write = (file: string, text: string) => {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, text)
}

const skill = (dir: string, name: string, description: string, body = `Do ${name} things.`) =>
  write(path.join(dir, name, "SKILL.md"), `---\nname: ${name}\ndescription: ${description}\n---\n${body}\n`)

describe("skills", () => {
  test("found in .reins/skills, .claude/skills and the home folder's; a broken front matter is reported and the rest load", async () => {
    const cwd = tempDir()
    const home = tempDir()
    skill(path.join(cwd, ".reins", "skills"), "project-skill", "Use for the project")
    skill(path.join(cwd, ".claude", "skills"), "claude-skill", "Claude layout in the project")
    skill(path.join(home, ".config", "reins", "skills"), "home-skill", "Use anywhere")
    skill(path.join(home, ".claude", "skills"), "home-claude", "Claude layout at home")
    // the same name at home is shadowed by the project's
    skill(path.join(home, ".config", "reins", "skills"), "project-skill", "Shadowed")
    write(path.join(cwd, ".reins", "skills", "broken", "SKILL.md"), "---\nname: [broken\ndescription: x\n---\nbody\n")
    write(path.join(cwd, ".reins", "skills", "nodesc", "SKILL.md"), "---\nname: nodesc\n---\nbody\n")
    const { skills, report } = await Effect.runPromise(discoverExtensions({ cwd, home }))
    expect(skills.map((s) => s.name).sort()).toEqual(["claude-skill", "home-claude", "home-skill", "project-skill"])
    expect(skills.find((s) => s.name === "project-skill")?.description).toBe("Use for the project")
    const skipped = Object.fromEntries(
      report.skills.skipped.map((s) => [path.relative(cwd, s.path).startsWith("..") ? path.relative(home, s.path) : path.relative(cwd, s.path), s.error])
    )
    expect(skipped[".reins/skills/broken/SKILL.md"]).toContain("invalid YAML")
    expect(skipped[".reins/skills/nodesc/SKILL.md"]).toContain("description")
    expect(skipped[".config/reins/skills/project-skill/SKILL.md"]).toContain("already taken")
    expect(skillsBlock(skills)).toContain("- home-skill: Use anywhere")
  })
})

describe("tool and plugin files", () => {
  test("Tool.define and plain tools load; a syntax error, a throw at import and a bad export are reported with their path", async () => {
    const cwd = tempDir()
    const home = tempDir()
    const tools = path.join(cwd, ".reins", "tools")
    write(
      path.join(tools, "greet.ts"),
      `import { Tool, Schema, Effect } from "@reins/plugin"
export default Tool.define("greet", {
  description: "Greets someone",
  parameters: Schema.Struct({ name: Schema.String }),
  execute: (args) => Effect.succeed({ title: "greet", output: "hello " + args.name })
})`
    )
    write(
      path.join(tools, "sum.js"),
      `export default { description: "Adds", parameters: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] }, execute: async ({ a, b }) => String(a + b) }`
    )
    write(path.join(tools, "syntax.ts"), "export default { description: 'x', execute( => 1 }\n")
    write(path.join(tools, "throws.ts"), "throw new Error('no config for this tool')\nexport default {}\n")
    write(path.join(tools, "notatool.ts"), "export const answer = 42\n")
    write(path.join(home, ".config", "reins", "tools", "homed.ts"), `export default { description: "From home", execute: () => "home" }`)
    const { tools: found, report } = await Effect.runPromise(discoverExtensions({ cwd, home }))
    expect(found.map((t) => t.id).sort()).toEqual(["greet", "homed", "sum"])
    const failed = Object.fromEntries(report.tools.failed.map((f) => [path.basename(f.path), f.error]))
    expect(Object.keys(failed).sort()).toEqual(["notatool.ts", "syntax.ts", "throws.ts"])
    expect(failed["throws.ts"]).toContain("no config for this tool")
    expect(failed["notatool.ts"]).toContain("not a tool")
    expect(failed["syntax.ts"]).toContain("(line 1, column")
  })

  test("plugin files: hooks load; unknown hook names, a throwing plugin function and a syntax error are reported", async () => {
    const dir = tempDir()
    write(path.join(dir, "good.ts"), `export default { "tool.after": ({ result }) => ({ output: result.output + "!" }) }`)
    write(
      path.join(dir, "fn.ts"),
      `export const plugin = async (ctx) => ({ event: () => {} , "chat.params": () => ({ temperature: ctx.cwd.length > 0 ? 0.1 : 1 }) })`
    )
    write(path.join(dir, "typo.ts"), `export default { "tool.befor": () => {} }`)
    write(path.join(dir, "throws.ts"), `export default () => { throw new Error("plugin setup failed") }`)
    write(path.join(dir, "syntax.ts"), `export default { "tool.after": ( }`)
    const files = ["good.ts", "fn.ts", "typo.ts", "throws.ts", "syntax.ts"].map((f) => path.join(dir, f))
    const { plugins, failed } = await Effect.runPromise(loadPluginFiles(files, { cwd: dir, home: dir }))
    expect(plugins.map((p) => path.basename(p.name)).sort()).toEqual(["fn.ts#plugin", "good.ts"])
    const errors = Object.fromEntries(failed.map((f) => [path.basename(f.path), f.error]))
    expect(errors["typo.ts"]).toContain('unknown hook "tool.befor"')
    expect(errors["throws.ts"]).toContain("plugin setup failed")
    expect(errors["syntax.ts"]).toBeDefined()
  })
})

const echo = define("echo", {
  description: "Echoes",
  parameters: Schema.Struct({ text: Schema.String }),
  execute: (args) => Effect.succeed({ title: "echo", output: `echo: ${args.text}` })
})

const withHooks = (hooks: ReadonlyArray<ToolHook>) => echo.pipe(Effect.provideService(ToolHooks, hooks))

const plugin = (name: string, p: Parameters<typeof toolHookOf>[0]["plugin"]) => toolHookOf({ name, plugin: p })!

describe("tool hooks in the pipeline", () => {
  test("tool.before changes the arguments (decoded after it); tool.after changes the output", async () => {
    const cwd = tempDir()
    const hooks = [
      plugin("upper.ts", { "tool.before": ({ args }) => ({ args: { text: String((args as { text: string }).text).toUpperCase() } }) }),
      plugin("bang.ts", { "tool.after": async ({ result }) => ({ output: `${result.output}!` }) })
    ]
    const result = await Effect.runPromise(toolCall(withHooks(hooks), { text: "hi" }, { cwd }))
    expect(result.success.output).toBe("echo: HI!")
  })

  test("tool.before denies with its reason; one that throws fails the call naming the plugin; a throwing tool.after keeps the output", async () => {
    const cwd = tempDir()
    const denied = await Effect.runPromise(
      toolCall(withHooks([plugin("guard.ts", { "tool.before": () => ({ deny: "echo is not allowed on Fridays" }) })]), { text: "hi" }, { cwd })
    )
    expect(denied.failure.reason).toBe("permission")
    expect(denied.failure.message).toBe("The echo call was denied by the hook guard.ts: echo is not allowed on Fridays")
    const thrown = await Effect.runPromise(
      toolCall(
        withHooks([
          plugin("broken.ts", {
            "tool.before": () => {
              throw new Error("boom")
            }
          })
        ]),
        { text: "hi" },
        { cwd }
      )
    )
    expect(thrown.failure.reason).toBe("failed")
    expect(thrown.failure.message).toContain("the hook broken.ts (tool.before) failed: boom")
    // bad arguments from a hook are the schema's problem, as the model's would be
    const bad = await Effect.runPromise(toolCall(withHooks([plugin("bad.ts", { "tool.before": () => ({ args: { text: 1 } }) })]), { text: "hi" }, { cwd }))
    expect(bad.failure.reason).toBe("invalid-arguments")
    const after = await Effect.runPromise(
      toolCall(withHooks([plugin("late.ts", { "tool.after": () => Promise.reject(new Error("late boom")) })]), { text: "hi" }, { cwd })
    )
    expect(after.success.output).toBe("echo: hi")
    expect(after.success.metadata.hookErrors).toEqual(["late.ts: late boom"])
  })
})

describe("hook answers that cannot be used", () => {
  test("tool.before returning { args: undefined } leaves the arguments as the model sent them", async () => {
    const cwd = tempDir()
    const result = await Effect.runPromise(toolCall(withHooks([plugin("noop.ts", { "tool.before": () => ({ args: undefined }) })]), { text: "hi" }, { cwd }))
    expect(result.success.output).toBe("echo: hi")
  })

  // [what a chat.params hook returned, the parameters used, the problem reported]
  const answers: ReadonlyArray<readonly [string, unknown, ChatParams, string | undefined]> = [
    ["nothing", undefined, {}, undefined],
    ["a temperature", { temperature: 0.2 }, { temperature: 0.2 }, undefined],
    [
      "every field",
      { temperature: 0, topP: 0.9, providerOptions: { openai: { store: false } } },
      { temperature: 0, topP: 0.9, providerOptions: { openai: { store: false } } },
      undefined
    ],
    ["a string temperature", { temperature: "hot", topP: 0.5 }, { topP: 0.5 }, '`temperature` must be a number, not "hot"'],
    ["NaN top-p", { topP: Number.NaN }, {}, "`topP` must be a number, not NaN"],
    ["provider options not per provider", { providerOptions: { store: false } }, {}, "`providerOptions` must be an object of objects"],
    ["a misspelt key", { temprature: 0.1 }, {}, "unknown `temprature`"],
    ["a number", 0.5, {}, "it must return nothing or { temperature?, topP?, providerOptions? }"]
  ]
  for (const [name, got, params, problem] of answers) {
    test(`chat.params returning ${name}: ${problem ?? "used"}`, async () => {
      const checked = checkChatParams(got)
      expect(checked.params).toEqual(params)
      if (problem === undefined) expect(checked.problems).toEqual([])
      else expect(checked.problems.join("; ")).toContain(problem)
      // what the model call gets: the usable part; a later hook still wins field by field
      const hooks = sessionHooksOf([
        { name: "first.ts", plugin: { "chat.params": () => got as ChatParams } },
        { name: "second.ts", plugin: { "chat.params": () => ({ topP: 0.1 }) } }
      ])
      const merged = await Effect.runPromise(chatParamsFor(hooks, { sessionID: "s", providerID: "p", modelID: "m" }))
      expect(merged).toEqual({ ...params, topP: 0.1 })
    })
  }
})

describe("event hooks", () => {
  test("each hook sees every event in order on its own copy; one that hangs is given up after the timeout and the rest go on", async () => {
    const cwd = tempDir()
    const seen: Array<string> = []
    let hung = false
    const plugins: ReadonlyArray<Plugin> = [
      { event: (e) => void ((e as { server: string }).server = "changed by a plugin") },
      {
        event: (e) => {
          if ((e as { server: string }).server !== "first") return undefined
          hung = true
          return new Promise<void>(() => {})
        }
      },
      { event: (e) => void seen.push((e as { server: string }).server) }
    ]
    const layer = layerEventHooks.pipe(
      Layer.provide(Extensions.layer({ cwd, home: cwd, plugins })),
      Layer.provideMerge(Bus.layer),
      Layer.provide(Layer.succeed(EventHookTimeout, 100))
    )
    await runTest(
      Effect.gen(function* () {
        const bus = yield* Bus
        for (const server of ["first", "second"]) yield* bus.publish({ type: "mcp.failed", sessionID: "ses_1", server, error: "x" })
        // virtual time: the hung hook is given up when the test moves the clock past the timeout
        yield* eventually(
          Effect.sync(() => hung),
          "the second hook to hang"
        )
        yield* TestClock.adjust("100 millis")
        yield* eventually(
          Effect.sync(() => seen.length === 2),
          "both events to reach the third hook"
        )
      }).pipe(Effect.provide(layer))
    )
    // the first hook's change reached neither the third hook nor anyone else
    expect(seen).toEqual(["first", "second"])
  })
})

describe("command hooks in the discovery report", () => {
  test("a hook whose match is not a regular expression is reported as skipped with why; the others are found", async () => {
    const cwd = tempDir()
    const hooks = { "tool.before": [{ match: "edit(", command: "true" }], "tool.after": [{ match: "edit|write", command: "prettier --write $FILE" }] }
    const { report } = await Effect.runPromise(discoverExtensions({ cwd, home: cwd, hooks }))
    expect(report.hooks.found).toEqual([{ name: "hooks.tool.after[0]", command: "prettier --write $FILE" }])
    expect(report.hooks.failed.map((f) => f.path)).toEqual(["hooks.tool.before[0]"])
    expect(report.hooks.failed[0]!.error).toContain("`match` is not a regular expression")
  })
})

describe("the skill tool", () => {
  test("a name that is no skill is answered with the skills there are, without a permission question; a real one is asked for", async () => {
    const cwd = tempDir()
    const skills = [{ name: "release", description: "Cut a release", dir: cwd, file: path.join(cwd, "SKILL.md"), body: "Tag, then push." }]
    const rules = [
      { permission: "*", pattern: "*", action: "allow" as const },
      { permission: "skill", pattern: "*", action: "ask" as const }
    ]
    const built = skillTool.pipe(Effect.provideService(Skills, skills))
    const unknown = await Effect.runPromise(toolCall(built, { name: "relase" }, { cwd, rules }))
    expect(unknown.failure.reason).toBe("failed")
    expect(unknown.failure.message).toBe('There is no skill named "relase". The available skills: release.')
    const asked = await Effect.runPromise(toolCall(built, { name: "release" }, { cwd, rules }))
    expect(asked.failure.reason).toBe("permission")
    const allowed = await Effect.runPromise(toolCall(built, { name: "release" }, { cwd }))
    expect(allowed.success.output).toContain("Tag, then push.")
  })
})

describe("plugin set-up", () => {
  test("a plugin function that never returns is skipped after PluginSetupTimeout with why; the others load", async () => {
    const dir = tempDir()
    const called = path.join(dir, "stuck-called")
    write(
      path.join(dir, "stuck.ts"),
      `import { writeFileSync } from "node:fs"\nexport default () => (writeFileSync(${JSON.stringify(called)}, ""), new Promise(() => {}))`
    )
    write(path.join(dir, "fine.ts"), `export default async () => ({ event: () => {} })`)
    const files = ["stuck.ts", "fine.ts"].map((f) => path.join(dir, f))
    await runTest(
      Effect.gen(function* () {
        const loading = yield* Effect.forkChild(loadPluginFiles(files, { cwd: dir, home: dir }).pipe(Effect.provideService(PluginSetupTimeout, 100)))
        // virtual time: the stuck function is given up when the test moves the clock, once it is called
        yield* eventually(
          Effect.sync(() => fs.existsSync(called)),
          "the stuck plugin's function to be called"
        )
        yield* TestClock.adjust("100 millis")
        const { plugins, failed } = yield* Fiber.join(loading)
        expect(plugins.map((p) => path.basename(p.name))).toEqual(["fine.ts"])
        expect(failed).toEqual([{ path: path.join(dir, "stuck.ts"), error: "the plugin function did not finish within 100 ms" }])
      })
    )
  })
})
