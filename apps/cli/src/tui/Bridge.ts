// The permission prompter of the interactive session: a question the runtime asks waits for the UI's answer.
import { Effect } from "effect"
import type { Answer, Pending, Prompter } from "@reins/permission"

/** A question waiting on screen, and how to answer it. */
export interface OpenQuestion {
  readonly request: Pending
  readonly answer: (answer: Answer) => void
}

/**
 * Questions asked at once (parallel tool calls) wait in order; the UI shows the first. A question
 * closed from elsewhere (a covering "always", an interrupted turn) leaves the queue.
 */
export const makePermissionBridge = () => {
  let open: Array<OpenQuestion> = []
  const listeners = new Set<(first: OpenQuestion | undefined) => void>()
  const notify = () => {
    for (const l of listeners) l(open[0])
  }
  const close = (id: string) => {
    const before = open.length
    open = open.filter((q) => q.request.id !== id)
    if (open.length !== before) notify()
  }
  const prompter: Prompter = {
    ask: (request) =>
      Effect.callback<Answer>((resume) => {
        open.push({
          request,
          answer: (answer) => {
            close(request.id)
            resume(Effect.succeed(answer))
          }
        })
        notify()
        return Effect.sync(() => close(request.id))
      })
  }
  return {
    prompter,
    /** Calls `listener` with the question to show (undefined: none) now and on every change. */
    subscribe: (listener: (first: OpenQuestion | undefined) => void) => {
      listeners.add(listener)
      listener(open[0])
      return () => void listeners.delete(listener)
    }
  }
}

export type PermissionBridge = ReturnType<typeof makePermissionBridge>
