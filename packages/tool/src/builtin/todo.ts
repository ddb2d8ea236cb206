import { Context, Effect, Schema } from "effect"
import { define } from "../Tool.ts"
import { fail } from "./Files.ts"

const Status = Schema.Literals(["pending", "in_progress", "completed", "cancelled"])
const Priority = Schema.Literals(["high", "medium", "low"])

/** One item of a session's plan, as opencode's `todowrite` shapes it. */
// the descriptions are short: every request of every turn carries them (a small local model's window is 8k)
export const Todo = Schema.Struct({ id: Schema.String, content: Schema.String, status: Status, priority: Priority })
export type Todo = typeof Todo.Type

/**
 * Where `todoread` finds a session's plan: the runtime reads the last `todowrite` of the session from its store (a
 * resumed session, another process); the default has none.
 */
export const TodoLists = Context.Reference<{ read(sessionID: string): Effect.Effect<ReadonlyArray<Todo> | undefined> }>("reins/tool/TodoLists", {
  defaultValue: () => ({ read: () => Effect.succeed(undefined) })
})

const MARK: Record<Todo["status"], string> = { pending: "[ ]", in_progress: "[~]", completed: "[x]", cancelled: "[-]" }

/** The plan as the model reads it back: one line per item, then the counts. */
export const renderTodos = (todos: ReadonlyArray<Todo>): string => {
  if (todos.length === 0) return "The todo list is empty."
  const done = todos.filter((t) => t.status === "completed").length
  const open = todos.filter((t) => t.status === "pending" || t.status === "in_progress").length
  return [
    ...todos.map((t) => `${MARK[t.status]} ${t.content}${t.priority === "high" ? " (high)" : ""}  {id: ${t.id}}`),
    "",
    `${done} of ${todos.length} done, ${open} open.`
  ].join("\n")
}

const DESCRIPTION =
  "Write the whole todo list (replaces the last) for work of 3+ steps: one item in_progress at a time, completed as soon as done. The user sees it."

/** `todowrite`: replaces the session's plan; the plan is the call's metadata (`todos`), shown to the user and editors. */
export const todowrite = define("todowrite", {
  description: DESCRIPTION,
  parameters: Schema.Struct({ todos: Schema.Array(Todo) }),
  truncate: false,
  execute: (args) =>
    Effect.gen(function* () {
      const ids = new Set<string>()
      for (const t of args.todos) {
        if (ids.has(t.id)) return yield* fail(`Two items have the id ${t.id}: give each item its own id, and send the whole list again.`)
        ids.add(t.id)
      }
      const open = args.todos.filter((t) => t.status === "pending" || t.status === "in_progress").length
      return { title: `${open} open of ${args.todos.length}`, output: renderTodos(args.todos), metadata: { todos: args.todos } }
    })
})

/** `todoread`: the session's plan as last written (also by an earlier process). */
export const todoread = Effect.gen(function* () {
  const lists = yield* TodoLists
  return yield* define("todoread", {
    description: "Read the todo list as last written.",
    parameters: Schema.Struct({}),
    truncate: false,
    execute: (_args, ctx) =>
      Effect.map(lists.read(ctx.sessionID), (todos) =>
        todos === undefined
          ? { title: "no list", output: "No todo list yet: write one with todowrite.", metadata: { todos: [] } }
          : {
              title: `${todos.filter((t) => t.status === "pending" || t.status === "in_progress").length} open of ${todos.length}`,
              output: renderTodos(todos),
              metadata: { todos }
            }
      )
  })
})
