// The editor's messages reach the SDK only whole and within a size: a line longer than MAX_MESSAGE_BYTES is dropped as
// it arrives (never held in memory) and answered with an error naming its size, and the agent stays up. Left to the
// SDK, a message over its own limit ends the connection, and `reins acp` exited without a word.

/** The largest message `reins acp` takes from the editor (a prompt with inline images and files included). */
export const MAX_MESSAGE_BYTES = 24 * 1024 * 1024

const NEWLINE = 10
const HEAD_BYTES = 4096
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`

/** The request id in the first bytes of a message (`"id": 7` or `"id": "x"`), if it says one there. */
const idIn = (head: string): number | string | undefined => {
  const match = /"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")/.exec(head)
  if (match === null) return undefined
  try {
    return JSON.parse(match[1]!) as number | string
  } catch {
    return undefined
  }
}

/**
 * The editor's streams as the SDK should see them: `input` passes whole lines only, none over `max` bytes (each such
 * request is answered on `output` with a JSON-RPC error for its id, each such answer to a request of ours is replaced
 * by an error for it, and `onRefused` told); `output` serialises the SDK's writes with those answers.
 */
export const guardStreams = (
  input: ReadableStream<Uint8Array>,
  output: WritableStream<Uint8Array>,
  onRefused: (bytes: number, method: string | undefined) => void,
  max = MAX_MESSAGE_BYTES
): { readonly input: ReadableStream<Uint8Array>; readonly output: WritableStream<Uint8Array> } => {
  const writer = output.getWriter()
  let chain: Promise<void> = Promise.resolve()
  const write = (bytes: Uint8Array) => {
    const next = chain.then(() => writer.write(bytes))
    chain = next.catch(() => undefined)
    return next
  }
  const guardedOutput = new WritableStream<Uint8Array>({
    write: (chunk) => write(chunk),
    close: () => chain.then(() => writer.close()),
    abort: (reason) => writer.abort(reason)
  })

  let pending: Array<Uint8Array> = []
  let size = 0
  let head = ""
  let headBytes = 0
  let dropping = false
  let decoder = new TextDecoder()
  const refuse = (controller: TransformStreamDefaultController<Uint8Array>) => {
    const id = idIn(head)
    const method = /"method"\s*:\s*"([^"]*)"/.exec(head)?.[1]
    onRefused(size, method)
    if (id === undefined) return
    const message = `The message${method ? ` (${method})` : ""} is ${mib(size)}, over the ${mib(max)} reins acp takes: send less (refer to large files by path instead of attaching them).`
    const error = new TextEncoder().encode(`${JSON.stringify({ jsonrpc: "2.0", id, error: { code: -32600, message } })}\n`)
    // a request of the editor's is answered; the editor's answer to a request of ours (a file it read) fails that request here
    if (method !== undefined) void write(error).catch(() => undefined)
    else controller.enqueue(error)
  }
  const guardedInput = input.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        let start = 0
        while (start < chunk.length) {
          const end = chunk.indexOf(NEWLINE, start)
          const piece = chunk.subarray(start, end === -1 ? chunk.length : end + 1)
          if (headBytes < HEAD_BYTES) {
            const taken = piece.subarray(0, HEAD_BYTES - headBytes)
            head += decoder.decode(taken, { stream: true })
            headBytes += taken.length
          }
          size += piece.length
          if (!dropping && size > max) {
            dropping = true
            pending = []
          }
          if (!dropping) pending.push(piece)
          if (end === -1) break
          // a whole line: passed on, or answered
          if (dropping) refuse(controller)
          else for (const part of pending) controller.enqueue(part)
          pending = []
          size = 0
          head = ""
          headBytes = 0
          decoder = new TextDecoder()
          dropping = false
          start = end + 1
        }
      },
      flush(controller) {
        if (dropping) refuse(controller)
        else for (const part of pending) controller.enqueue(part)
      }
    })
  )
  return { input: guardedInput, output: guardedOutput }
}
