// Many TCP connections over one stream: the channel between the bridge inside a sandbox and reins's
// proxy outside. A frame is [kind u8][connection id u32][length u32][payload]; kinds open, data, end
// (half-close), close, pause and resume (a side whose socket is full asks the other to stop reading).
// Both functions are self-contained (no imports, nothing from outside their bodies): the bridge
// script is built from their source text and runs inside the sandbox.

/** The channel's frame format: kinds, an encoder and a decoder that refuses frames over `maxFrame`. */
export function muxCodec() {
  const kinds = { open: 1, data: 2, end: 3, close: 4, pause: 5, resume: 6 } as const
  const frame = (kind: number, id: number, payload?: Uint8Array) => {
    const length = payload?.length ?? 0
    const out = Buffer.allocUnsafe(9 + length)
    out.writeUInt8(kind, 0)
    out.writeUInt32BE(id, 1)
    out.writeUInt32BE(length, 5)
    if (payload !== undefined) out.set(payload, 9)
    return out
  }
  const decoder = (onFrame: (kind: number, id: number, payload: Buffer) => void, onError: (why: string) => void, maxFrame = 4 * 1024 * 1024) => {
    let pending: Buffer = Buffer.alloc(0)
    let failed = false
    return (chunk: Buffer) => {
      if (failed) return
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk])
      while (pending.length >= 9) {
        const length = pending.readUInt32BE(5)
        if (length > maxFrame) {
          failed = true
          onError(`a frame of ${length} bytes`)
          return
        }
        if (pending.length < 9 + length) break
        onFrame(pending.readUInt8(0), pending.readUInt32BE(1), pending.subarray(9, 9 + length))
        pending = pending.subarray(9 + length)
      }
    }
  }
  return { kinds, frame, decoder }
}

/** A stream one connection is carried by (a socket, or one end of a duplex pair). */
export interface MuxStream {
  on(event: "data", listener: (chunk: Buffer) => void): unknown
  on(event: "end" | "close" | "drain", listener: () => void): unknown
  on(event: "error", listener: (error: Error) => void): unknown
  once(event: "drain", listener: () => void): unknown
  write(chunk: Uint8Array): boolean
  end(): unknown
  destroy(): unknown
  pause(): unknown
  resume(): unknown
}

/**
 * One side of the channel: `attach` carries a stream's bytes as frames under `id`; `receive` applies the
 * other side's frames to the attached streams; `drained` is called when the channel can take more.
 * `send` returns false when the channel is full: every stream stops reading until it drains.
 */
export function muxEndpoint(codec: ReturnType<typeof muxCodec>, send: (frame: Buffer) => boolean) {
  const { kinds, frame } = codec
  const streams = new Map<number, MuxStream>()
  // streams the other side asked to stop (its socket is full), and ours we asked it to stop for
  const stoppedByPeer = new Set<number>()
  const stoppedPeer = new Set<number>()
  let full = false
  const push = (buffer: Buffer) => {
    if (!send(buffer) && !full) {
      full = true
      for (const s of streams.values()) s.pause()
    }
  }
  const attach = (id: number, stream: MuxStream) => {
    streams.set(id, stream)
    stream.on("data", (chunk) => push(frame(kinds.data, id, chunk)))
    stream.on("end", () => {
      if (streams.has(id)) push(frame(kinds.end, id))
    })
    stream.on("close", () => {
      if (streams.delete(id)) push(frame(kinds.close, id))
      stoppedByPeer.delete(id)
      stoppedPeer.delete(id)
    })
    stream.on("error", () => {})
    if (full) stream.pause()
  }
  const receive = (kind: number, id: number, payload: Buffer) => {
    const stream = streams.get(id)
    if (stream === undefined) return
    if (kind === kinds.data) {
      if (!stream.write(payload) && !stoppedPeer.has(id)) {
        stoppedPeer.add(id)
        push(frame(kinds.pause, id))
        stream.once("drain", () => {
          stoppedPeer.delete(id)
          if (streams.has(id)) push(frame(kinds.resume, id))
        })
      }
    } else if (kind === kinds.end) stream.end()
    else if (kind === kinds.close) {
      streams.delete(id)
      stream.destroy()
    } else if (kind === kinds.pause) {
      stoppedByPeer.add(id)
      stream.pause()
    } else if (kind === kinds.resume) {
      stoppedByPeer.delete(id)
      if (!full) stream.resume()
    }
  }
  const drained = () => {
    full = false
    for (const [id, s] of streams) if (!stoppedByPeer.has(id)) s.resume()
  }
  /** Ends every connection (the channel is gone). */
  const closeAll = () => {
    const all = [...streams.values()]
    streams.clear()
    for (const s of all) s.destroy()
  }
  return { attach, receive, drained, closeAll, size: () => streams.size }
}
