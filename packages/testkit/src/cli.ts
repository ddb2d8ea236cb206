#!/usr/bin/env bun
/**
 * Usage: bun packages/testkit/src/cli.ts script.json [--repeat-last] [--port N]
 * script.json is either an array of steps or `{ "steps": [...], "repeatLast"?: boolean, "port"?: number }`.
 * Prints the base URL (http://127.0.0.1:PORT/v1) as the first line of stdout, then serves until killed.
 */
import { startScriptedServer, type ScriptedStep } from "./ScriptedServer.ts"

const args = Bun.argv.slice(2)
const file = args.find((a, i) => !a.startsWith("--") && args[i - 1] !== "--port")
if (file === undefined) {
  console.error("usage: bun packages/testkit/src/cli.ts script.json [--repeat-last] [--port N]")
  process.exit(2)
}
const script: unknown = await Bun.file(file).json()
const config = (Array.isArray(script) ? { steps: script } : script) as { steps: ScriptedStep[]; repeatLast?: boolean; port?: number }
if (!Array.isArray(config.steps)) {
  console.error(`${file}: expected an array of steps or { "steps": [...] }`)
  process.exit(2)
}
const portIndex = args.indexOf("--port")
const port = portIndex >= 0 ? Number(args[portIndex + 1]) : config.port
const server = await startScriptedServer(config.steps, {
  port,
  repeatLast: args.includes("--repeat-last") || config.repeatLast === true
})
process.stdout.write(`${server.url}\n`)

const shutdown = () => {
  void server.stop().finally(() => process.exit(0))
}
process.on("SIGINT", shutdown)
process.on("SIGTERM", shutdown)
