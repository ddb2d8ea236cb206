// One step's answer has a size it may not pass: a provider that never ends its answer is stopped, and what it streamed
// is kept cut, so the session stays resumable.
import { ProviderError } from "@reins/provider"

/**
 * The most one step's answer may stream (text, reasoning and tool arguments, in characters): some 8 times the largest
 * output a model is allowed, so only a provider that never ends its answer reaches it, and memory stays bounded.
 */
export const MAX_RESPONSE_CHARS = 4 * 1024 * 1024

export const tooLong = (streamed: number) =>
  new ProviderError({
    reason: "too-long",
    message: `The model's answer grew past ${Math.round(streamed / 1024 / 1024)} MiB in one step without ending, so it was stopped (the provider may be stuck). Its start and end are kept; send a new prompt to go on, or try another model.`
  })

/** What is kept of a text an answer that never ended streamed: its start and its end, the middle said cut. */
export const KEPT_OF_TOO_LONG = 16 * 1024
export const cutAnswer = (text: string) =>
  `${text.slice(0, KEPT_OF_TOO_LONG / 2)}\n\n[… ${text.length - KEPT_OF_TOO_LONG} characters cut: the answer grew without end and was stopped …]\n\n${text.slice(-KEPT_OF_TOO_LONG / 2)}`
