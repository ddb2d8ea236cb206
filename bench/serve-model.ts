// For bench/serve.ts: the scripted model in its own process, so that the bench's client (reading the event streams
// and stamping their arrival) shares its event loop with nothing else. Prints its URL, runs until killed.
// Usage: bun bench/serve-model.ts STEPS WARMUP_TEXT [echo|sleep:SECONDS|hold]
// (each step's command: `echo N` (the default); `sleep SECONDS; echo N` (an I/O-bound step); hold: one step of
// `sleep 600` whose result, once the turn is resumed elsewhere, is answered (bench/cluster.ts's failover))
import { startScriptedServer, type ScriptedStep } from "@reins/testkit"

const STEPS = Number(process.argv[2])
const WARMUP = process.argv[3] ?? "warm up"
const MODE = process.argv[4] ?? "echo"
const command = (n: number) => (MODE.startsWith("sleep:") ? `sleep ${MODE.slice(6)}; echo ${n}` : MODE === "hold" ? "sleep 600" : `echo ${n}`)
const toolResults = (body: any): number => (body?.messages ?? []).filter((m: any) => m.role === "tool").length
const firstUser = (body: any): string => {
  const m = (body?.messages ?? []).find((x: any) => x.role === "user")
  return typeof m?.content === "string" ? m.content : JSON.stringify(m?.content ?? "")
}
/** No tools offered (a title or summary request) → a title; the warm-up → an answer; else STEPS × `echo N`, then the answer. */
const respond = (body: any): ScriptedStep => {
  if (!Array.isArray(body?.tools) || body.tools.length === 0) return { text: "Bench session" }
  // a warm-up that says "with a tool" runs one command first (the tool's path warmed too, not only the model's)
  if (firstUser(body).includes(WARMUP))
    return firstUser(body).includes("with a tool") && toolResults(body) === 0
      ? { toolCalls: [{ name: "bash", arguments: { command: "echo warm", description: "Warm up" } }] }
      : { text: "warm" }
  const done = toolResults(body)
  return done < STEPS
    ? { toolCalls: [{ name: "bash", arguments: { command: command(done), description: "Print a number" } }] }
    : { text: `done after ${done} steps` }
}
const server = await startScriptedServer([], { respond, keepBodies: false })
console.log(server.url)
