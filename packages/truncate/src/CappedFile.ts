import * as fs from "node:fs"

/** What a capped spill file left out of the middle of an output. */
export interface Dropped {
  readonly bytes: number
  /** Line breaks in the dropped bytes: whole lines when the cut fell on line ends. */
  readonly lines: number
}

const NEWLINE = 0x0a
/** How far the cut looks for a line end, back from the end of the head and on from the start of the tail. */
const ALIGN_WINDOW = 64 * 1024
/** The buffer used to move bytes inside the file when it is closed. */
const COPY_BUFFER = 1024 * 1024

const countNewlines = (buf: Buffer, from = 0, to = buf.length) => {
  let n = 0
  let i = from - 1
  while ((i = buf.indexOf(NEWLINE, i + 1)) !== -1 && i < to) n++
  return n
}

/**
 * Copies `length` bytes from one descriptor to another (or forward within one, to a lower offset)
 * and counts the line breaks copied.
 */
const copy = (buffer: Buffer, from: number, fromAt: number, to: number, toAt: number, length: number) => {
  let newlines = 0
  for (let done = 0; done < length; ) {
    const n = fs.readSync(from, buffer, 0, Math.min(buffer.length, length - done), fromAt + done)
    if (n === 0) break
    newlines += countNewlines(buffer, 0, n)
    let off = 0
    while (off < n) off += fs.writeSync(to, buffer, off, n - off, toAt + done + off)
    done += n
  }
  return newlines
}

/** The marker line that stands where the middle of the output was. */
export const droppedMarker = (dropped: Dropped, maxBytes: number) =>
  `[reins: ${dropped.bytes} bytes (${dropped.lines} lines) of the output were dropped here: ` +
  `the file keeps the first and the last part, up to tool_output.spill_max_bytes (${maxBytes} bytes)]\n`

/**
 * A spill file with a size cap: the first half of the cap holds the start of the output, the second
 * half is a ring of its most recent bytes. While the output fits, the file is the output. When it
 * does not, `finish` puts the ring in order after the head, cut on line ends, with a marker line
 * saying what was dropped. Writes are synchronous, so nothing queues in memory behind the disk.
 * Methods throw the file system's errors; the caller maps them.
 */
export class CappedFile {
  private readonly headMax: number
  private readonly ringMax: number
  private headBytes = 0
  private headNewlines = 0
  /** Bytes received after the head; the ring holds the last `ringMax` of them. */
  private afterHead = 0

  constructor(
    private readonly fd: number,
    /** The file's path: `finish` parks part of the ring in a scratch file next to it. */
    private readonly path: string,
    readonly maxBytes: number
  ) {
    this.headMax = Math.floor(maxBytes / 2)
    this.ringMax = maxBytes - this.headMax
  }

  write(chunk: Buffer): void {
    let rest = chunk
    if (this.headBytes < this.headMax) {
      const n = Math.min(this.headMax - this.headBytes, rest.length)
      const part = rest.subarray(0, n)
      this.pwrite(part, this.headBytes)
      this.headBytes += n
      this.headNewlines += countNewlines(part)
      rest = rest.subarray(n)
    }
    // bytes the ring would overwrite within this same chunk are never written
    if (rest.length > this.ringMax) {
      this.afterHead += rest.length - this.ringMax
      rest = rest.subarray(rest.length - this.ringMax)
    }
    while (rest.length > 0) {
      const at = this.afterHead % this.ringMax
      const n = Math.min(this.ringMax - at, rest.length)
      this.pwrite(rest.subarray(0, n), this.headMax + at)
      this.afterHead += n
      rest = rest.subarray(n)
    }
  }

  /**
   * Finishes the file; `totalNewlines` counts the line breaks of the whole output. Returns what was
   * dropped, or undefined when the file holds all of it. Does not close the descriptor.
   */
  finish(totalNewlines: number): Dropped | undefined {
    if (this.afterHead <= this.ringMax) return undefined
    const buffer = Buffer.allocUnsafe(COPY_BUFFER)
    // the head ends after its last line break, if there is one near its end
    const look = Math.min(this.headMax, ALIGN_WINDOW)
    this.pread(buffer, look, this.headMax - look)
    const lastBreak = buffer.subarray(0, look).lastIndexOf(NEWLINE)
    const keepHead = lastBreak === -1 ? this.headMax : this.headMax - look + lastBreak + 1
    // from its oldest byte the ring is [start, ringMax) then [0, start); the tail begins after
    // the first line break, if there is one near its start
    const start = this.afterHead % this.ringMax
    const olderLength = this.ringMax - start
    const seen = Math.min(ALIGN_WINDOW, this.ringMax)
    const first = Math.min(olderLength, seen)
    this.pread(buffer, first, this.headMax + start)
    if (first < seen) this.pread(buffer.subarray(first), seen - first, this.headMax)
    const firstBreak = buffer.subarray(0, seen).indexOf(NEWLINE)
    const skip = firstBreak === -1 || firstBreak === this.ringMax - 1 ? 0 : firstBreak + 1
    const older = { from: this.headMax + start + Math.min(skip, olderLength), length: Math.max(0, olderLength - skip) }
    const newerSkip = Math.max(0, skip - olderLength)
    const newer = { from: this.headMax + newerSkip, length: start - newerSkip }
    // the newer piece lies where the older one must go: park it in a scratch file
    const scratch = `${this.path}.tail`
    const spare = fs.openSync(scratch, "w+")
    try {
      const newerNewlines = copy(buffer, this.fd, newer.from, spare, 0, newer.length)
      const olderNewlines = this.countNewlines(buffer, older)
      const tailBytes = older.length + newer.length
      const dropped = {
        bytes: this.headMax + this.afterHead - keepHead - tailBytes,
        lines: Math.max(0, totalNewlines - this.headNewlines - olderNewlines - newerNewlines)
      }
      const marker = Buffer.from(`${lastBreak === -1 ? "\n" : ""}${droppedMarker(dropped, this.maxBytes)}`)
      const to = keepHead + marker.length
      this.move(buffer, older.from, to, older.length)
      this.pwrite(marker, keepHead)
      copy(buffer, spare, 0, this.fd, to + older.length, newer.length)
      fs.ftruncateSync(this.fd, to + tailBytes)
      return dropped
    } finally {
      fs.closeSync(spare)
      fs.rmSync(scratch, { force: true })
    }
  }

  private pwrite(buf: Buffer, position: number) {
    let off = 0
    while (off < buf.length) off += fs.writeSync(this.fd, buf, off, buf.length - off, position + off)
  }

  private pread(buf: Buffer, length: number, position: number) {
    let off = 0
    while (off < length) {
      const n = fs.readSync(this.fd, buf, off, length - off, position + off)
      if (n === 0) break
      off += n
    }
  }

  /** Moves a range inside the file, overlapping or not (memmove). */
  private move(buffer: Buffer, from: number, to: number, length: number) {
    if (from === to || length === 0) return
    if (to < from) return void copy(buffer, this.fd, from, this.fd, to, length)
    for (let end = length; end > 0; ) {
      const n = Math.min(buffer.length, end)
      this.pread(buffer, n, from + end - n)
      let off = 0
      while (off < n) off += fs.writeSync(this.fd, buffer, off, n - off, to + end - n + off)
      end -= n
    }
  }

  private countNewlines(buffer: Buffer, range: { readonly from: number; readonly length: number }) {
    let n = 0
    for (let done = 0; done < range.length; ) {
      const length = Math.min(buffer.length, range.length - done)
      this.pread(buffer, length, range.from + done)
      n += countNewlines(buffer, 0, length)
      done += length
    }
    return n
  }
}
