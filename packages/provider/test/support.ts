// The provider tests' common set-up: the user's "hi", the Provider service over given settings, and
// what a stream's events say.
import { Effect, Stream } from "effect"
import type { ModelEvent } from "../src/ModelEvent.ts"
import { Provider, ProviderSettings, type ProviderRequest } from "../src/Provider.ts"
import { RetryPolicy } from "../src/Retry.ts"

/** One user message, "hi". */
export const hi = [
  {
    info: { id: "msg_1", sessionID: "s", role: "user" as const, time: { created: 0 } },
    parts: [{ id: "p", sessionID: "s", messageID: "msg_1", type: "text" as const, text: "hi" }]
  }
]

/** Gives an effect the Provider service over these settings (and this retry policy, else the default one). */
export const withProvider =
  (settings: ProviderSettings, policy?: RetryPolicy) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, Exclude<R, Provider>> => {
    const provided = effect.pipe(Effect.provide(Provider.layer), Effect.provideService(ProviderSettings, settings))
    return policy ? Effect.provideService(provided, RetryPolicy, policy) : provided
  }

/** Streams one request to the end and collects its events. */
export const streamAll = (request: ProviderRequest) => Effect.flatMap(Provider, (provider) => Stream.runCollect(provider.stream(request)))

/** The text the events streamed. */
export const text = (events: ReadonlyArray<ModelEvent>) => events.flatMap((e) => (e.type === "text-delta" ? [e.text] : [])).join("")
