import { describe, expect, test } from "bun:test"
import { Effect, Layer } from "effect"
import { Bus, Ids } from "@reins/domain"
import { Permission, PermissionSettings, defaultRules, type Rule } from "@reins/permission"
import { ToolRegistry } from "../src/Registry.ts"
import { ToolChoiceSettings, editToolsFor, offeredFor } from "../src/ToolChoice.ts"
import type { Info } from "../src/Tool.ts"

const stub = (id: string): Info => ({
  id,
  description: `the ${id} tool`,
  parameters: { type: "object" },
  execute: () => Effect.succeed({ title: id, output: "", truncated: false })
})

const ids = (tools: ReadonlyArray<{ readonly id: string }>) => tools.map((t) => t.id)

const patchModels = ["gpt-4o", "gpt-5-codex", "openai/GPT-4.1", "codex-mini", "chatgpt-4o-latest", "gpt-test"]
const editModels = ["claude-sonnet-4", "llama3", "o3", "qwen2.5-coder:14b", "gpt4all", "scripted"]

describe("editToolsFor", () => {
  test("auto: GPT-family ids (gpt- or codex, any case) get apply_patch, the rest edit and write", () => {
    for (const model of patchModels) expect([model, editToolsFor(model, "auto")]).toEqual([model, ["apply_patch"]])
    for (const model of editModels) expect([model, editToolsFor(model, "auto")]).toEqual([model, ["edit", "write"]])
    expect(editToolsFor("gpt-4o")).toEqual(["apply_patch"])
  })

  test("a forced setting overrides the family both ways", () => {
    expect(editToolsFor("gpt-4o", "edit")).toEqual(["edit", "write"])
    expect(editToolsFor("gpt-5-codex", "edit")).toEqual(["edit", "write"])
    expect(editToolsFor("claude-sonnet-4", "apply_patch")).toEqual(["apply_patch"])
    expect(editToolsFor("llama3", "apply_patch")).toEqual(["apply_patch"])
  })
})

describe("offeredFor", () => {
  const all = ["bash", "read", "write", "edit", "apply_patch", "grep"].map(stub)

  test("drops the other family's editing tools and keeps every other tool in order", () => {
    expect(ids(offeredFor(all, "gpt-4o", "auto"))).toEqual(["bash", "read", "apply_patch", "grep"])
    expect(ids(offeredFor(all, "claude-sonnet-4", "auto"))).toEqual(["bash", "read", "write", "edit", "grep"])
    expect(ids(offeredFor(all, "gpt-4o", "edit"))).toEqual(["bash", "read", "write", "edit", "grep"])
    expect(ids(offeredFor(all, "claude-sonnet-4", "apply_patch"))).toEqual(["bash", "read", "apply_patch", "grep"])
  })

  test("auto does not choose a family none of whose tools is defined; a forced setting does", () => {
    const noPatch = ["bash", "write", "edit"].map(stub)
    expect(ids(offeredFor(noPatch, "gpt-4o", "auto"))).toEqual(["bash", "write", "edit"])
    expect(ids(offeredFor(noPatch, "gpt-4o", "apply_patch"))).toEqual(["bash"])
    const onlyPatch = ["bash", "apply_patch"].map(stub)
    expect(ids(offeredFor(onlyPatch, "claude-sonnet-4", "auto"))).toEqual(["bash", "apply_patch"])
    expect(ids(offeredFor(onlyPatch, "claude-sonnet-4", "edit"))).toEqual(["bash"])
  })
})

const registry = (rules: ReadonlyArray<Rule>, editTool: "auto" | "edit" | "apply_patch" = "auto", tools = ["bash", "write", "edit", "apply_patch"]) =>
  Effect.runPromise(
    Effect.gen(function* () {
      return yield* ToolRegistry
    }).pipe(
      Effect.provide(
        ToolRegistry.layer(tools.map((id) => Effect.succeed(stub(id)))).pipe(
          Layer.provide(Permission.layer),
          Layer.provide(Layer.mergeAll(Bus.layer, Ids.layer)),
          Layer.provide(Layer.succeed(PermissionSettings, { rules, nonInteractive: "deny" })),
          Layer.provide(Layer.succeed(ToolChoiceSettings, { edit_tool: editTool }))
        )
      )
    )
  )

describe("ToolRegistry.forModel", () => {
  test("offers each model its family, per the setting", async () => {
    const auto = await registry(defaultRules)
    expect(ids(auto.forModel("gpt-test"))).toEqual(["bash", "apply_patch"])
    expect(ids(auto.forModel("claude-sonnet-4"))).toEqual(["bash", "write", "edit"])
    // `tools` still lists every permitted tool.
    expect(ids(auto.tools)).toEqual(["bash", "write", "edit", "apply_patch"])
    const forcedEdit = await registry(defaultRules, "edit")
    expect(ids(forcedEdit.forModel("gpt-test"))).toEqual(["bash", "write", "edit"])
    const forcedPatch = await registry(defaultRules, "apply_patch")
    expect(ids(forcedPatch.forModel("claude-sonnet-4"))).toEqual(["bash", "apply_patch"])
  })

  test("a denied family is not replaced by the other", async () => {
    const denied = await registry([...defaultRules, { permission: "edit", pattern: "*", action: "deny" }])
    expect(ids(denied.forModel("gpt-test"))).toEqual(["bash"])
    expect(ids(denied.forModel("claude-sonnet-4"))).toEqual(["bash"])
  })

  test("without an apply_patch tool, a GPT model keeps edit and write", async () => {
    const noPatch = await registry(defaultRules, "auto", ["bash", "write", "edit"])
    expect(ids(noPatch.forModel("gpt-test"))).toEqual(["bash", "write", "edit"])
  })
})
