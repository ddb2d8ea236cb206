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

/** Where the last complete UTF-8 character of `buf` ends (a character split by a pipe chunk waits for the next read). */
const completeEnd = (buf: Buffer) => {
  if (buf.length === 0) return 0
  let j = buf.length - 1
  while (j > 0 && (buf[j]! & 0xc0) === 0x80 && buf.length - j < 4) j--
  const lead = buf[j]!
  const size = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1
  return j + size <= buf.length ? buf.length : j
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

  /** Bytes and lines written so far. */
  get totals(): { readonly bytes: number; readonly lines: number } {
    return { bytes: this.total, lines: this.newlines + (this.last === NEWLINE || this.total === 0 ? 0 : 1) }
  }

  /** The last `bytes` kept, as text (the cursor stays). */
  tail(bytes: number): string {
    const kept = Buffer.concat(this.chunks)
    return kept.subarray(Math.max(0, kept.length - bytes)).toString("utf8")
  }

  /** Whether output came that the last read did not return. */
  get unread(): boolean {
    return this.cursor < this.total
  }

  /**
   * What came since the last read (`all`: everything kept), and moves the cursor past it. A read that starts where
   * the cap dropped bytes starts at the first whole line kept.
   */
  read(all = false): OutputPiece {
    const from = all ? 0 : this.cursor
    const begin = Math.max(from, this.start)
    let buf = Buffer.concat(this.chunks).subarray(begin - this.start)
    let skipped = 0
    if (begin > from && begin > 0) {
      const nl = buf.indexOf(NEWLINE)
      skipped = nl === -1 || nl === buf.length - 1 ? 0 : nl + 1
      buf = buf.subarray(skipped)
    }
    const end = completeEnd(buf)
    this.cursor = begin + skipped + end
    return { text: buf.subarray(0, end).toString("utf8"), dropped: begin + skipped - from, from, to: this.cursor }
  }
}
