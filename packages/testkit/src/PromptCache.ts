/**
 * A model of Anthropic's prompt caching, for the scripted Anthropic server's usage figures.
 *
 * A request is a sequence of blocks in Anthropic's prefix order: each tool definition, each system
 * block, then each content block of each message. A block with `cache_control` is a breakpoint.
 * As Anthropic does, every breakpoint looks back over the block boundaries ending at it and up to
 * `LOOKBACK - 1` blocks before it for the longest prefix cached by an earlier request (same bytes,
 * `cache_control` itself not counted): that prefix is a cache read. The tokens from there to the
 * last breakpoint are a cache write, and the prefixes ending at this request's breakpoints are
 * cached for later requests. What follows the last breakpoint is uncached input.
 *
 * Tokens are counted as characters ÷ 4, rounded up, over the blocks' JSON (without `cache_control`;
 * the first block of a message carries its role). Not modelled: the 5-minute lifetime (nothing
 * expires), the minimum cacheable length (any marked prefix is cached) and the limit of 4 markers.
 */

/** Anthropic's lookback: a breakpoint finds a cached prefix ending at most 20 blocks before it (itself included). */
export const LOOKBACK = 20

/** What a request is billed as, in Anthropic's usage fields. */
export interface CacheUsage {
  /** Prompt tokens after the last breakpoint (neither read from nor written to the cache). */
  readonly input_tokens: number
  readonly cache_read_input_tokens: number
  readonly cache_creation_input_tokens: number
}

/** Tokens of `chars` characters: a quarter, rounded up. */
export const approxTokens = (chars: number) => Math.ceil(chars / 4)

interface Block {
  readonly text: string
  readonly marked: boolean
}

type Json = Record<string, unknown>

const isRecord = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v)

/** The block's bytes as the cache sees them: its JSON without `cache_control`. */
const blockOf = (value: unknown, prefix = ""): Block => {
  if (!isRecord(value)) return { text: prefix + JSON.stringify(value), marked: false }
  const { cache_control, ...rest } = value
  return { text: prefix + JSON.stringify(rest), marked: cache_control !== undefined && cache_control !== null }
}

/** A Messages API request body as blocks in prefix order: tools, system, messages. */
export const requestBlocks = (body: unknown): ReadonlyArray<Block> => {
  if (!isRecord(body)) return []
  const blocks: Array<Block> = []
  for (const tool of Array.isArray(body.tools) ? body.tools : []) blocks.push(blockOf(tool, "tool:"))
  const system = body.system
  if (typeof system === "string") blocks.push({ text: `system:${JSON.stringify(system)}`, marked: false })
  else if (Array.isArray(system)) for (const block of system) blocks.push(blockOf(block, "system:"))
  for (const message of Array.isArray(body.messages) ? body.messages : []) {
    if (!isRecord(message)) continue
    const role = `${String(message.role)}:`
    const content = message.content
    if (typeof content === "string") blocks.push({ text: role + JSON.stringify(content), marked: false })
    else if (Array.isArray(content)) for (const [i, block] of content.entries()) blocks.push(blockOf(block, i === 0 ? role : ""))
  }
  return blocks
}

/** The prefix caches of one server: what earlier requests marked. */
export class PromptCache {
  private readonly cached = new Set<string>()

  /** Bills one request and caches the prefixes ending at its breakpoints. */
  bill(body: unknown): CacheUsage {
    const blocks = requestBlocks(body)
    // ends[i]: characters of the prefix of blocks 0..i; keys are computed only where looked at
    const ends: Array<number> = []
    let joined = ""
    for (const block of blocks) {
      joined += block.text
      ends.push(joined.length)
    }
    const key = (i: number) => `${ends[i]}:${Bun.hash(joined.slice(0, ends[i]))}`
    const breakpoints = blocks.flatMap((b, i) => (b.marked ? [i] : []))
    let read = -1
    for (const bp of breakpoints) {
      for (let i = bp; i > bp - LOOKBACK && i > read; i--) {
        if (this.cached.has(key(i))) {
          read = i
          break
        }
      }
    }
    const last = breakpoints.at(-1) ?? -1
    const total = approxTokens(joined.length)
    const readTokens = read < 0 ? 0 : approxTokens(ends[read]!)
    const markedTokens = last < 0 ? 0 : approxTokens(ends[last]!)
    const written = Math.max(0, markedTokens - readTokens)
    for (const bp of breakpoints) this.cached.add(key(bp))
    return { input_tokens: total - readTokens - written, cache_read_input_tokens: readTokens, cache_creation_input_tokens: written }
  }

  /** Forgets every cached prefix (as if the cache had expired). */
  clear() {
    this.cached.clear()
  }
}
