import { Clock, Context, Effect, Layer, Random } from "effect"

/** Prefixes of the ids reins hands out: sessions, messages, parts, permission asks, saved grants. */
export type Prefix = "ses" | "msg" | "prt" | "per" | "grt"

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
const RANDOM_LENGTH = 14

/**
 * Builds a time-ordered id: 12 hex digits of (milliseconds × 4096 + a per-ms counter) followed by
 * random base62, so ids sort by creation time as plain strings.
 */
export const makeAscending = () => {
  let lastMs = 0
  let counter = 0
  return (prefix: Prefix, nowMs: number, random: () => number): string => {
    if (nowMs > lastMs) {
      lastMs = nowMs
      counter = 0
    } else {
      counter++
    }
    const stamp = (BigInt(lastMs) * 4096n + BigInt(counter)) & 0xffffffffffffn
    let rand = ""
    for (let i = 0; i < RANDOM_LENGTH; i++) rand += ALPHABET[Math.floor(random() * 62)]
    return `${prefix}_${stamp.toString(16).padStart(12, "0")}${rand}`
  }
}

/** Hands out ascending ids; time comes from the Clock and randomness from Effect's Random, so tests can control both. */
export class Ids extends Context.Service<
  Ids,
  {
    next(prefix: Prefix): Effect.Effect<string>
  }
>()("reins/domain/Ids") {
  static readonly layer = Layer.sync(Ids, () => {
    const ascending = makeAscending()
    return Ids.of({
      next: (prefix) =>
        Effect.map(Effect.all([Clock.currentTimeMillis, Random.Random]), ([ms, random]) => ascending(prefix, ms, () => random.nextDoubleUnsafe()))
    })
  })
}
