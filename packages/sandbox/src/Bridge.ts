// The bridge: the first program inside a sandbox whose network is an allowlist. The sandbox has its own
// network namespace (nothing outside is reachable); the bridge listens on its 127.0.0.1, sets the proxy
// variables, runs the command, and carries each connection to reins's proxy over the channel reins handed
// it as an inherited socket (a socketpair end: no socket file to reach, so the seccomp filter that refuses
// Unix-domain sockets stays on for everything, the bridge included). It exits as the command did.
// It runs with reins's own runtime: under bun as `bun -e <script>` (bridgeMain must stay self-contained), in the
// standalone executable as its BridgeMain helper (Helper.ts).
import { helperCommand } from "./Helper.ts"
import { muxCodec, muxEndpoint } from "./Mux.ts"

/** What the bridge is told, as its one argument (JSON: an argv of the command's own can hold anything). */
export interface BridgeOrder {
  /** The channel's file descriptor. */
  readonly fd: number
  readonly file: string
  readonly args: ReadonlyArray<string>
}

/** The bridge's body (run inside the sandbox; the mux helpers come in as arguments). */
export async function bridgeMain(codec: typeof muxCodec, endpoint: typeof muxEndpoint, order: string) {
  const net = await import("node:net")
  const fs = await import("node:fs")
  const { spawn } = await import("node:child_process")
  const { fd, file, args } = JSON.parse(order) as BridgeOrder
  const input = fs.createReadStream("", { fd, autoClose: false })
  const output = fs.createWriteStream("", { fd, autoClose: false })
  const c = codec()
  const mux = endpoint(c, (frame) => output.write(frame))
  output.on("drain", () => mux.drained())
  output.on("error", () => mux.closeAll())
  input.on("data", c.decoder(mux.receive, () => input.destroy()) as (chunk: string | Buffer) => void)
  input.on("end", () => mux.closeAll())
  input.on("error", () => mux.closeAll())
  let next = 1
  // half-open: a client that shuts down its side still gets the answer
  const server = net.createServer({ allowHalfOpen: true }, (socket) => {
    const id = next++
    output.write(c.frame(c.kinds.open, id))
    mux.attach(id, socket)
  })
  server.on("error", (error) => {
    process.stderr.write(`reins sandbox bridge: ${error.message}\n`)
    process.exit(126)
  })
  server.listen(0, "127.0.0.1", () => {
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    const proxy = `http://127.0.0.1:${port}`
    const env: Record<string, string | undefined> = {
      ...process.env,
      HTTP_PROXY: proxy,
      HTTPS_PROXY: proxy,
      http_proxy: proxy,
      https_proxy: proxy,
      // the sandbox's own loopback is direct (a test server the command starts); everything else goes through the proxy
      NO_PROXY: "localhost,127.0.0.1,::1",
      no_proxy: "localhost,127.0.0.1,::1",
      // Node's fetch follows the proxy variables only when asked
      NODE_USE_ENV_PROXY: "1"
    }
    const child = spawn(file, args, { stdio: "inherit", env })
    child.on("error", (error) => {
      process.stderr.write(`reins sandbox bridge: could not start ${file}: ${error.message}\n`)
      process.exit(127)
    })
    child.on("exit", (code, signal) => {
      if (signal !== null) {
        process.removeAllListeners(signal)
        process.kill(process.pid, signal)
      }
      process.exit(code ?? 1)
    })
  })
}

/** The bridge as a script for `bun -e`: its body and the mux helpers', from their source. */
export const bridgeScript = `(${bridgeMain.toString()})((${muxCodec.toString()}), (${muxEndpoint.toString()}), process.argv.at(-1))`

/**
 * The command that runs `file args` behind the bridge, the channel on `fd`: with reins's own runtime
 * (Helper.ts), or with `runtime` (a bun) when given.
 */
export const bridgeCommand = (runtime: string | undefined, fd: number, file: string, args: ReadonlyArray<string>): Array<string> => {
  const order = JSON.stringify({ fd, file, args } satisfies BridgeOrder)
  // the project's .env and bunfig.toml are not read (a cloned repository's preload would run first)
  if (runtime !== undefined) return [runtime, "--no-env-file", "--config=/dev/null", "-e", bridgeScript, order]
  return helperCommand("BridgeMain", ["-e", bridgeScript], [order])
}
