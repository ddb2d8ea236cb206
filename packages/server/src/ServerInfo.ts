import { Context, type Effect } from "effect"
import type { ModelRef } from "@reins/domain"

/** What the server tells about itself and how it picks a turn's model: given by the command that starts it. */
export class ServerInfo extends Context.Service<
  ServerInfo,
  {
    /** The project directory the server's sessions work in. */
    readonly directory: string
    readonly version: string
    /** The merged config with secrets redacted (GET /config). */
    readonly config: unknown
    /** The model catalogue (GET /models). */
    readonly models: unknown
    /** The model of a turn: the prompt's `provider/model` and variant, else the default; fails with a message for the client. */
    resolveModel(input: { readonly model?: string | undefined; readonly variant?: string | undefined }): Effect.Effect<ModelRef, string>
  }
>()("reins/server/ServerInfo") {}
