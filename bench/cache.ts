// Benchmark (issue 16, T10): what prompt caching saves. One user turn of 50 model steps in
// Anthropic's format, run in-process through the composed runtime and the real @ai-sdk/anthropic
// against the testkit's scripted Anthropic server, whose usage models Anthropic's prefix caching
// (a prefix up to a marker seen before is a cache read; tokens = characters ÷ 4). The context grows
// as a real session's does: a ~12 KB system prompt (reins's header and env plus an AGENTS.md),
// reins's built-in tools, and 49 reads of 2–8 KB files. Billed input cost with reins's cache markers
// against the same request bodies without them (markers stripped, billed by a fresh cache model:
// every token uncached input), at the catalogue's prices for claude-sonnet-4-5.
// Usage: bun bench/cache.ts [--steps N]
import { Effect, Exit } from "effect"
import type { Part } from "@reins/domain"
import { modelInfo } from "@reins/provider"
import { makeRuntime, type RuntimeOptions } from "@reins/runtime"
import { SessionService } from "@reins/session"
import { SessionStore, Storage } from "@reins/storage"
import { PromptCache, startAnthropicServer, type CacheUsage, type ScriptedStep } from "@reins/testkit"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { machine, stepsFlag, table, seeded } from "./support.ts"

const STEPS = stepsFlag(50, 2)
const MODEL = "claude-sonnet-4-5"
const SAVING_TARGET = 0.75
const KB = 1024

// ---------------------------------------------------------------------------------------------
// A scratch project: AGENTS.md (~10 KB of conventions) and one 2–8 KB file per read.

const { rand, pick } = seeded(0xcac4e)
const words = [
  "the",
  "service",
  "keeps",
  "each",
  "order",
  "until",
  "its",
  "deadline",
  "passes",
  "and",
  "then",
  "writes",
  "a",
  "summary",
  "to",
  "the",
  "ledger",
  "so",
  "readers",
  "never",
  "block",
  "on",
  "slow",
  "upstream",
  "calls",
  "while",
  "retries",
  "back",
  "off",
  "invoice",
  "customer",
  "cursor",
  "batch"
]
const sentence = () => {
  const s = Array.from({ length: 8 + Math.floor(rand() * 12) }, () => pick(words)).join(" ")
  return `${s[0]!.toUpperCase()}${s.slice(1)}.`
}
const text = (bytes: number, line: () => string) => {
  const lines: Array<string> = []
  let size = 0
  while (size < bytes) {
    const l = line()
    lines.push(l)
    size += l.length + 1
  }
  return lines.join("\n")
}

const cwd = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-bench-cache-")))
const dataDir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-bench-cache-data-")))
fs.writeFileSync(path.join(cwd, "AGENTS.md"), `# Working on this service\n\n${text(10 * KB, () => `- ${sentence()}`)}\n`)
const sizes: Array<number> = []
const files = Array.from({ length: STEPS - 1 }, (_, i) => {
  const file = path.join(cwd, "src", `module${String(i).padStart(2, "0")}.ts`)
  fs.mkdirSync(path.dirname(file), { recursive: true })
  const size = 2 * KB + Math.floor(rand() * 6 * KB)
  sizes.push(size)
  fs.writeFileSync(
    file,
    text(size, () => `export const value${Math.floor(rand() * 1e6)} = "${sentence()}"`)
  )
  return file
})

// 49 reads, then the answer
const script: Array<ScriptedStep> = [
  ...files.map((filePath, i): ScriptedStep => ({ text: `Reading module ${i}.`, toolCalls: [{ name: "read", arguments: { filePath } }] })),
  { text: "I have read every module; the service's modules all export constants." }
]

const server = await startAnthropicServer(script)
const layer = makeRuntime({
  cwd,
  dataDir,
  env: {},
  config: { provider: { anthropic: { type: "anthropic", baseURL: server.url, apiKey: "bench" } } } as RuntimeOptions["config"],
  store: Storage.layerMemory,
  permission: { yolo: true }
})

const run = Effect.gen(function* () {
  const sessions = yield* SessionService
  const store = yield* SessionStore
  const session = yield* sessions.create({ directory: cwd })
  const started = performance.now()
  const result = yield* sessions.prompt({
    sessionID: session.id,
    text: "Read every module under src/ and tell me what they export.",
    model: { providerID: "anthropic", modelID: MODEL }
  })
  const wallMs = performance.now() - started
  const steps = (yield* store.messages(session.id)).flatMap((m) => m.parts).filter((p): p is Extract<Part, { type: "step-finish" }> => p.type === "step-finish")
  return { result, wallMs, steps }
}).pipe(Effect.provide(layer), Effect.scoped)

const exit = await Effect.runPromiseExit(run)
await server.stop()
fs.rmSync(cwd, { recursive: true, force: true })
fs.rmSync(dataDir, { recursive: true, force: true })
if (Exit.isFailure(exit)) {
  console.error(`\ncache: the turn failed: ${String(exit.cause)}`)
  process.exit(1)
}
const { wallMs, steps } = exit.value

// ---------------------------------------------------------------------------------------------
// Figures: what the server billed, and the same bodies without markers.

const price = modelInfo(undefined, MODEL).price
if (price === undefined || price.cacheRead === undefined || price.cacheWrite === undefined) {
  console.error(`cache: the catalogue has no cache prices for ${MODEL}`)
  process.exit(1)
}
const dollars = (u: CacheUsage) =>
  (u.input_tokens * price.input + u.cache_read_input_tokens * price.cacheRead! + u.cache_creation_input_tokens * price.cacheWrite!) / 1e6
const unmarked = new PromptCache()
const strip = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(strip)
    : typeof value === "object" && value !== null
      ? Object.fromEntries(Object.entries(value).flatMap(([k, v]) => (k === "cache_control" ? [] : [[k, strip(v)]])))
      : value
const rows = server.requests.map((r, i) => {
  const cached = r.usage!
  const plain = unmarked.bill(strip(r.body))
  const prompt = cached.input_tokens + cached.cache_read_input_tokens + cached.cache_creation_input_tokens
  return { step: i + 1, bytes: r.bodyLength, cached, plain, prompt, rate: cached.cache_read_input_tokens / prompt }
})
const first = server.requests[0]!.body as { system: Array<{ text: string }>; tools: Array<unknown> }
const systemKB = first.system.reduce((n, b) => n + b.text.length, 0) / KB
const toolsKB = JSON.stringify(first.tools).length / KB
const sum = (f: (r: (typeof rows)[number]) => number) => rows.reduce((n, r) => n + f(r), 0)
const costCached = sum((r) => dollars(r.cached))
const costPlain = sum((r) => dollars(r.plain))
const saving = 1 - costCached / costPlain
const sessionRate = sum((r) => r.cached.cache_read_input_tokens) / sum((r) => r.prompt)
// what the runtime stored agrees with what the server billed
const stored = steps.every(
  (s, i) => s.usage.cacheRead === rows[i]?.cached.cache_read_input_tokens && s.usage.cacheWrite === rows[i]?.cached.cache_creation_input_tokens
)

const k = (n: number) => `${(n / 1000).toFixed(1)}k`
const usd = (n: number) => `$${n.toFixed(4)}`
const pct = (n: number) => `${(n * 100).toFixed(1)}%`
const verdict = (ok: boolean) => (ok ? "PASS" : "FAIL")

console.log(
  `\ncache — one turn of ${rows.length} steps in Anthropic's format (in-process runtime, real @ai-sdk/anthropic, scripted Anthropic server on 127.0.0.1 ` +
    `modelling prefix caching; tokens = characters ÷ 4), ${MODEL} at $${price.input} in / $${price.cacheRead} cache read / $${price.cacheWrite} cache write per M tokens`
)
console.log(`machine: ${machine()}`)
console.log(
  `system prompt ${systemKB.toFixed(1)} KB (header, env, AGENTS.md), tools ${toolsKB.toFixed(1)} KB (${first.tools.length} built-ins), one file read per step (${(Math.min(...sizes) / KB).toFixed(1)}–${(Math.max(...sizes) / KB).toFixed(1)} KB, mean ${(sizes.reduce((a, b) => a + b, 0) / sizes.length / KB).toFixed(1)} KB); turn wall time ${(wallMs / 1000).toFixed(2)} s\n`
)
console.log(
  table(
    ["step", "request KB", "prompt tokens", "cache read", "cache write", "uncached", "hit rate", "input $ cached", "input $ no markers"],
    rows
      .filter((r) => r.step === 1 || r.step % 5 === 0 || r.step === rows.length)
      .map((r) => [
        String(r.step),
        (r.bytes / KB).toFixed(1),
        k(r.prompt),
        k(r.cached.cache_read_input_tokens),
        k(r.cached.cache_creation_input_tokens),
        k(r.cached.input_tokens),
        pct(r.rate),
        usd(dollars(r.cached)),
        usd(dollars(r.plain))
      ])
  )
)
console.log()
console.log(
  table(
    ["measure", "value", "target", ""],
    [
      ["steps (requests)", String(rows.length), String(STEPS), verdict(rows.length === STEPS)],
      ["prompt tokens, whole turn", k(sum((r) => r.prompt)), "", ""],
      [
        "cache read / write / uncached tokens",
        `${k(sum((r) => r.cached.cache_read_input_tokens))} / ${k(sum((r) => r.cached.cache_creation_input_tokens))} / ${k(sum((r) => r.cached.input_tokens))}`,
        "",
        ""
      ],
      ["cache hit rate, session (read ÷ all prompt tokens)", pct(sessionRate), "", ""],
      ["billed input cost with cache markers", usd(costCached), "", ""],
      ["billed input cost without markers (same bodies)", usd(costPlain), "", ""],
      ["input cost saved", pct(saving), `≥ ${pct(SAVING_TARGET)}`, verdict(saving >= SAVING_TARGET)],
      ["stored step usage = server's billing", stored ? "yes" : "no", "yes", verdict(stored)]
    ]
  )
)
if (saving < SAVING_TARGET || !stored || rows.length !== STEPS) process.exitCode = 1
