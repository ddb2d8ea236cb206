// LSP's base protocol: each JSON-RPC message is a `Content-Length: N` header block, a blank line, then N bytes of JSON.

/** A message too large to be one a language server sends for diagnostics: the stream is given up. */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024

/** A message framed for the wire. */
export const encode = (message: unknown): Buffer => {
  const body = Buffer.from(JSON.stringify(message), "utf8")
  return Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`, "ascii"), body])
}

const HEADER_END = Buffer.from("\r\n\r\n", "ascii")

/** What a chunk of the stream completed: the messages decoded, and a problem that ends the stream. */
export interface Decoded {
  readonly messages: ReadonlyArray<unknown>
  readonly error?: string
}

const MAX_HEADER_BYTES = 8192

/**
 * Decodes a byte stream into messages as chunks arrive (a message may span chunks, a chunk hold several). A body's
 * chunks are kept as they come and joined once it is complete: linear in the message, however it is split.
 */
export class Decoder {
  /** Bytes not yet part of a known body: a header being read. */
  private head: Buffer = Buffer.alloc(0)
  /** The body being read: its size, its chunks so far and their length. */
  private body: { readonly size: number; readonly chunks: Array<Buffer>; length: number } | undefined
  private failed = false

  push(chunk: Buffer): Decoded {
    if (this.failed) return { messages: [] }
    const messages: Array<unknown> = []
    let rest = chunk
    while (rest.length > 0) {
      if (this.body !== undefined) {
        const body = this.body
        const take = Math.min(body.size - body.length, rest.length)
        body.chunks.push(rest.subarray(0, take))
        body.length += take
        rest = rest.subarray(take)
        if (body.length < body.size) break
        this.body = undefined
        const parsed = parseJson(Buffer.concat(body.chunks, body.size).toString("utf8"))
        // a body that is not JSON is skipped: the framing around it is intact
        if (parsed.ok) messages.push(parsed.value)
        continue
      }
      // a header is small: it alone is joined with what came before
      const head = this.head.length === 0 ? rest : Buffer.concat([this.head, rest])
      const end = head.indexOf(HEADER_END)
      if (end < 0) {
        if (head.length > MAX_HEADER_BYTES) return this.fail(messages, "a header longer than 8 KiB")
        this.head = Buffer.from(head)
        break
      }
      if (end > MAX_HEADER_BYTES) return this.fail(messages, "a header longer than 8 KiB")
      this.head = Buffer.alloc(0)
      const header = head.subarray(0, end).toString("ascii")
      const length = /(?:^|\r\n)content-length:\s*(\d+)\s*(?:\r\n|$)/i.exec(header)?.[1]
      if (length === undefined) return this.fail(messages, `a header without Content-Length: ${JSON.stringify(header.slice(0, 200))}`)
      const size = Number(length)
      if (size > MAX_MESSAGE_BYTES) return this.fail(messages, `a message of ${size} bytes`)
      this.body = { size, chunks: [], length: 0 }
      rest = head.subarray(end + HEADER_END.length)
      if (size === 0) {
        this.body = undefined
      }
    }
    return { messages }
  }

  private fail(messages: ReadonlyArray<unknown>, error: string): Decoded {
    this.failed = true
    this.head = Buffer.alloc(0)
    this.body = undefined
    return { messages, error }
  }
}

const parseJson = (text: string): { readonly ok: true; readonly value: unknown } | { readonly ok: false } => {
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch {
    return { ok: false }
  }
}
