import { describe, expect, test } from "bun:test"
import { todoread, todowrite } from "../src/builtin/todo.ts"
import { runTool, tempDir } from "./helpers.ts"

describe("todowrite / todoread", () => {
  test("the whole list is written: the model reads it back marked, the metadata holds it for the user and editors", async () => {
    const todos = [
      { id: "a", content: "read the failing test", status: "completed", priority: "high" },
      { id: "b", content: "fix the parser", status: "in_progress", priority: "high" },
      { id: "c", content: "update the docs", status: "pending", priority: "low" },
      { id: "d", content: "rewrite in rust", status: "cancelled", priority: "low" }
    ]
    const r = await runTool(todowrite, { todos }, { cwd: tempDir() })
    expect(r._tag).toBe("Success")
    expect(r.success.output).toBe(
      "[x] read the failing test (high)  {id: a}\n[~] fix the parser (high)  {id: b}\n[ ] update the docs  {id: c}\n[-] rewrite in rust  {id: d}\n\n1 of 4 done, 2 open."
    )
    expect(r.success.metadata.todos).toEqual(todos)
    expect(r.success.title).toBe("2 open of 4")
  })

  test("bad lists are refused with what to do: two items with one id, an unknown status", async () => {
    const twice = await runTool(
      todowrite,
      {
        todos: [
          { id: "a", content: "x", status: "pending", priority: "low" },
          { id: "a", content: "y", status: "pending", priority: "low" }
        ]
      },
      { cwd: tempDir() }
    )
    expect(twice._tag).toBe("Failure")
    expect(twice.failure.message).toContain("Two items have the id a")
    const unknown = await runTool(todowrite, { todos: [{ id: "a", content: "x", status: "doing", priority: "low" }] }, { cwd: tempDir() })
    expect(unknown._tag).toBe("Failure")
    expect(unknown.failure.message).toContain("todos.0.status")
  })

  test("todoread without a store to read from says there is no list yet", async () => {
    const r = await runTool(todoread, {}, { cwd: tempDir() })
    expect(r.success.output).toBe("No todo list yet: write one with todowrite.")
  })
})
