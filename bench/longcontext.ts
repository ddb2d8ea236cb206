// Benchmark (issue 6): one user turn of 300 model steps against a 32k-token model, each step a
// real `read` of a 4–12 KB file, run in-process through the composed runtime with the SQLite store
// and a scripted server that answers compaction's summary requests with a summary. Reports
// compactions, tokens sent with and without pruning/compaction (the "without" figure rebuilt from
// the same stored transcript), wall time, RSS, and the harness's per-step overhead (wall and CPU
// time) early and late in the turn, after a warm-up turn on another session. Baseline from the
// same run: reading the whole session from the store at step 10 and at the last step.
// Usage: bun bench/longcontext.ts [--steps N]
import { Effect, Exit } from "effect"
import { modelView } from "@reins/compaction"
import { Bus, userFlag, type Event } from "@reins/domain"
import { makeRuntime } from "@reins/runtime"
import { SessionService, type TurnResult } from "@reins/session"
import { SessionStore, Storage, type MessageWithParts } from "@reins/storage"
import { startScriptedServer, type ScriptedServer, type ScriptedStep } from "@reins/testkit"
import { read } from "@reins/tool"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { machine, median, stepsFlag, table, seeded } from "./support.ts"

const STEPS = stepsFlag(300, 2)
/** Steps of a turn on another session run first, so that step 10 of the measured turn is not JIT warm-up. */
const WARMUP = 40
const FILES = 40
const CONTEXT = 32_000
const OUTPUT = 4_000
const MiB = 2 ** 20
const RSS_TARGET_MiB = 200
const OVERHEAD_TARGET = 1.5

// ---------------------------------------------------------------------------------------------
// A scratch project of 40 files (TypeScript, Markdown, logs), sized so that a read returns 4–12 KB.

const { rand, pick } = seeded(0x5eed)
const nouns = ["order", "invoice", "customer", "session", "ledger", "shipment", "token", "cursor", "batch", "account", "payload", "policy", "quota", "report"]
const verbs = ["load", "save", "apply", "merge", "resolve", "validate", "render", "retry", "flush", "encode", "parse", "schedule"]
const words = [
  "the",
  "cache",
  "keeps",
  "each",
  "entry",
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
  "disk",
  "so",
  "that",
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
  "off"
]
const cap = (s: string) => s[0]!.toUpperCase() + s.slice(1)
const sentence = () => `${cap(Array.from({ length: 8 + Math.floor(rand() * 10) }, () => pick(words)).join(" "))}.`

const tsBlock = (i: number): Array<string> => {
  const noun = pick(nouns)
  const verb = pick(verbs)
  const name = `${verb}${cap(noun)}${i}`
  return [
    `/** ${sentence()} */`,
    `export async function ${name}(input: ${cap(noun)}Input, ctx: Context): Promise<Result<${cap(noun)}>> {`,
    `  const started = ctx.clock.now()`,
    `  const items = input.items.filter((item) => item.quantity > ${Math.floor(rand() * 5)} && item.status !== "cancelled")`,
    `  const total = items.reduce((sum, item) => sum + item.price * item.quantity, 0)`,
    `  if (total > ${Math.floor(rand() * 10_000)}) {`,
    `    ctx.log.warn("${name}: total over the limit", { total, id: input.id })`,
    `    return { ok: false, error: new LimitError("${noun} ${"$"}{input.id} is over the limit") }`,
    `  }`,
    `  const saved = await ctx.store.${verb}({ id: input.id, total, items, at: started })`,
    `  return { ok: true, value: { ...saved, elapsed: ctx.clock.now() - started } }`,
    `}`,
    ``
  ]
}
const mdBlock = (i: number): Array<string> => [
  `## ${cap(pick(verbs))} the ${pick(nouns)} (${i})`,
  ``,
  `${sentence()} ${sentence()} ${sentence()}`,
  ``,
  `- ${sentence()}`,
  `- ${sentence()}`,
  ``
]
const logBlock = (i: number): Array<string> =>
  Array.from(
    { length: 6 },
    (_, j) =>
      `2025-03-${String(1 + (i % 28)).padStart(2, "0")}T10:${String(j * 7).padStart(2, "0")}:0${j}Z ${pick(["INFO", "WARN", "DEBUG"])} ${pick(verbs)}.${pick(nouns)} id=${Math.floor(rand() * 1e6)} ${sentence()}`
  )

/** The read tool's output is the numbered lines (7 extra characters each) in a `<file>` wrapper. */
const numberedSize = (lines: ReadonlyArray<string>) => lines.reduce((n, l) => n + l.length + 8, 40)

const cwd = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-bench-longctx-")))
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "reins-bench-longctx-data-"))
const files: Array<string> = []
for (let f = 0; f < FILES; f++) {
  const kind = f % 5 === 3 ? "md" : f % 5 === 4 ? "log" : "ts"
  const name = kind === "ts" ? `src/${pick(nouns)}/${pick(verbs)}-${f}.ts` : kind === "md" ? `docs/${pick(nouns)}-${f}.md` : `logs/${pick(nouns)}-${f}.log`
  // Offsets up to 9 drop a few lines: aim the whole file at 4.6–11.8 KB of output.
  const target = 4_600 + ((f * 7_919) % 7_200)
  const lines: Array<string> = []
  for (let b = 0; numberedSize(lines) < target; b++) lines.push(...(kind === "ts" ? tsBlock(b) : kind === "md" ? mdBlock(b) : logBlock(b)))
  fs.mkdirSync(path.join(cwd, path.dirname(name)), { recursive: true })
  fs.writeFileSync(path.join(cwd, name), `${lines.join("\n")}\n`)
  files.push(name)
}

// ---------------------------------------------------------------------------------------------
// The scripted model: agent requests get the next read (every call distinct, so the doom-loop
// guard stays quiet), summary requests (no tools) get a summary.

const TASK = "Audit every module under src/, docs/ and logs/ for how totals and limits are computed, and report inconsistencies."
/** Step k's call: files visited in a stride that is not a small cycle, offsets varying, the limit unique per step. */
const callOf = (k: number) => ({ filePath: files[(k * 17) % FILES]!, offset: 1 + ((k * 7) % 9), limit: 1_000 + k })

/**
 * What the bench keeps of each request (the server keeps no bodies, which would inflate RSS): its
 * kind, and for rebuilding it with other messages, the characters of the body around `messages`
 * and of its system messages.
 */
interface RequestShape {
  readonly measured: boolean
  readonly kind: "agent" | "summary"
  readonly frameChars: number
  readonly systemChars: number
  readonly systemCount: number
}
const shapes: Array<RequestShape> = []
/** Process CPU time (user + system, ms) when each request reached `respond` and when its response was sent. */
const cpuAtRequest: Array<number> = []
const cpuAtResponse: Array<number> = []
const cpuMs = () => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}
const rssAtStep: Array<number> = []
const heapAtStep: Array<number> = []
let measured = false
let turnSteps = WARMUP
let agentSteps = 0
let summaries = 0

const respond = (body: any, index: number): ScriptedStep => {
  cpuAtRequest[index] = cpuMs()
  const tools: ReadonlyArray<unknown> = Array.isArray(body?.tools) ? body.tools : []
  const system = (Array.isArray(body?.messages) ? body.messages : []).filter((m: { role?: string }) => m.role === "system")
  shapes[index] = {
    measured,
    kind: tools.length === 0 ? "summary" : "agent",
    frameChars: JSON.stringify({ ...body, messages: [] }).length - 2,
    systemChars: system.reduce((n: number, m: unknown) => n + JSON.stringify(m).length, 0),
    systemCount: system.length
  }
  if (tools.length === 0) {
    summaries++
    return {
      text: [
        "## Objective",
        TASK,
        "## Progress",
        `- Read ${agentSteps} files so far; totals are computed from quantity × price in every module seen (summary ${summaries}).`,
        "- Limits are hard-coded per function and differ between modules; logs show WARN lines when a total passes them.",
        "## Next steps",
        "- Keep reading the remaining files, then list every limit with its file and line."
      ].join("\n")
    }
  }
  const k = ++agentSteps
  if (measured) {
    const memory = process.memoryUsage()
    rssAtStep[k] = memory.rss
    heapAtStep[k] = memory.heapUsed
  }
  if (k >= turnSteps) return { text: `Done after ${k - 1} reads: limits differ across modules; see the summary above for the list.` }
  const call = callOf(k)
  return { text: `Step ${k}: reading ${call.filePath} from line ${call.offset}.`, toolCalls: [{ name: "read", arguments: call }] }
}

const server: ScriptedServer = await startScriptedServer([], {
  respond,
  onResponded: (index) => void (cpuAtResponse[index] = cpuMs()),
  keepBodies: false
})

// ---------------------------------------------------------------------------------------------
// The turn, through the composed runtime with the SQLite store.

let peakRss = process.memoryUsage().rss
const sampler = setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss)
}, 10)

const layer = makeRuntime({
  cwd,
  dataDir,
  env: {},
  config: {
    provider: { local: { type: "openai-compatible", baseURL: server.url, models: { m32k: { context: CONTEXT, output: OUTPUT } } } },
    retry: { attempts: 1, initial_delay_ms: 1, max_delay_ms: 5 }
  },
  store: Storage.layerSqlite(path.join(dataDir, "reins.db")),
  tools: [read],
  permission: { yolo: true }
})

const timeReads = (store: SessionStore["Service"], sessionID: string, runs = 15) =>
  Effect.gen(function* () {
    yield* store.messages(sessionID)
    const xs: Array<number> = []
    for (let i = 0; i < runs; i++) {
      const t = performance.now()
      yield* store.messages(sessionID)
      xs.push(performance.now() - t)
    }
    return median(xs)
  })

/** A new session holding a copy of these messages and their parts, under new ids in the same order (an upsert by the old id would move them). */
const copySession = (store: SessionStore["Service"], messages: ReadonlyArray<MessageWithParts>, id: string) =>
  Effect.gen(function* () {
    const now = Date.now()
    yield* store.createSession({ id, title: "baseline copy", directory: cwd, time: { created: now, updated: now } })
    for (const m of messages) {
      yield* store.putMessage({ ...m.info, id: `${m.info.id}c`, sessionID: id })
      yield* store.putParts(m.parts.map((p) => ({ ...p, id: `${p.id}c`, messageID: `${p.messageID}c`, sessionID: id })))
    }
  })

const run = Effect.gen(function* () {
  const events: Array<Event> = []
  yield* (yield* Bus).listen((e) => Effect.sync(() => void (e.type.startsWith("compaction.") && events.push(e))))
  const sessions = yield* SessionService
  const store = yield* SessionStore
  const model = { providerID: "local", modelID: "m32k" }
  const warmup = yield* sessions.create({ directory: cwd })
  yield* sessions.prompt({ sessionID: warmup.id, text: TASK, model })
  events.length = 0
  measured = true
  turnSteps = STEPS
  agentSteps = 0
  summaries = 0
  const session = yield* sessions.create({ directory: cwd })
  const start = performance.now()
  const turn = yield* Effect.result(sessions.prompt({ sessionID: session.id, text: TASK, model }))
  const wallMs = performance.now() - start
  clearInterval(sampler)
  const endRss = process.memoryUsage().rss
  // What stays live after a full collection: retained memory, as opposed to garbage not yet collected.
  Bun.gc(true)
  const settled = process.memoryUsage()
  const messages = yield* store.messages(session.id)

  // Baseline: re-reading the whole session at the last step vs at step 10.
  const steps = agentMessages(messages)
  const early = steps[Math.min(10, steps.length - 1)]
  const earlyCopy = early === undefined ? messages : messages.slice(0, messages.indexOf(early))
  yield* copySession(store, earlyCopy, "ses_bench_step10")
  const readEarlyMs = yield* timeReads(store, "ses_bench_step10")
  const readLateMs = yield* timeReads(store, session.id)
  return { turn, wallMs, endRss, settled, messages, events, readEarlyMs, readLateMs, earlyMessages: earlyCopy.length }
}).pipe(Effect.provide(layer), Effect.scoped)

// ---------------------------------------------------------------------------------------------
// Tokens: what was sent, and what a harness without pruning/compaction would have sent.

const isSummary = (m: MessageWithParts) => m.info.role === "assistant" && m.info.summary !== undefined
const isContinue = (m: MessageWithParts) => m.info.role === "user" && userFlag(m.info, "compaction_continue")
/** The assistant message of each model step, in order (compaction's summaries excluded). */
const agentMessages = (messages: ReadonlyArray<MessageWithParts>) => messages.filter((m) => m.info.role === "assistant" && !isSummary(m))

/** A stored message as the OpenAI-compatible wire carries it (as the AI SDK writes it; checked against the real bodies below). */
const wire = (m: MessageWithParts): Array<unknown> => {
  const texts = m.parts.flatMap((p) => (p.type === "text" && p.text.trim() !== "" ? [p.text] : []))
  if (m.info.role === "user") {
    if (texts.length === 0) return []
    return [{ role: "user", content: texts.length === 1 ? texts[0] : texts.map((text) => ({ type: "text", text })) }]
  }
  const tools = m.parts.flatMap((p) => (p.type === "tool" ? [p] : []))
  if (texts.length === 0 && tools.length === 0) return []
  const out: Array<unknown> = [
    {
      role: "assistant",
      content: texts.join(""),
      ...(tools.length > 0
        ? { tool_calls: tools.map((t) => ({ id: t.callID, type: "function", function: { name: t.tool, arguments: JSON.stringify(t.state.input) } })) }
        : {})
    }
  ]
  for (const t of tools) {
    const s = t.state
    // The store keeps a pruned output whole; the model view puts the pruned text in `output`.
    const content = s.status === "completed" ? s.output : s.status === "error" ? s.error : "The tool call was interrupted before it finished."
    out.push({ role: "tool", tool_call_id: t.callID, content })
  }
  return out
}
/** Characters of a request's JSON body with its non-system messages replaced by these serialised ones. */
const bodyChars = (shape: RequestShape, messageChars: number, count: number) =>
  shape.frameChars + 2 + shape.systemChars + messageChars + Math.max(0, shape.systemCount + count - 1)
const tokens = (chars: number) => Math.ceil(chars / 4)

// ---------------------------------------------------------------------------------------------

const exit = await Effect.runPromiseExit(run)
clearInterval(sampler)
await server.stop()

if (Exit.isFailure(exit)) {
  console.error(`\nlongcontext: the runtime failed before any figures: ${String(exit.cause)}`)
  console.error(`(${measured ? "measured turn" : "warm-up turn"}: ${agentSteps} agent requests and ${summaries} summary requests had been answered)`)
  fs.rmSync(cwd, { recursive: true, force: true })
  fs.rmSync(dataDir, { recursive: true, force: true })
  process.exit(1)
}
const r = exit.value
const turnError = r.turn._tag === "Failure" ? r.turn.failure : undefined
const result: TurnResult | undefined = r.turn._tag === "Success" ? r.turn.success : undefined

// Requests by kind; agent step k is the k-th agent request (1-based).
const requests = server.requests
const agentIdx: Array<number> = []
const summaryIdx: Array<number> = []
shapes.forEach((s, i) => {
  if (s.measured) (s.kind === "agent" ? agentIdx : summaryIdx).push(i)
})
const sentAgent = agentIdx.reduce((n, i) => n + tokens(requests[i]!.bodyLength), 0)
const sentSummary = summaryIdx.reduce((n, i) => n + tokens(requests[i]!.bodyLength), 0)

// "Without": step k's request with every message stored before step k verbatim, full outputs,
// no summaries or continuation prompts. "Modeled with": the same rebuild from the model view, to
// check the rebuild against the bytes actually sent.
const stepMessages = agentMessages(r.messages)
const verbatimChars = new Map<MessageWithParts, { chars: number; count: number }>()
for (const m of r.messages) {
  const w = isSummary(m) || isContinue(m) ? [] : wire(m)
  verbatimChars.set(m, { chars: w.reduce<number>((n, x) => n + JSON.stringify(x).length, 0), count: w.length })
}
let without = 0
let modeled = 0
let actualChecked = 0
let fullChars = 0
let fullCount = 0
let cursor = 0
const checked = Math.min(stepMessages.length, agentIdx.length)
for (let k = 0; k < checked; k++) {
  const at = r.messages.indexOf(stepMessages[k]!)
  for (; cursor < at; cursor++) {
    const v = verbatimChars.get(r.messages[cursor]!)!
    fullChars += v.chars
    fullCount += v.count
  }
  const shape = shapes[agentIdx[k]!]!
  without += tokens(bodyChars(shape, fullChars, fullCount))
  const view = modelView(r.messages.slice(0, at)).flatMap(wire)
  modeled += bodyChars(
    shape,
    view.reduce<number>((n, x) => n + JSON.stringify(x).length, 0),
    view.length
  )
  actualChecked += requests[agentIdx[k]!]!.bodyLength
}

// Harness overhead of step k: response k fully sent → request k+1 received, in wall time and in
// the process's CPU time (steadier on a loaded machine). A step followed by a summary request is a
// compaction step, reported apart (its figure leaves out the summary call).
interface Gap {
  readonly step: number
  readonly ms: number
  readonly cpu: number
  readonly compaction: boolean
}
const gaps: Array<Gap> = []
for (let k = 1; k < agentIdx.length; k++) {
  const a = agentIdx[k - 1]!
  const b = agentIdx[k]!
  const done = requests[a]!.respondedAt
  if (done === undefined) continue
  const between = summaryIdx.filter((i) => i > a && i < b)
  let ms = requests[b]!.receivedAt - done
  let cpu = cpuAtRequest[b]! - cpuAtResponse[a]!
  for (const i of between) {
    ms -= (requests[i]!.respondedAt ?? requests[i]!.receivedAt) - requests[i]!.receivedAt
    cpu -= (cpuAtResponse[i] ?? cpuAtRequest[i]!) - cpuAtRequest[i]!
  }
  gaps.push({ step: k, ms, cpu, compaction: between.length > 0 })
}
const lastStep = agentIdx.length
const windowOf = (from: number, to: number, compaction = false) => gaps.filter((g) => g.compaction === compaction && g.step >= from && g.step <= to)
const med = (gs: ReadonlyArray<Gap>, f: (g: Gap) => number) => (gs.length > 0 ? median(gs.map(f)) : NaN)
const earlyWindow = windowOf(5, 15)
const lateFrom = Math.max(16, lastStep - 10)
const lateWindow = windowOf(lateFrom, lastStep - 1)
const wallEarly = med(earlyWindow, (g) => g.ms)
const wallLate = med(lateWindow, (g) => g.ms)
const wallRatio = wallLate / wallEarly
const cpuEarly = med(earlyWindow, (g) => g.cpu)
const cpuLate = med(lateWindow, (g) => g.cpu)
const cpuRatio = cpuLate / cpuEarly
const compactionGaps = windowOf(1, lastStep, true)

// Outputs actually returned by the read calls.
const outputs = r.messages.flatMap((m) =>
  m.parts.flatMap((p) => (p.type === "tool" && p.state.status === "completed" ? [Buffer.byteLength(p.state.output)] : []))
)
const compactions = r.events.filter((e) => e.type === "compaction.completed").length
const storedSummaries = r.messages.filter(isSummary).length
const peakMiB = Math.max(peakRss, r.endRss) / MiB
const rssEarly = (rssAtStep[10] ?? NaN) / MiB
const rssLate = (rssAtStep[lastStep] ?? NaN) / MiB
const verdict = (ok: boolean) => (ok ? "PASS" : "FAIL")
const ms = (x: number) => (Number.isFinite(x) ? `${x.toFixed(2)} ms` : "-")
const times = (x: number) => (Number.isFinite(x) ? `${x.toFixed(2)}×` : "-")
const mib = (x: number) => (Number.isFinite(x) ? `${x.toFixed(0)} MiB` : "-")
const k1 = (x: number) => `${(x / 1000).toLocaleString("en", { maximumFractionDigits: 0 })}k`

console.log(
  `\nlongcontext — one turn of ${STEPS} steps against a ${CONTEXT / 1000}k-token model, each step a read of a 4–12 KB file ` +
    `(in-process runtime, SQLite store, scripted server on 127.0.0.1; after a ${WARMUP}-step warm-up turn on another session)`
)
console.log(`machine: ${machine()}\n`)
if (turnError !== undefined) {
  console.log(`**The turn failed after ${agentSteps} agent requests:** ${turnError._tag}: ${turnError.message}\n(figures below cover what ran)\n`)
}
console.log(
  table(
    ["measure", "value", "target", ""],
    [
      [
        "model steps (agent requests)",
        `${agentIdx.length}${result ? ` (turn ended after ${result.steps})` : ""}`,
        `${STEPS}`,
        verdict(result !== undefined && agentIdx.length === STEPS)
      ],
      ["compactions (compaction.completed / summaries stored)", `${compactions} / ${storedSummaries}`, "", ""],
      ["summary requests", `${summaryIdx.length}`, "", ""],
      [
        "tool output per step (min / mean / max)",
        outputs.length > 0
          ? `${(Math.min(...outputs) / 1024).toFixed(1)} / ${(outputs.reduce((a, b) => a + b, 0) / outputs.length / 1024).toFixed(1)} / ${(Math.max(...outputs) / 1024).toFixed(1)} KB`
          : "-",
        "4–12 KB",
        ""
      ],
      [
        "tokens sent with reins, agent + summary (prompt_tokens = body chars / 4)",
        `${k1(sentAgent + sentSummary)} (${k1(sentAgent)} + ${k1(sentSummary)})`,
        "",
        ""
      ],
      ["tokens without pruning/compaction (same transcript)", k1(without), "", ""],
      ["without / with", `${(without / (sentAgent + sentSummary)).toFixed(1)}×`, "", ""],
      ["rebuild check: modeled / actual bytes of agent requests", actualChecked > 0 ? (modeled / actualChecked).toFixed(4) : "-", "≈ 1", ""],
      ["wall time of the turn", `${(r.wallMs / 1000).toFixed(2)} s`, "", ""],
      [`RSS at step 10 / at step ${lastStep}`, `${mib(rssEarly)} / ${mib(rssLate)}`, "", ""],
      [`JS heap in use at step 10 / at step ${lastStep}`, `${mib((heapAtStep[10] ?? NaN) / MiB)} / ${mib((heapAtStep[lastStep] ?? NaN) / MiB)}`, "", ""],
      ["after the turn and a full GC: RSS / JS heap in use", `${mib(r.settled.rss / MiB)} / ${mib(r.settled.heapUsed / MiB)}`, "", ""],
      ["peak RSS (whole process, server included)", mib(peakMiB), `< ${RSS_TARGET_MiB} MiB`, verdict(peakMiB < RSS_TARGET_MiB)],
      [`harness overhead per step, median steps 5–15 (n=${earlyWindow.length}): wall / CPU`, `${ms(wallEarly)} / ${ms(cpuEarly)}`, "", ""],
      [`harness overhead per step, median steps ${lateFrom}–${lastStep - 1} (n=${lateWindow.length}): wall / CPU`, `${ms(wallLate)} / ${ms(cpuLate)}`, "", ""],
      ["overhead late / early, wall time", times(wallRatio), `≤ ${OVERHEAD_TARGET}×`, verdict(wallRatio <= OVERHEAD_TARGET)],
      ["overhead late / early, CPU time", times(cpuRatio), `≤ ${OVERHEAD_TARGET}×`, verdict(cpuRatio <= OVERHEAD_TARGET)],
      [
        `compaction steps' harness time, median (n=${compactionGaps.length}; summary call left out): wall / CPU`,
        `${ms(med(compactionGaps, (g) => g.ms))} / ${ms(med(compactionGaps, (g) => g.cpu))}`,
        "",
        ""
      ],
      [`baseline: store.messages, 10-step session (${r.earlyMessages} messages)`, ms(r.readEarlyMs), "", ""],
      [`baseline: store.messages, whole session (${r.messages.length} messages)`, ms(r.readLateMs), "", ""],
      ["baseline: whole-session read late / early", `${(r.readLateMs / r.readEarlyMs).toFixed(1)}×`, "", ""]
    ]
  )
)

// The trend: per-step overhead, request size and RSS over the turn.
const rows: Array<Array<string>> = []
const bucket = Math.max(10, Math.ceil(lastStep / 10 / 10) * 10)
for (let from = 1; from < lastStep; from += bucket) {
  const to = Math.min(lastStep - 1, from + bucket - 1)
  const plain = windowOf(from, to)
  const compacting = windowOf(from, to, true).length
  const sent = agentIdx.slice(from - 1, to).map((i) => tokens(requests[i]!.bodyLength))
  rows.push([
    `${from}–${to}`,
    plain.length > 0 ? med(plain, (g) => g.ms).toFixed(2) : "-",
    plain.length > 0 ? Math.max(...plain.map((g) => g.ms)).toFixed(2) : "-",
    plain.length > 0 ? med(plain, (g) => g.cpu).toFixed(2) : "-",
    `${compacting}`,
    sent.length > 0 ? k1(median(sent)) : "-",
    mib((rssAtStep[to + 1] ?? NaN) / MiB)
  ])
}
console.log(`\nper-step trend (harness overhead = response k sent → request k+1 received; compaction steps left out of the medians)\n`)
console.log(
  table(["steps", "overhead median ms", "overhead max ms", "overhead CPU median ms", "compactions", "tokens per request (median)", "RSS at end"], rows)
)
console.log(
  `\npeak RSS ${mib(peakMiB)} ${peakMiB < RSS_TARGET_MiB ? "<" : "≥"} ${RSS_TARGET_MiB} MiB: ${verdict(peakMiB < RSS_TARGET_MiB)}; ` +
    `overhead at step ${lastStep} vs step 10 ${times(wallRatio)} wall ${wallRatio <= OVERHEAD_TARGET ? "≤" : ">"} ${OVERHEAD_TARGET}×: ${verdict(wallRatio <= OVERHEAD_TARGET)}, ` +
    `${times(cpuRatio)} CPU ${cpuRatio <= OVERHEAD_TARGET ? "≤" : ">"} ${OVERHEAD_TARGET}×: ${verdict(cpuRatio <= OVERHEAD_TARGET)}`
)

fs.rmSync(cwd, { recursive: true, force: true })
fs.rmSync(dataDir, { recursive: true, force: true })
if (turnError !== undefined) process.exitCode = 1
