// LSP's base protocol: each JSON-RPC message is a `Content-Length: N` header block, a blank line, then N bytes of JSON.

/** A message too large to be one a language server sends for diagnostics: the stream is given up. */
export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024

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

/** Decodes a byte stream into messages as chunks arrive (a message may span chunks, a chunk hold several). */
export class Decoder {
  private buffer: Buffer = Buffer.alloc(0)
  private failed = false

  push(chunk: Buffer): Decoded {
    if (this.failed) return { messages: [] }
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk])
    const messages: Array<unknown> = []
    for (;;) {
      const end = this.buffer.indexOf(HEADER_END)
      if (end < 0) {
        if (this.buffer.length > 8192) return this.fail(messages, "a header longer than 8 KiB")
        return { messages }
      }
      const header = this.buffer.subarray(0, end).toString("ascii")
      const length = /(?:^|\r\n)content-length:\s*(\d+)\s*(?:\r\n|$)/i.exec(header)?.[1]
      if (length === undefined) return this.fail(messages, `a header without Content-Length: ${JSON.stringify(header.slice(0, 200))}`)
      const size = Number(length)
      if (size > MAX_MESSAGE_BYTES) return this.fail(messages, `a message of ${size} bytes`)
      const start = end + HEADER_END.length
      if (this.buffer.length < start + size) return { messages }
      const body = this.buffer.subarray(start, start + size).toString("utf8")
      this.buffer = this.buffer.subarray(start + size)
      const parsed = parseJson(body)
      // a body that is not JSON is skipped: the framing around it is intact
      if (parsed.ok) messages.push(parsed.value)
    }
  }

  private fail(messages: ReadonlyArray<unknown>, error: string): Decoded {
    this.failed = true
    this.buffer = Buffer.alloc(0)
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
