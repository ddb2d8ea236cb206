// Benchmark: a bash call that prints 1 GB. reins streams it to the spill file with bounded
// memory; compare its peak RSS with the target and its spill throughput with `cat` writing the
// same bytes to a file in the same run. Usage: bun bench/flood.ts  (REINS_FLOOD_MB to resize)
import { startScriptedServer } from "@reins/testkit"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { BIN, machine, measure, project, table } from "./support.ts"

const MB = Number(process.env.REINS_FLOOD_MB ?? 1024)
const generate = `head -c ${MB}M /dev/zero | tr '\\0' 'x' | fold -w 100`

if (!fs.existsSync(BIN)) throw new Error("Build first: bun run build")

// baseline: the same pipeline, `cat` writing to a file
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "reins-flood-"))
const base = await measure(["/bin/sh", "-c", `${generate} | cat > ${path.join(scratch, "out.txt")}`], scratch, { PATH: process.env.PATH ?? "" })
const bytes = fs.statSync(path.join(scratch, "out.txt")).size
fs.rmSync(scratch, { recursive: true, force: true })

const server = await startScriptedServer([{ toolCalls: [{ name: "bash", arguments: { command: generate, timeout: 600_000 } }] }, { text: "flooded" }])
const p = project(server.url)
const run = await measure([BIN, "run", "--yolo", "--format", "json", "flood"], p.cwd, p.env, "flooded")
await server.stop()
const events = run.stdout.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l))
const done = events.find((e) => e.type === "part.updated" && e.part.type === "tool" && e.part.state.status === "completed")
if (!done) throw new Error("the bash call did not complete")
const toolMs = done.part.state.time.end - done.part.state.time.start
const spill = done.part.state.metadata.outputPath as string
const spilled = fs.statSync(spill).size
const seen = Buffer.byteLength(done.part.state.output)
p.cleanup()

const ratio = base.wallMs / toolMs
console.log(`\nflood — one bash call printing ${MB} MiB (${bytes} bytes, 100-column lines), scripted server on 127.0.0.1`)
console.log(`machine: ${machine()}\n`)
console.log(
  table(
    ["measure", "value", "target", ""],
    [
      ["reins peak RSS (whole process)", `${run.rssMiB.toFixed(0)} MiB`, "< 150 MiB", run.rssMiB < 150 ? "ok" : "MISS"],
      ["spill file size", `${spilled}`, `= ${bytes}`, spilled === bytes ? "ok" : "MISS"],
      ["model-visible bytes", `${seen}`, "≤ 51200", seen <= 51_200 ? "ok" : "MISS"],
      ["bash call (generate + spill) wall", `${(toolMs / 1000).toFixed(2)} s`, "", ""],
      ["baseline: same pipeline into cat > file", `${(base.wallMs / 1000).toFixed(2)} s`, "", ""],
      ["spill throughput vs cat", `${ratio.toFixed(2)}×`, "≥ 0.5×", ratio >= 0.5 ? "ok" : "MISS"],
      ["throughput", `${(bytes / 2 ** 20 / (toolMs / 1000)).toFixed(0)} MiB/s`, "", ""]
    ]
  )
)
