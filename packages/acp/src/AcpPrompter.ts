import type { AgentContext, PermissionOption, RequestPermissionResponse, ToolCallContent, ToolCallUpdate } from "@agentclientprotocol/sdk"
import { Effect } from "effect"
import type { Answer, Pending, Prompter, Reply } from "@reins/permission"
import { diffTexts } from "@reins/tool"

/** The client a connection talks to, set once the connection is open (the runtime, and its prompter, are made before). */
export interface ClientRef {
  current: AgentContext | undefined
  /** The ACP session a reins session's question goes to: itself, or the session whose turn started its sub-agent. */
  route: (sessionID: string) => string | undefined
}

/** A client that is not connected yet, routing every session to itself. */
export const clientRef = (): ClientRef => ({ current: undefined, route: (sessionID) => sessionID })

const OPTIONS = (request: Pending): Array<PermissionOption> => [
  { optionId: "once", name: "Allow once", kind: "allow_once" },
  { optionId: "always", name: `Always allow ${request.always.map((p) => `${request.permission} ${p}`).join(", ")}`, kind: "allow_always" },
  { optionId: "reject", name: "Reject", kind: "reject_once" }
]

/** The question's title: what the tool asks to do, and where. */
const title = (request: Pending) => {
  const subject = request.title ?? (request.command?.trim() || request.patterns.join(", "))
  const where = request.directory !== undefined ? ` (in ${request.directory})` : ""
  const opaque = request.opaque !== undefined ? ` — ${request.opaque}; reins cannot see what it runs` : ""
  return `${request.permission}: ${subject}${where}${opaque}`
}

/** What an edit asks to change, as ACP diff content the editor can show beside the question. */
const diffContent = (request: Pending): Array<ToolCallContent> =>
  (request.diffs ?? []).flatMap((d) => {
    const texts = diffTexts(d.diff)
    return texts === undefined ? [] : [{ type: "diff" as const, path: d.path, oldText: d.created ? null : texts.oldText, newText: texts.newText }]
  })

/** The client's answer as reins's: a cancelled question (the turn was cancelled) or an unknown option is a reject. */
export const replyOf = (response: RequestPermissionResponse): Answer => {
  const outcome = response.outcome
  const chosen: Reply | undefined =
    outcome.outcome === "selected" && (outcome.optionId === "once" || outcome.optionId === "always" || outcome.optionId === "reject")
      ? outcome.optionId
      : undefined
  if (outcome.outcome === "cancelled") return { reply: "reject", message: "The user cancelled the turn." }
  return chosen === undefined ? { reply: "reject" } : { reply: chosen }
}

/**
 * Asks permission questions over ACP (`session/request_permission`) with allow once, allow always
 * and reject. A question whose turn is interrupted is withdrawn (the request is cancelled); a client
 * that is gone or fails to answer rejects the call.
 */
export const acpPrompter = (ref: ClientRef): Prompter => ({
  ask: (request) =>
    Effect.gen(function* () {
      const client = ref.current
      const sessionId = ref.route(request.sessionID)
      if (client === undefined || sessionId === undefined)
        return { reply: "reject", message: "No editor is connected to answer the permission question." } satisfies Answer
      const content = diffContent(request)
      const toolCall: ToolCallUpdate = {
        toolCallId: request.callID ?? request.id,
        title: title(request),
        ...(content.length > 0 ? { kind: "edit", content, locations: (request.diffs ?? []).map((d) => ({ path: d.path })) } : {}),
        rawInput: {
          permission: request.permission,
          patterns: request.patterns,
          always: request.always,
          ...(request.command !== undefined ? { command: request.command } : {})
        }
      }
      const response = yield* Effect.tryPromise({
        try: (signal) =>
          client.request(
            "session/request_permission",
            {
              sessionId,
              toolCall,
              options: OPTIONS(request)
            },
            { cancellationSignal: signal, stopWaitingOnCancel: true }
          ),
        catch: (error) => error
      }).pipe(Effect.result)
      if (response._tag === "Failure") {
        yield* Effect.logWarning(
          `The editor did not answer the permission question: ${response.failure instanceof Error ? response.failure.message : String(response.failure)}`
        )
        return { reply: "reject", message: "The editor did not answer the permission question." } satisfies Answer
      }
      return replyOf(response.success)
    })
})
