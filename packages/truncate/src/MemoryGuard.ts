/** How a guard reads the process's memory and collects garbage; the defaults use Bun's. */
export interface MemoryGuardOptions {
  /** Growth of the resident set allowed before a collection. */
  readonly budgetBytes: number
  /** Bytes streamed between two looks at the resident set. */
  readonly checkEveryBytes: number
  readonly rss: () => number
  readonly collect: () => void
}

export const defaultMemoryGuardOptions: MemoryGuardOptions = {
  budgetBytes: 24 * 1024 * 1024,
  checkEveryBytes: 4 * 1024 * 1024,
  rss: () => process.memoryUsage.rss(),
  collect: () => {
    if (typeof Bun !== "undefined") Bun.gc(true)
  }
}

/**
 * Keeps a fast stream from piling up dead buffers. Every pipe read hands over a fresh buffer, and
 * the engine frees them at its next collection, which it schedules by the size of the heap rather
 * than the process's memory: a command printing 100 MiB/s left 100+ MiB of dead buffers behind.
 * Every `checkEveryBytes` streamed, if the resident set grew more than `budgetBytes` since the
 * guard began, it collects now (a full collection of a runtime's heap takes some 20–30 ms).
 */
export class MemoryGuard {
  private streamedBytes = 0
  private base: number
  collections = 0

  constructor(private readonly options: MemoryGuardOptions = defaultMemoryGuardOptions) {
    this.base = options.rss()
  }

  streamed(bytes: number): void {
    this.streamedBytes += bytes
    if (this.streamedBytes < this.options.checkEveryBytes) return
    this.streamedBytes = 0
    if (this.options.rss() - this.base <= this.options.budgetBytes) return
    this.options.collect()
    this.collections++
    // memory the process really holds now is the new base: no collecting again and again for it
    this.base = Math.max(this.base, this.options.rss() - this.options.budgetBytes / 2)
  }
}
