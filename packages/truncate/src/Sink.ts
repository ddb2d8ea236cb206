import * as fs from "node:fs"
import * as path from "node:path"
import { CappedFile, type Dropped } from "./CappedFile.ts"
import { MemoryGuard } from "./MemoryGuard.ts"
import { SPILL_MAX_BYTES } from "./Settings.ts"
import { spillError, type TruncateError } from "./Spill.ts"

/** What a streamed output left behind. */
export interface Capture {
  /** The whole output, when it stayed within the memory budget. */
  readonly text?: string
  /** The spill file holding the output, when it outgrew the memory budget. */
  readonly file?: string
  /** What the file left out of the middle because the output was larger than its cap. */
  readonly dropped?: Dropped
  /** Whole lines from the start and from the end (bounded), for a view without reading back. */
  readonly head: string
  readonly tail: string
  readonly totalBytes: number
  readonly totalLines: number
  /** Saving to the spill file failed (e.g. the disk is full); counting went on. */
  readonly error?: TruncateError
}

export interface SinkOptions {
  /** Output up to this size stays in memory and never touches the disk. */
  readonly memoryBytes: number
  /** How much of the start and of the end is kept in memory once spilling. */
  readonly keepBytes: number
  /** The spill file's cap: past it, the file keeps the start and the end (default `SPILL_MAX_BYTES`). */
  readonly maxFileBytes?: number
}

export const defaultSinkOptions: SinkOptions = { memoryBytes: 1024 * 1024, keepBytes: 128 * 1024 }

const NEWLINE = 0x0a

/**
 * Receives a command's output as it is produced. Small output stays in memory; past
 * `memoryBytes` everything goes to the spill file as it arrives (synchronously, so nothing queues
 * behind the disk) and only a bounded head and tail stay in memory, so memory is flat however
 * large the output. The file itself is capped at `maxFileBytes` (see `CappedFile`).
 */
export class Sink {
  private chunks: Array<Buffer> = []
  private buffered = 0
  private fd: number | undefined
  private capped: CappedFile | undefined
  private guard: MemoryGuard | undefined
  private dropped: Dropped | undefined
  private spilling = false
  private head: Buffer | undefined
  private tailChunks: Array<Buffer> = []
  private tailBytes = 0
  private bytes = 0
  private newlines = 0
  private last = NEWLINE
  private error: TruncateError | undefined

  constructor(
    readonly file: string,
    private readonly options: SinkOptions = defaultSinkOptions
  ) {}

  write(chunk: Buffer): void {
    if (chunk.length === 0) return
    this.bytes += chunk.length
    let i = -1
    while ((i = chunk.indexOf(NEWLINE, i + 1)) !== -1) this.newlines++
    this.last = chunk[chunk.length - 1]!
    if (!this.spilling) {
      this.chunks.push(chunk)
      this.buffered += chunk.length
      if (this.buffered > this.options.memoryBytes) this.startSpilling()
      return
    }
    this.keepTail(chunk)
    this.toDisk(chunk)
    this.guard?.streamed(chunk.length)
  }

  private startSpilling() {
    this.spilling = true
    // dead pipe buffers pile up only in a large output: guard from here on
    this.guard = new MemoryGuard()
    const all = Buffer.concat(this.chunks)
    this.chunks = []
    this.buffered = 0
    this.head = Buffer.from(all.subarray(0, this.options.keepBytes))
    this.keepTail(all)
    try {
      fs.mkdirSync(path.dirname(this.file), { recursive: true })
      this.fd = fs.openSync(this.file, "w+")
      this.capped = new CappedFile(this.fd, this.file, this.options.maxFileBytes ?? SPILL_MAX_BYTES)
    } catch (e) {
      this.error = spillError(e, this.file)
      return
    }
    this.toDisk(all)
  }

  private keepTail(chunk: Buffer) {
    const keep = this.options.keepBytes
    this.tailChunks.push(chunk.length > keep ? Buffer.from(chunk.subarray(chunk.length - keep)) : chunk)
    this.tailBytes += Math.min(chunk.length, keep)
    while (this.tailChunks.length > 1 && this.tailBytes - this.tailChunks[0]!.length >= keep) {
      this.tailBytes -= this.tailChunks.shift()!.length
    }
  }

  private toDisk(chunk: Buffer) {
    if (this.capped === undefined || this.error) return
    try {
      this.capped.write(chunk)
    } catch (e) {
      this.error = spillError(e, this.file)
      this.closeFd()
    }
  }

  private closeFd() {
    if (this.fd === undefined) return
    try {
      fs.closeSync(this.fd)
    } catch {
      // already closed
    }
    this.fd = undefined
    this.capped = undefined
  }

  /** A look while the command runs: totals so far, the last lines (up to `bytes`), the file. */
  peek(bytes = 2048): { totalBytes: number; totalLines: number; tail: string; file?: string } {
    const source = this.spilling ? this.tailChunks : this.chunks
    const picked: Array<Buffer> = []
    let size = 0
    for (let i = source.length - 1; i >= 0 && size < bytes; i--) {
      picked.unshift(source[i]!)
      size += source[i]!.length
    }
    const all = Buffer.concat(picked)
    const tail = wholeLinesFromEnd(all.length > bytes ? all.subarray(all.length - bytes) : all, all.length <= bytes)
    return {
      totalBytes: this.bytes,
      totalLines: this.newlines + (this.last === NEWLINE || this.bytes === 0 ? 0 : 1),
      tail,
      ...(this.fd !== undefined ? { file: this.file } : {})
    }
  }

  /** Ends the capture; call once, after the producer is done. */
  close(): Capture {
    const totalLines = this.bytes === 0 ? 0 : this.newlines + (this.last === NEWLINE ? 0 : 1)
    if (!this.spilling) {
      const text = Buffer.concat(this.chunks).toString("utf8")
      return { text, head: text, tail: text, totalBytes: this.bytes, totalLines }
    }
    if (this.capped && !this.error) {
      try {
        this.dropped = this.capped.finish(this.newlines)
      } catch (e) {
        this.error = spillError(e, this.file)
      }
    }
    this.closeFd()
    const head = this.head ?? Buffer.alloc(0)
    const tail = Buffer.concat(this.tailChunks)
    const tailFrom = tail.length > this.options.keepBytes ? tail.length - this.options.keepBytes : 0
    return {
      ...(this.error ? { error: this.error } : { file: this.file, ...(this.dropped ? { dropped: this.dropped } : {}) }),
      head: wholeLinesFromStart(head),
      tail: wholeLinesFromEnd(tail.subarray(tailFrom)),
      totalBytes: this.bytes,
      totalLines
    }
  }
}

/** Where the last complete UTF-8 character of `buf` ends. */
const completeEnd = (buf: Buffer) => {
  if (buf.length === 0) return 0
  let j = buf.length - 1
  while (j > 0 && (buf[j]! & 0xc0) === 0x80) j--
  const lead = buf[j]!
  const size = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1
  return j + size <= buf.length ? buf.length : j
}

/** Where the first complete UTF-8 character of `buf` starts. */
const completeStart = (buf: Buffer) => {
  let i = 0
  while (i < buf.length && (buf[i]! & 0xc0) === 0x80) i++
  return i
}

/** The complete lines at the start of a buffer cut at an arbitrary byte (a part-line if none). */
const wholeLinesFromStart = (buf: Buffer) => {
  const end = buf.lastIndexOf(NEWLINE)
  return buf.subarray(0, end === -1 ? completeEnd(buf) : end + 1).toString("utf8")
}

/**
 * The complete lines at the end of a buffer that starts at an arbitrary byte (a part-line if
 * none); `whole` when the buffer starts at the start of the output.
 */
const wholeLinesFromEnd = (buf: Buffer, whole = false) => {
  if (whole) return buf.toString("utf8")
  const start = buf.indexOf(NEWLINE)
  return buf.subarray(start === -1 || start === buf.length - 1 ? completeStart(buf) : start + 1).toString("utf8")
}
