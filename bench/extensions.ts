// Benchmark (issue 18): the start-up cost of extensions. `reins run` time to first request — from
// spawning the CLI to the scripted server reading the first chat request — with no extensions
// against the same run with extensions configured. MCP rows: 5 stdio servers each with an
// artificial start-up delay of 200–400 ms, against the slowest of them alone. The servers are a
// minimal JSON-RPC script (initialize, tools/list), so the delay, not the server's own module
// loading, is their start-up: on a 2-core machine five SDK servers loading at once measure the CPU,
// not reins. Goal: the servers connect concurrently, so 5 cost at most 1.2× the slowest one's
// start-up (the extra time over the baseline row).
// More rows (custom tools, a task tree) go in `rows` below: each names the reins.json it adds.
// Usage: bun bench/extensions.ts [--runs N]
import { startScriptedServer } from "@reins/testkit"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { BIN, machine, median, project, table } from "./support.ts"

const runsFlag = process.argv.indexOf("--runs")
const RUNS = runsFlag >= 0 ? Number(process.argv[runsFlag + 1]) : 5
if (!Number.isInteger(RUNS) || RUNS < 1) {
  console.error(`--runs wants a whole number of at least 1, got ${process.argv[runsFlag + 1]}`)
  process.exit(2)
}

// An MCP server over stdio in a few lines: waits `delay` ms, then answers initialize and tools/list.
const MCP_FIXTURE = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "reins-bench-mcp-")), "server.ts")
fs.writeFileSync(
  MCP_FIXTURE,
  `await Bun.sleep(Number(process.argv[2] ?? 0))
const send = (m: unknown) => process.stdout.write(JSON.stringify(m) + "\\n")
const tool = { name: "ping", description: "Answers pong.", inputSchema: { type: "object", properties: {} } }
let buffer = ""
for await (const chunk of process.stdin) {
  buffer += chunk
  let nl
  while ((nl = buffer.indexOf("\\n")) >= 0) {
    const line = buffer.slice(0, nl)
    buffer = buffer.slice(nl + 1)
    if (!line.trim()) continue
    const m = JSON.parse(line)
    if (m.method === "initialize") send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "bench", version: "1" } } })
    else if (m.method === "tools/list") send({ jsonrpc: "2.0", id: m.id, result: { tools: [tool] } })
    else if (m.method === "tools/call") send({ jsonrpc: "2.0", id: m.id, result: { content: [{ type: "text", text: "pong" }] } })
    else if (m.id !== undefined) send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "no such method" } })
  }
}
`
)
const DELAYS = [200, 250, 300, 350, 400]
const mcpServer = (delay: number) => ({ type: "local", command: [process.execPath, MCP_FIXTURE, String(delay)] })

/** One row: what it adds to reins.json (and to the project directory) over the baseline. */
export interface Row {
  readonly label: string
  readonly config: Record<string, unknown>
  /** Files to write into the project (e.g. `.reins/tools/*.ts`). */
  readonly files?: Record<string, string>
}

export const rows: Array<Row> = [
  { label: "no extensions", config: {} },
  { label: `1 MCP stdio server (${Math.max(...DELAYS)} ms start-up)`, config: { mcp: { slow: mcpServer(Math.max(...DELAYS)) } } },
  { label: `5 MCP stdio servers (${DELAYS.join("/")} ms)`, config: { mcp: Object.fromEntries(DELAYS.map((d, i) => [`s${i}`, mcpServer(d)])) } },
  // T20: 20 files in .reins/tools, imported when the runtime starts: half Tool.define, half plain objects
  {
    label: "20 custom tools (.reins/tools)",
    config: {},
    files: Object.fromEntries(
      Array.from({ length: 20 }, (_, i) => [
        `.reins/tools/tool${i}.ts`,
        i % 2 === 0
          ? `import { Tool, Schema, Effect } from "@reins/plugin"\nexport default Tool.define("tool${i}", { description: "Tool ${i}", parameters: Schema.Struct({ text: Schema.String }), execute: (a) => Effect.succeed({ title: "tool${i}", output: a.text }) })\n`
          : `export default { description: "Tool ${i}", parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] }, execute: ({ text }) => text }\n`
      ])
    )
  }
]

/** Milliseconds from spawning `reins run` to the first chat request reaching the server. */
const timeToFirstRequest = async (row: Row) => {
  const server = await startScriptedServer([{ text: "ok" }], { keepBodies: false })
  const p = project(server.url)
  try {
    // the row's extensions as the project's (what a trusted project loads); the scripted model is in the user's config
    fs.writeFileSync(path.join(p.cwd, "reins.json"), JSON.stringify(row.config))
    for (const [name, text] of Object.entries(row.files ?? {})) {
      fs.mkdirSync(path.dirname(path.join(p.cwd, name)), { recursive: true })
      fs.writeFileSync(path.join(p.cwd, name), text)
    }
    const start = performance.now()
    const proc = Bun.spawn([BIN, "run", "--trust", "hello"], { cwd: p.cwd, env: p.env, stdout: "pipe", stderr: "pipe" })
    const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()])
    await proc.exited
    const first = server.requests[0]
    if (proc.exitCode !== 0 || !first || !stdout.includes("ok"))
      throw new Error(`${row.label}: reins run failed (${proc.exitCode}):\n${stdout.slice(-1000)}\n${stderr.slice(-1000)}`)
    if (stderr.includes("MCP server")) throw new Error(`${row.label}: an MCP server failed:\n${stderr.slice(-1000)}`)
    return first.receivedAt - start
  } finally {
    await server.stop()
    p.cleanup()
  }
}

const results: Array<{ row: Row; ms: number }> = []
for (const row of rows) {
  const samples: Array<number> = []
  await timeToFirstRequest(row) // warm the file cache
  for (let i = 0; i < RUNS; i++) samples.push(await timeToFirstRequest(row))
  results.push({ row, ms: median(samples) })
}

const base = results[0]!.ms
const slowest = results[1]!.ms - base
const five = results[2]!.ms - base
console.log(`\nreins run: time to first request with extensions (median of ${RUNS} runs; ${machine()})\n`)
console.log(
  table(
    ["configuration", "first request (ms)", "over baseline (ms)"],
    results.map(({ row, ms }) => [row.label, ms.toFixed(0), (ms - base).toFixed(0)])
  )
)
const ratio = five / slowest
const sequential = DELAYS.reduce((a, b) => a + b, 0)
console.log(
  `\n5 servers cost ${ratio.toFixed(2)}× the slowest one alone (goal ≤ 1.2×: they connect concurrently) — ${ratio <= 1.2 ? "met" : "NOT met"}; ` +
    `one after the other they would cost at least the sum of their delays, ${sequential} ms`
)
