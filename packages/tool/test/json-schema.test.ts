// Plain custom tools whose parameters are a JSON Schema: the model's arguments are checked against it
// (types, required, enums, nested objects and arrays, additional properties as the schema says), and a
// call that does not fit is answered with what to fix, before the tool runs.
import { describe, expect, test } from "bun:test"
import { Effect } from "effect"
import { validateJsonSchema } from "../src/plugin/JsonSchema.ts"
import { fromPlain, plainToolProblem, type PlainTool } from "../src/plugin/PlainTool.ts"
import { tempDir, toolCall } from "./helpers.ts"

const schema = {
  type: "object",
  properties: {
    name: { type: "string", minLength: 1, maxLength: 10 },
    count: { type: "integer", minimum: 1, maximum: 5 },
    ratio: { type: "number", exclusiveMinimum: 0 },
    mode: { type: "string", enum: ["fast", "slow"] },
    tags: { type: "array", items: { type: "string" }, minItems: 1, uniqueItems: true },
    target: {
      type: "object",
      properties: { host: { type: "string", pattern: "^[a-z.]+$" }, port: { type: "integer" } },
      required: ["host"],
      additionalProperties: false
    },
    points: { type: "array", items: { type: "object", properties: { x: { type: "number" }, y: { type: "number" } }, required: ["x", "y"] } },
    note: { anyOf: [{ type: "string" }, { type: "null" }] },
    kind: { const: "job" },
    labels: { type: "object", additionalProperties: { type: "string" } },
    ref: { $ref: "#/$defs/id" }
  },
  required: ["name"],
  $defs: { id: { type: "string", pattern: "^id_" } }
}

/** [what the model sent, the path and the start of the message it is told; none when valid]. */
const cases: ReadonlyArray<readonly [string, Record<string, unknown>, ReadonlyArray<readonly [string, string]>]> = [
  ["valid, minimal", { name: "a" }, []],
  [
    "valid, everything",
    {
      name: "a",
      count: 2,
      ratio: 0.5,
      mode: "fast",
      tags: ["x", "y"],
      target: { host: "a.b", port: 80 },
      points: [{ x: 1, y: 2 }],
      note: null,
      kind: "job",
      labels: { a: "b" },
      ref: "id_1"
    },
    []
  ],
  ["extra top-level key allowed (no additionalProperties)", { name: "a", other: 1 }, []],
  ["missing required", {}, [["name", "Missing key"]]],
  ["wrong type", { name: 5 }, [["name", "Expected string, got 5"]]],
  ["number for an integer", { name: "a", count: 1.5 }, [["count", "Expected integer, got 1.5"]]],
  ["string for a number", { name: "a", ratio: "0.5" }, [["ratio", 'Expected number, got "0.5"']]],
  ["below minimum", { name: "a", count: 0 }, [["count", "Expected a number >= 1, got 0"]]],
  ["above maximum", { name: "a", count: 9 }, [["count", "Expected a number <= 5, got 9"]]],
  ["exclusive minimum", { name: "a", ratio: 0 }, [["ratio", "Expected a number > 0, got 0"]]],
  ["too short", { name: "" }, [["name", "Expected a string of at least 1 character"]]],
  ["too long", { name: "abcdefghijk" }, [["name", "Expected a string of at most 10 characters"]]],
  ["not in the enum", { name: "a", mode: "medium" }, [["mode", 'Expected one of "fast", "slow", got "medium"']]],
  ["not the const", { name: "a", kind: "task" }, [["kind", 'Expected "job", got "task"']]],
  ["array of the wrong items", { name: "a", tags: ["x", 2] }, [["tags.1", "Expected string, got 2"]]],
  ["empty array below minItems", { name: "a", tags: [] }, [["tags", "Expected at least 1 item, got 0"]]],
  ["repeated items", { name: "a", tags: ["x", "x"] }, [["tags.1", 'Expected unique items, but "x" is repeated']]],
  ["a string for an array", { name: "a", tags: "x" }, [["tags", 'Expected array, got "x"']]],
  ["nested missing key", { name: "a", target: { port: 1 } }, [["target.host", "Missing key"]]],
  [
    "nested unknown key (additionalProperties false)",
    { name: "a", target: { host: "a", hots: "b" } },
    [["target.hots", "Unexpected key (the keys are host, port)"]]
  ],
  ["nested pattern", { name: "a", target: { host: "A B" } }, [["target.host", "Expected a string matching the pattern ^[a-z.]+$"]]],
  [
    "object in an array",
    { name: "a", points: [{ x: 1, y: 2 }, { x: "1" }] },
    [
      ["points.1.y", "Missing key"],
      ["points.1.x", 'Expected number, got "1"']
    ]
  ],
  ["anyOf of types", { name: "a", note: 3 }, [["note", "Expected string, or null, got 3"]]],
  ["additionalProperties as a schema", { name: "a", labels: { a: 1 } }, [["labels.a", "Expected string, got 1"]]],
  ["$ref to $defs", { name: "a", ref: "x" }, [["ref", "Expected a string matching the pattern ^id_"]]],
  [
    "several at once",
    { name: 1, count: "2" },
    [
      ["name", "Expected string"],
      ["count", "Expected integer"]
    ]
  ]
]

describe("JSON Schema checks of a model's arguments", () => {
  for (const [name, args, expected] of cases) {
    test(name, () => {
      const issues = validateJsonSchema(schema, args).map((i) => [(i.path ?? []).join("."), i.message] as const)
      expect(issues.length).toBe(expected.length)
      expected.forEach(([path, message], i) => {
        expect(issues[i]![0]).toBe(path)
        expect(issues[i]![1].startsWith(message)).toBe(true)
      })
    })
  }

  test("draft-4 forms: items as a tuple with additionalItems false, boolean exclusiveMaximum, nullable", () => {
    const s = {
      type: "object",
      properties: {
        pair: { type: "array", items: [{ type: "string" }, { type: "number" }], additionalItems: false },
        p: { type: "number", maximum: 1, exclusiveMaximum: true },
        n: { type: "string", nullable: true }
      }
    }
    expect(validateJsonSchema(s, { pair: ["a", 1], p: 0.5, n: null })).toEqual([])
    expect(validateJsonSchema(s, { pair: ["a", "b", 3], p: 1 }).map((i) => i.message)).toEqual([
      'Expected number, got "b"',
      "Expected at most 2 items, got 3",
      "Expected a number < 1, got 1"
    ])
  })

  test("oneOf: the closest form's problems; more than one match is said", () => {
    const s = {
      type: "object",
      properties: {
        shape: {
          oneOf: [
            { type: "object", properties: { r: { type: "number" } }, required: ["r"] },
            { type: "object", properties: { w: { type: "number" }, h: { type: "number" } }, required: ["w", "h"] }
          ]
        },
        n: { oneOf: [{ type: "number" }, { type: "integer" }] }
      }
    }
    expect(validateJsonSchema(s, { shape: { w: 1 } }).map((i) => [(i.path ?? []).join("."), i.message])).toEqual([["shape.h", "Missing key"]])
    expect(validateJsonSchema(s, { n: 2 })[0]?.message).toContain("matches 2")
    expect(validateJsonSchema(s, { n: 2.5 })).toEqual([])
  })

  test("a schema that refers to itself checks nested values and stops on a $ref loop", () => {
    const tree = { type: "object", properties: { name: { type: "string" }, children: { type: "array", items: { $ref: "#" } } }, required: ["name"] }
    expect(validateJsonSchema(tree, { name: "a", children: [{ name: "b", children: [{}] }] }).map((i) => (i.path ?? []).join("."))).toEqual([
      "children.0.children.0.name"
    ])
    expect(validateJsonSchema({ $ref: "#" }, { a: 1 })).toEqual([])
  })
})

const plain = (parameters: PlainTool["parameters"]): PlainTool => ({
  description: "Deploys",
  ...(parameters !== undefined ? { parameters } : {}),
  execute: async (args: unknown) => `ran with ${JSON.stringify(args)}`
})

describe("a plain tool with a JSON Schema", () => {
  test("invalid arguments are answered with every problem and the tool does not run; valid ones reach it", async () => {
    const cwd = tempDir()
    const tool = fromPlain("deploy", plain(schema))
    const bad = await Effect.runPromise(toolCall(tool, { name: 5, target: { hots: "x" } }, { cwd }))
    expect(bad.failure.reason).toBe("invalid-arguments")
    expect(bad.failure.message).toBe(
      "The deploy tool was called with invalid arguments: name: Expected string, got 5; target.host: Missing key; target.hots: Unexpected key (the keys are host, port). Please rewrite the input so it satisfies the schema."
    )
    const ok = await Effect.runPromise(toolCall(tool, { name: "a", tags: ["x"] }, { cwd }))
    expect(ok.success.output).toBe('ran with {"name":"a","tags":["x"]}')
    const notObject = await Effect.runPromise(toolCall(tool, "name=a", { cwd }))
    expect(notObject.failure.reason).toBe("invalid-arguments")
  })

  test("null: an optional field sent as null counts as absent; a required field that may be null keeps its null; one that may not is told", async () => {
    const cwd = tempDir()
    const tool = fromPlain(
      "nulls",
      plain({ type: "object", properties: { note: { type: "string" }, parent: { type: ["string", "null"] } }, required: ["parent"] })
    )
    const kept = await Effect.runPromise(toolCall(tool, { note: null, parent: null }, { cwd }))
    expect(kept.success.output).toBe('ran with {"parent":null}')
    const given = await Effect.runPromise(toolCall(tool, { note: "x", parent: "p" }, { cwd }))
    expect(given.success.output).toBe('ran with {"note":"x","parent":"p"}')
    const strict = fromPlain("strict", plain({ type: "object", properties: { parent: { type: "string" } }, required: ["parent"] }))
    const refused = await Effect.runPromise(toolCall(strict, { parent: null }, { cwd }))
    expect(refused.failure.message).toContain("parent: Missing key")
  })

  test("a call is a permission under the tool's id: a rule that asks is asked (denied here, with no one to answer)", async () => {
    const cwd = tempDir()
    const denied = await Effect.runPromise(
      toolCall(
        fromPlain("deploy", plain(schema)),
        { name: "a" },
        {
          cwd,
          rules: [
            { permission: "*", pattern: "*", action: "allow" },
            { permission: "deploy", pattern: "*", action: "ask" }
          ]
        }
      )
    )
    expect(denied.failure.reason).toBe("permission")
    const allowed = await Effect.runPromise(
      toolCall(
        fromPlain("other", plain(schema)),
        { name: "a" },
        {
          cwd,
          rules: [
            { permission: "*", pattern: "*", action: "allow" },
            { permission: "deploy", pattern: "*", action: "ask" }
          ]
        }
      )
    )
    expect(allowed.success.output).toContain("ran with")
  })

  const problems: ReadonlyArray<readonly [string, PlainTool["parameters"], string | undefined]> = [
    ["no parameters", undefined, undefined],
    ["an object schema", { type: "object", properties: { a: { type: "string" } } }, undefined],
    ["properties without type", { properties: { a: { type: "string" } } }, undefined],
    ["a string schema", { type: "string" }, 'the parameters must describe an object of arguments ("type": "object"), not "string"'],
    ["properties as a list", { type: "object", properties: ["a"] }, "`properties` must be an object of property schemas"],
    ["required as a string", { type: "object", required: "a" }, "`required` must be a list of property names"],
    ["not a schema", "a: string" as unknown as Record<string, unknown>, "`parameters` must be an Effect Schema or a JSON Schema object"]
  ]
  for (const [name, parameters, problem] of problems) {
    test(`parameters: ${name} → ${problem ?? "usable"}`, () => {
      expect(plainToolProblem(plain(parameters))).toBe(problem)
    })
  }
})
