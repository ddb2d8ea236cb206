// Benchmark (issue 18): a 2-level task tree of 8 sub-agents against the same work run sequentially
// in one session. The tree: the top agent starts 2 sub-agents in one step; each of them starts 3 in
// one step (2 + 6 = 8). Every sub-agent does one unit of work — a model call that asks for a
// `sleep` command, the command, and a model call that answers — and the top agent does the same
// units one after another in the sequential row. The scripted server answers every model call after
// MODEL_MS (its latency); the command takes WORK_MS. Wall time is `reins run` from spawn to exit.
// Usage: bun bench/subagents.ts [--runs N]
import { startScriptedServer, type ScriptedStep } from "@reins/testkit"
import { BIN, machine, measure, median, project, table } from "./support.ts"

const runsFlag = process.argv.indexOf("--runs")
const RUNS = runsFlag >= 0 ? Number(process.argv[runsFlag + 1]) : 3
if (!Number.isInteger(RUNS) || RUNS < 1) {
  console.error(`--runs wants a whole number of at least 1, got ${process.argv[runsFlag + 1]}`)
  process.exit(2)
}

const MODEL_MS = 150
const WORK_MS = 400
const LEAVES = 3
const BRANCHES = 2

const firstUser = (body: any): string => {
  const m = (body?.messages ?? []).find((x: any) => x.role === "user")
  return typeof m?.content === "string" ? m.content : JSON.stringify(m?.content ?? "")
}
const toolResults = (body: any): number => (body?.messages ?? []).filter((m: any) => m.role === "tool").length
const work = (who: string): ScriptedStep => ({
  toolCalls: [{ name: "bash", arguments: { command: `sleep ${WORK_MS / 1000} && echo ${who}` } }],
  delayMs: MODEL_MS
})
const answer = (text: string): ScriptedStep => ({ text, delayMs: MODEL_MS })
const tasks = (prefix: string, n: number): ScriptedStep => ({
  toolCalls: Array.from({ length: n }, (_, i) => ({
    name: "task",
    arguments: { description: `${prefix}${i}`, prompt: `${prefix}${i}`, subagent_type: "general" }
  })),
  delayMs: MODEL_MS
})

/** The tree: TOP → BRANCH0..1 → BRANCH<i>-LEAF0..2; a branch does its own unit of work too, after its leaves. */
const tree = (body: any): ScriptedStep => {
  const who = firstUser(body)
  const done = toolResults(body)
  if (who.includes("-LEAF")) return done === 0 ? work(who) : answer(`${who} done`)
  if (who.startsWith("BRANCH")) return done === 0 ? tasks(`${who}-LEAF`, LEAVES) : done === LEAVES ? work(who) : answer(`${who} done`)
  return done === 0 ? tasks("BRANCH", BRANCHES) : answer("tree done")
}

/** The same units of work, one after another in the top session: 8 commands, then the answer. */
const UNITS = BRANCHES * LEAVES + BRANCHES
const sequential = (body: any): ScriptedStep => {
  const done = toolResults(body)
  return done < UNITS ? work(`unit${done}`) : answer("sequence done")
}

const runOnce = async (respond: (body: any) => ScriptedStep, expect: string) => {
  const server = await startScriptedServer([], { respond })
  const p = project(server.url)
  try {
    const sample = await measure([process.execPath, BIN, "run", "--yolo", "go"], p.cwd, p.env, expect)
    return { wallMs: sample.wallMs, requests: server.requests.length }
  } finally {
    await server.stop()
    p.cleanup()
  }
}

const rows: Array<Array<string>> = []
const results: Record<string, number> = {}
for (const [label, respond, expect] of [
  ["task tree: 2 sub-agents × 3 sub-agents (8)", tree, "tree done"],
  [`one session, the same ${UNITS} units in sequence`, sequential, "sequence done"]
] as const) {
  const walls: Array<number> = []
  let requests = 0
  for (let i = 0; i < RUNS; i++) {
    const r = await runOnce(respond, expect)
    walls.push(r.wallMs)
    requests = r.requests
  }
  results[label] = median(walls)
  rows.push([label, String(requests), `${Math.round(median(walls))}`, `${Math.round(Math.min(...walls))}`])
}

console.log(`# sub-agents: a 2-level task tree vs the same work in sequence (${machine()})`)
console.log(`model latency ${MODEL_MS} ms per call, ${WORK_MS} ms of work per unit, ${RUNS} runs each\n`)
console.log(table(["run", "model calls", "wall ms (median)", "wall ms (min)"], rows))
const [treeMs, seqMs] = Object.values(results) as [number, number]
console.log(`\ntree / sequential: ${(treeMs / seqMs).toFixed(2)}×`)
