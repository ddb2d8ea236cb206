import { beforeAll, describe, expect, test } from "bun:test"
import * as fs from "node:fs"
import * as path from "node:path"
import { ensureBuilt, events, projects, reins } from "./support.ts"

beforeAll(() => ensureBuilt())

const setup = projects()

/** A project whose model is `local/<modelID>`, plus any other config. */
const withModel = (modelID: string, steps: Parameters<typeof setup>[0], extra: Record<string, unknown> = {}) =>
  setup(steps, {
    model: `local/${modelID}`,
    ...extra
  }).then((p) => {
    // The helper's provider points at the scripted server under the `scripted` model; add ours.
    const file = p.configFile!
    const config = JSON.parse(fs.readFileSync(file, "utf8"))
    config.provider.local.models = { [modelID]: { context: 32000, output: 4000 } }
    fs.writeFileSync(file, JSON.stringify(config))
    return p
  })

/** The tool names offered in the first request the server received. */
const offered = (requests: ReadonlyArray<{ body: any }>) => (requests[0]!.body.tools as Array<{ function: { name: string } }>).map((t) => t.function.name)

describe("editing tools by model family, through the CLI", () => {
  test("a GPT model is offered apply_patch and not edit or write; a call to edit is answered as unknown", async () => {
    const p = await withModel("gpt-test", [
      { toolCalls: [{ name: "edit", arguments: { filePath: "a.txt", oldString: "a", newString: "b" } }] },
      { text: "done" }
    ])
    fs.writeFileSync(path.join(p.cwd, "a.txt"), "a\n")
    const r = await reins(["run", "--yolo", "--format", "json", "change a.txt"], p)
    expect(r.code).toBe(0)
    const tools = offered(p.server.requests)
    expect(tools).toContain("apply_patch")
    expect(tools).not.toContain("edit")
    expect(tools).not.toContain("write")
    const errored = events(r.stdout).find((e) => e.type === "part.updated" && e.part.type === "tool" && e.part.state.status === "error")
    expect(errored!.part.state.error).toStartWith('There is no tool named "edit". Available tools: ')
    expect(errored!.part.state.error).toContain("apply_patch")
    expect(fs.readFileSync(path.join(p.cwd, "a.txt"), "utf8")).toBe("a\n")
  })

  const cases: ReadonlyArray<[string, string, Record<string, unknown>, ReadonlyArray<string>, ReadonlyArray<string>]> = [
    ["another model is offered edit and write and not apply_patch", "qwen2.5-coder:14b", {}, ["edit", "write"], ["apply_patch"]],
    ['"edit_tool": "edit" offers a GPT model edit and write', "gpt-test", { edit_tool: "edit" }, ["edit", "write"], ["apply_patch"]],
    ['"edit_tool": "apply_patch" offers any model apply_patch only', "qwen2.5-coder:14b", { edit_tool: "apply_patch" }, ["apply_patch"], ["edit", "write"]]
  ]
  test.each(cases)("%s", async (_name, model, config, offeredTools, hidden) => {
    const p = await withModel(model, [{ text: "ok" }], config)
    const r = await reins(["run", "--format", "json", "hi"], p)
    expect(r.code).toBe(0)
    const tools = offered(p.server.requests)
    for (const id of offeredTools) expect(tools).toContain(id)
    for (const id of hidden) expect(tools).not.toContain(id)
  })
})
