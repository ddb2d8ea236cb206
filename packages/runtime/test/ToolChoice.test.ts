// Which editing tools each model is offered, through the composed runtime and a scripted server.
import { describe, expect, test } from "bun:test"
import { Effect, Schema } from "effect"
import type { ScriptedStep } from "@reins/testkit"
import { Tool, bash, edit, read, write } from "@reins/tool"
import { runIn, scriptedRuntimes, sessionTurns } from "./support.ts"

const runtime = scriptedRuntimes()

// A stand-in with the real tool's id: which tools are offered does not depend on what it does.
const applyPatch = Tool.define("apply_patch", {
  description: "Applies a patch",
  parameters: Schema.Struct({ patchText: Schema.String }),
  execute: () => Effect.succeed({ title: "apply_patch", output: "applied" })
})

/** Runs one turn for `modelID`; returns the tool names of each request and the stored tool parts. */
const turn = async (modelID: string, steps: ReadonlyArray<ScriptedStep>, editTool?: "auto" | "edit" | "apply_patch") => {
  const { server, cwd, layer } = await runtime(steps, {
    models: { [modelID]: { context: 32_000, output: 2_000 } },
    config: editTool ? { edit_tool: editTool } : {},
    tools: [bash, read, write, edit, applyPatch]
  })
  const { messages } = await runIn(layer, sessionTurns([{ text: "change the file", model: { providerID: "local", modelID } }], cwd))
  const offered = server.requests.map((r) => (r.body.tools ?? []).map((t: { function: { name: string } }) => t.function.name) as Array<string>)
  const tools = messages.flatMap((m) => m.parts).flatMap((p) => (p.type === "tool" ? [p] : []))
  return { offered, tools }
}

describe("editing tools by model family", () => {
  test("a GPT model is offered apply_patch, not edit or write", async () => {
    const { offered } = await turn("gpt-test", [{ text: "ok" }])
    expect(offered[0]).toEqual(["bash", "read", "apply_patch"])
  })

  test("another model is offered edit and write, not apply_patch", async () => {
    const { offered } = await turn("qwen2.5-coder:14b", [{ text: "ok" }])
    expect(offered[0]).toEqual(["bash", "read", "write", "edit"])
  })

  test('"edit_tool": "edit" offers edit and write to a GPT model; "apply_patch" offers apply_patch to any', async () => {
    expect((await turn("gpt-test", [{ text: "ok" }], "edit")).offered[0]).toEqual(["bash", "read", "write", "edit"])
    expect((await turn("qwen2.5-coder:14b", [{ text: "ok" }], "apply_patch")).offered[0]).toEqual(["bash", "read", "apply_patch"])
  })

  test("a GPT model calling edit gets the no-such-tool answer listing only its tools", async () => {
    const { tools, offered } = await turn("gpt-test", [
      { toolCalls: [{ name: "edit", arguments: { filePath: "a.txt", oldString: "a", newString: "b" } }] },
      { toolCalls: [{ name: "apply_patch", arguments: { patchText: "*** Begin Patch\n*** End Patch" } }] },
      { text: "done" }
    ])
    expect(tools.map((t) => `${t.tool}:${t.state.status}`)).toEqual(["edit:error", "apply_patch:completed"])
    const state = tools[0]!.state
    expect(state.status === "error" && state.error).toBe('There is no tool named "edit". Available tools: bash, read, apply_patch.')
    expect(offered[1]).toEqual(["bash", "read", "apply_patch"])
  })

  test("another model calling apply_patch gets the no-such-tool answer", async () => {
    const { tools } = await turn("claude-sonnet-4", [{ toolCalls: [{ name: "apply_patch", arguments: { patchText: "x" } }] }, { text: "done" }])
    const state = tools[0]!.state
    expect(state.status === "error" && state.error).toBe('There is no tool named "apply_patch". Available tools: bash, read, write, edit.')
  })
})
