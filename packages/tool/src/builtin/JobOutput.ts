// A background job's output: stdout and stderr as they interleaved, the last `cap` bytes kept in memory
// (older bytes dropped and counted), read back in pieces from a cursor, so each read returns what is new.

const NEWLINE = 0x0a

/** What one read returns: the text from the cursor, and how many bytes before it were dropped unseen. */
export interface OutputPiece {
  readonly text: string
  /** Bytes written since the last read that the cap dropped before they were read. */
  readonly dropped: number
  /** Where the cursor stood before and after the read (byte offsets in the whole output). */
  readonly from: number
  readonly to: number
}

const isContinuation = (byte: number) => (byte & 0xc0) === 0x80

/**
 * Where the last complete UTF-8 character of `buf` ends: a character a pipe chunk split waits for its next bytes.
 * What could never become a character (a stray continuation byte, a lead byte 0xF8–0xFF) is complete as it is.
 */
export const completeEnd = (buf: Buffer) => {
  let j = buf.length - 1
  while (j > 0 && isContinuation(buf[j]!) && buf.length - j < 4) j--
  if (j < 0) return 0
  const lead = buf[j]!
  const size = lead >= 0xf8 ? 1 : lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1
  return j + size <= buf.length ? buf.length : j
}

/** Past the continuation bytes a cut left at the start of `buf` (at most 3: more are not one character's). */
const wholeStart = (buf: Buffer) => {
  let i = 0
  while (i < 3 && i < buf.length && isContinuation(buf[i]!)) i++
  return i
}

/** The capped output of one job; `write` is its process's sink. */
export class JobOutput {
  private chunks: Array<Buffer> = []
  /** The offset of the first byte kept. */
  private start = 0
  private total = 0
  private newlines = 0
  private last = NEWLINE
  /** Where the next incremental read starts. */
  private cursor = 0
  /** The job ended: no more bytes will complete a character, so all is returned. */
  private ended = false

  constructor(
    /** How many of the last bytes are kept. */
    readonly cap: number,
    /** Told after every write (a reader waiting for new output). */
    private readonly onWrite: () => void = () => {}
  ) {}

  write(chunk: Buffer): void {
    if (chunk.length === 0) return
    const kept = chunk.length > this.cap ? Buffer.from(chunk.subarray(chunk.length - this.cap)) : chunk
    this.chunks.push(kept)
    this.start += chunk.length - kept.length
    this.total += chunk.length
    let i = -1
    while ((i = chunk.indexOf(NEWLINE, i + 1)) !== -1) this.newlines++
    this.last = chunk[chunk.length - 1]!
    while (this.total - this.start > this.cap && this.chunks.length > 0) {
      const first = this.chunks[0]!
      const over = this.total - this.start - this.cap
      if (first.length <= over) {
        this.chunks.shift()
        this.start += first.length
      } else {
        this.chunks[0] = first.subarray(over)
        this.start += over
      }
    }
    this.onWrite()
  }

  /** The writer is done: what is kept is returned to its last byte. */
  end(): void {
    this.ended = true
  }

  /** Bytes and lines written so far. */
  get totals(): { readonly bytes: number; readonly lines: number } {
    return { bytes: this.total, lines: this.newlines + (this.last === NEWLINE || this.total === 0 ? 0 : 1) }
  }

  /** The last `bytes` kept, as text (the cursor stays). */
  tail(bytes: number): string {
    const kept = Buffer.concat(this.chunks)
    const cut = kept.subarray(Math.max(0, kept.length - bytes))
    return cut.subarray(cut.length < kept.length ? wholeStart(cut) : 0).toString("utf8")
  }

  /** Whether a read would return something new (a character still missing bytes is not yet). */
  get unread(): boolean {
    return this.cursor < this.total && this.slice(false).to > this.cursor
  }

  /**
   * What came since the last read (`all`: everything kept), and moves the cursor past it. A read that starts where
   * the cap dropped bytes starts at the first whole line kept (or, with none, the first whole character).
   */
  read(all = false): OutputPiece {
    const { bytes, from, to } = this.slice(all)
    this.cursor = to
    return { text: bytes.toString("utf8"), dropped: to - bytes.length - from, from, to }
  }

  private slice(all: boolean): { readonly bytes: Buffer; readonly from: number; readonly to: number } {
    const from = all ? 0 : this.cursor
    const begin = Math.max(from, this.start)
    let buf = Buffer.concat(this.chunks).subarray(begin - this.start)
    let skipped = 0
    if (begin > from && begin > 0) {
      const nl = buf.indexOf(NEWLINE)
      skipped = nl === -1 || nl === buf.length - 1 ? wholeStart(buf) : nl + 1
      buf = buf.subarray(skipped)
    }
    const end = this.ended ? buf.length : completeEnd(buf)
    return { bytes: buf.subarray(0, end), from, to: begin + skipped + end }
  }
}
