// What the server benchmarks share (bench/serve.ts, bench/cluster.ts): an SSE reader, JSON posts, a server started
// until it says where it listens, the scripted model in its own process, percentiles.
import * as path from "node:path"

/** One SSE frame as parsed: its event name (default "message") and JSON data. */
export interface Frame {
  readonly event: string
  readonly data: any
  readonly at: number
}

/** Reads `url` as an event stream until `signal` aborts; each frame handed over as soon as it is parsed. */
export const subscribe = async (url: string, onFrame: (f: Frame) => void, signal: AbortSignal, headers: Record<string, string> = {}) => {
  const response = await fetch(url, { headers: { ...headers, accept: "text/event-stream" }, signal })
  if (!response.ok || !response.body) throw new Error(`GET ${url}: ${response.status} ${await response.text()}`)
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader()
  let buffer = ""
  void (async () => {
    for (;;) {
      const chunk = await reader.read().catch(() => ({ done: true as const, value: undefined }))
      if (chunk.done) return
      buffer += chunk.value
      let cut: number
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, cut)
        buffer = buffer.slice(cut + 2)
        let event = "message"
        let data = ""
        for (const line of block.split("\n")) {
          if (line.startsWith("event:")) event = line.slice(6).trim()
          else if (line.startsWith("data:")) data += line.slice(5).trimStart()
        }
        if (data !== "") onFrame({ event, data: JSON.parse(data), at: Date.now() })
      }
    }
  })()
}

/** POSTs `body` as JSON; the parsed answer (undefined when empty); a failed status throws with its body. */
export const post = async (url: string, body: unknown, headers: Record<string, string> = {}) => {
  const response = await fetch(url, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify(body) })
  if (!response.ok) throw new Error(`POST ${url}: ${response.status} ${await response.text()}`)
  const text = await response.text()
  return text === "" ? undefined : JSON.parse(text)
}

/** The `p`th percentile of sorted numbers. */
export const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN

/** Starts the server, waits for its `listening on` line, and hands back its URL and process. */
export const launch = async (cmd: Array<string>, cwd: string, env: Record<string, string>) => {
  const proc = Bun.spawn(cmd, { cwd, env, stdout: "pipe", stderr: "pipe" })
  const stderr: Array<string> = []
  void new Response(proc.stderr).text().then((t) => stderr.push(t))
  const reader = proc.stdout.pipeThrough(new TextDecoderStream()).getReader()
  let seen = ""
  const deadline = Date.now() + 60_000
  // one read at a time: a read that lost the race is still the next chunk
  let reading = reader.read()
  while (Date.now() < deadline) {
    const chunk = await Promise.race([reading, Bun.sleep(1_000).then(() => undefined)])
    if (chunk?.done) break
    if (chunk) {
      seen += chunk.value
      reading = reader.read()
    }
    const m = /listening on (http:\/\/[^\s]+)/.exec(seen)
    if (m) {
      // the rest of its output is drained so that it never blocks on a full pipe
      void (async () => {
        if ((await reading).done) return
        for (;;) if ((await reader.read()).done) return
      })()
      return { proc, base: m[1]!.replace(/\/$/, "") }
    }
  }
  proc.kill()
  await proc.exited
  throw new Error(`${cmd.join(" ")} did not say where it listens: ${seen.slice(-500)} ${stderr.join("").slice(-1000)}`)
}

/** The scripted model (bench/serve-model.ts) in its own process: its URL and how to stop it. */
export const startModel = async (args: ReadonlyArray<string>) => {
  const proc = Bun.spawn([process.execPath, path.join(import.meta.dir, "serve-model.ts"), ...args], { stdout: "pipe", stderr: "inherit" })
  const reader = proc.stdout.pipeThrough(new TextDecoderStream()).getReader()
  let out = ""
  while (!out.includes("\n")) {
    const chunk = await reader.read()
    if (chunk.done) throw new Error(`the scripted model did not start: ${out}`)
    out += chunk.value
  }
  return {
    url: out.trim(),
    stop: async () => {
      proc.kill()
      await reader.cancel()
      await proc.exited
    }
  }
}
