import type { Usage } from "@reins/domain"

/** The model's stream, normalised: what the session processor demultiplexes (T2). */
export type ModelEvent =
  | { readonly type: "start-step" }
  | { readonly type: "text-start"; readonly id: string }
  | { readonly type: "text-delta"; readonly id: string; readonly text: string }
  | { readonly type: "text-end"; readonly id: string }
  /** `metadata`: the provider's metadata of the reasoning (a thinking signature, encrypted reasoning), to replay it (T22). */
  | { readonly type: "reasoning-start"; readonly id: string; readonly metadata?: StreamMetadata }
  | { readonly type: "reasoning-delta"; readonly id: string; readonly text: string; readonly metadata?: StreamMetadata }
  | { readonly type: "reasoning-end"; readonly id: string; readonly metadata?: StreamMetadata }
  | { readonly type: "tool-input-start"; readonly callID: string; readonly name: string }
  | { readonly type: "tool-input-delta"; readonly callID: string; readonly delta: string }
  | { readonly type: "tool-input-end"; readonly callID: string }
  | {
      readonly type: "tool-call"
      readonly callID: string
      readonly name: string
      readonly input: unknown
      /** Set when the model named an unknown tool or sent unparseable arguments. */
      readonly invalid?: string
      /** The provider's metadata of the call (Gemini's thought signature), to replay it (T22). */
      readonly metadata?: StreamMetadata
    }
  | { readonly type: "finish-step"; readonly finishReason: string; readonly usage: Usage; readonly cost: number }
  | { readonly type: "retry"; readonly attempt: number; readonly delayMs: number; readonly message: string }

/** Provider metadata, by provider key (`{ anthropic: { signature } }`). */
export type StreamMetadata = Readonly<Record<string, Record<string, unknown>>>

/** A tool as the model sees it. */
export interface ToolSpec {
  readonly id: string
  readonly description: string
  readonly parameters: Record<string, unknown>
}
