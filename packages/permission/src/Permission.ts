import { Context, Effect, Layer, Schema } from "effect"
import { Bus, Ids } from "@reins/domain"
import { defaultRules, evaluate, isDisabled, type Rule } from "./Rules.ts"

/** What a tool asks to do: a permission and the subjects it touches (paths, commands). */
export interface AskRequest {
  readonly sessionID: string
  readonly permission: string
  readonly patterns: ReadonlyArray<string>
  /** Patterns that "always" would allow from now on (e.g. `git status *`). */
  readonly always: ReadonlyArray<string>
  readonly callID?: string
  readonly title?: string
}

export type Reply = "once" | "always" | "reject"

/** A question shown to a person; the CLI provides one on a TTY. */
export interface Prompter {
  ask(request: AskRequest & { readonly id: string; readonly rule?: Rule }): Effect.Effect<{ reply: Reply; message?: string }>
}

/** Rules in force, what "ask" becomes without a person, and an optional interactive prompter. */
export interface PermissionSettings {
  readonly rules: ReadonlyArray<Rule>
  readonly nonInteractive: "allow" | "deny"
  readonly prompter?: Prompter
}

export const PermissionSettings = Context.Reference<PermissionSettings>("reins/permission/Settings", {
  defaultValue: () => ({ rules: defaultRules, nonInteractive: "deny" })
})

/** A tool call that may not run; the message is written for the model. */
export class PermissionError extends Schema.TaggedError<PermissionError>()("PermissionError", {
  reason: Schema.Literals(["denied", "rejected"]),
  permission: Schema.String,
  pattern: Schema.String,
  message: Schema.String
}) {}

/** Decides tool permissions: rules first, then a person or the non-interactive policy. */
export class Permission extends Context.Service<Permission, {
  ask(request: AskRequest): Effect.Effect<void, PermissionError>
  /** Tools that are denied outright and should not be offered to the model. */
  isDisabled(tool: string): boolean
  readonly rules: ReadonlyArray<Rule>
}>()("reins/permission/Permission") {
  static readonly layer = Layer.effect(
    Permission,
    Effect.gen(function* () {
      const settings = yield* PermissionSettings
      const bus = yield* Bus
      const ids = yield* Ids
      const granted = new Map<string, Array<Rule>>()

      const decide = Effect.fnUntraced(function* (request: AskRequest, pattern: string, rule: Rule | undefined) {
        const id = yield* ids.next("per")
        yield* bus.publish({
          type: "permission.asked",
          id,
          sessionID: request.sessionID,
          permission: request.permission,
          patterns: [...request.patterns],
          always: [...request.always],
          callID: request.callID
        })
        const answer = settings.prompter
          ? yield* settings.prompter.ask({ ...request, id, rule })
          : { reply: settings.nonInteractive === "allow" ? ("once" as const) : ("reject" as const), message: undefined }
        yield* bus.publish({
          type: "permission.replied",
          id,
          sessionID: request.sessionID,
          reply: answer.reply,
          by: settings.prompter ? "user" : "policy"
        })
        if (answer.reply === "always") {
          const list = granted.get(request.sessionID) ?? []
          for (const always of request.always) list.push({ permission: request.permission, pattern: always, action: "allow" })
          granted.set(request.sessionID, list)
        }
        if (answer.reply === "reject") {
          const why = settings.prompter
            ? answer.message
              ? `The user rejected this ${request.permission} call with this message: ${answer.message}`
              : `The user rejected permission for ${request.permission} on "${pattern}". Do not retry it; ask the user how to proceed.`
            : `Permission for ${request.permission} on "${pattern}" needs approval, and this run is non-interactive (policy: deny). ` +
              `Do not retry it; find another way or tell the user to re-run with --permission allow or an allow rule in reins.json.`
          return yield* new PermissionError({ reason: "rejected", permission: request.permission, pattern, message: why })
        }
      })

      const ask = Effect.fn("Permission.ask")(function* (request: AskRequest) {
        yield* Effect.annotateCurrentSpan({ "permission.name": request.permission })
        for (const pattern of request.patterns) {
          const rules = [...settings.rules, ...(granted.get(request.sessionID) ?? [])]
          const { action, rule } = evaluate(rules, request.permission, pattern)
          if (action === "allow") continue
          if (action === "deny") {
            return yield* new PermissionError({
              reason: "denied",
              permission: request.permission,
              pattern,
              message: `The user's permission rules deny ${request.permission} for "${pattern}". Do not retry it; choose a different approach.`
            })
          }
          yield* decide(request, pattern, rule)
        }
      })

      return Permission.of({
        ask,
        isDisabled: (tool) => isDisabled(settings.rules, tool),
        rules: settings.rules
      })
    })
  )
}
