import { Effect, Layer } from "effect"
import { SessionStore } from "@reins/storage"
import { type Todo, TodoLists } from "@reins/tool"

/** `todoread`'s port: the session's plan as its last `todowrite` wrote it, read from the store (a resumed session too). */
export const layerTodoLists = Layer.effect(
  TodoLists,
  Effect.map(SessionStore, (store) => ({
    read: (sessionID: string) =>
      Effect.map(store.messages(sessionID).pipe(Effect.orElseSucceed(() => [])), (messages) => {
        for (const message of [...messages].reverse())
          for (const part of [...message.parts].reverse())
            if (part.type === "tool" && part.tool === "todowrite" && part.state.status === "completed" && Array.isArray(part.state.metadata.todos))
              return part.state.metadata.todos as ReadonlyArray<Todo>
        return undefined
      })
  }))
)
