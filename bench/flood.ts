// Benchmark: a bash call that prints 1 GB. reins streams it to the spill file with bounded
// memory, and the file keeps its first and last parts up to the spill cap (256 MiB by default).
// Measured in one run: reins's peak RSS for the flood against the 150 MiB target, next to its
// peak RSS for the same call printing 1 MiB (the runtime's own baseline); the spill throughput
// against the same pipeline into `cat > file`. Usage: bun bench/flood.ts  (REINS_FLOOD_MB to
// resize, REINS_BIN for another build)
import { startScriptedServer } from "@reins/testkit"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { BIN, machine, measure, project, table } from "./support.ts"

const MB = Number(process.env.REINS_FLOOD_MB ?? 1024)
const TARGET_MIB = 150
const CAP = 256 * 1024 * 1024
const generate = (mb: number) => `head -c ${mb}M /dev/zero | tr '\\0' 'x' | fold -w 100`

const bin = process.env.REINS_BIN ?? BIN
if (!fs.existsSync(bin)) throw new Error("Build first: bun run build")

// baseline: the same pipeline, `cat` writing to a file
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "reins-flood-"))
const base = await measure(["/bin/sh", "-c", `${generate(MB)} | cat > ${path.join(scratch, "out.txt")}`], scratch, { PATH: process.env.PATH ?? "" })
const bytes = fs.statSync(path.join(scratch, "out.txt")).size
fs.rmSync(scratch, { recursive: true, force: true })

/** One `reins run` whose model calls bash once with `command`: peak RSS and the completed tool part. */
const runBash = async (command: string) => {
  const server = await startScriptedServer([{ toolCalls: [{ name: "bash", arguments: { command, timeout: 600_000 } }] }, { text: "flooded" }])
  const p = project(server.url)
  try {
    const run = await measure([bin, "run", "--yolo", "--format", "json", "flood"], p.cwd, p.env, "flooded")
    const events = run.stdout
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l))
    const done = events.find((e) => e.type === "part.updated" && e.part.type === "tool" && e.part.state.status === "completed")
    if (!done) throw new Error("the bash call did not complete")
    const file = done.part.state.metadata.outputPath as string
    return { run, part: done.part, spilled: fs.statSync(file).size, marker: markerOf(file) }
  } finally {
    await server.stop()
    p.cleanup()
  }
}

/** The marker line a capped spill file has where the middle was dropped (near the middle of the cap). */
const markerOf = (file: string) => {
  const size = fs.statSync(file).size
  const from = Math.max(0, CAP / 2 - 128 * 1024)
  const buf = Buffer.alloc(Math.min(256 * 1024, Math.max(0, size - from)))
  const fd = fs.openSync(file, "r")
  fs.readSync(fd, buf, 0, buf.length, from)
  fs.closeSync(fd)
  const text = buf.toString("latin1")
  const at = text.indexOf("[reins: ")
  if (at === -1) return undefined
  const line = text.slice(at, text.indexOf("\n", at) + 1)
  const m = line.match(/^\[reins: (\d+) bytes \((\d+) lines\)/)
  return m ? { bytes: Buffer.byteLength(line), dropped: Number(m[1]) } : undefined
}

const idle = await runBash(generate(1))
const flood = await runBash(generate(MB))
const toolMs = flood.part.state.time.end - flood.part.state.time.start
const seen = Buffer.byteLength(flood.part.state.output)
// what the file holds plus what it says it dropped is the whole output
const accounted = flood.marker ? flood.spilled - flood.marker.bytes + flood.marker.dropped : flood.spilled
const capOk = bytes <= CAP ? flood.spilled === bytes : flood.spilled <= CAP + (flood.marker?.bytes ?? 0) && accounted === bytes
const pass = flood.run.rssMiB <= TARGET_MIB

const ratio = base.wallMs / toolMs
console.log(`\nflood — one bash call printing ${MB} MiB (${bytes} bytes, 100-column lines), scripted server on 127.0.0.1`)
console.log(`machine: ${machine()}\n`)
console.log(
  table(
    ["measure", "value", "target", ""],
    [
      ["reins peak RSS (whole process)", `${flood.run.rssMiB.toFixed(0)} MiB`, `≤ ${TARGET_MIB} MiB`, pass ? "ok" : "MISS"],
      ["baseline: reins peak RSS, same call printing 1 MiB", `${idle.run.rssMiB.toFixed(0)} MiB`, "", ""],
      ["growth over the baseline", `${(flood.run.rssMiB - idle.run.rssMiB).toFixed(0)} MiB`, "", ""],
      ["spill file size", `${flood.spilled}`, bytes <= CAP ? `= ${bytes}` : `≤ ${CAP} + marker`, capOk ? "ok" : "MISS"],
      ["dropped from the middle (marker)", `${flood.marker?.dropped ?? 0}`, bytes <= CAP ? "0" : `kept + dropped = ${bytes}`, capOk ? "ok" : "MISS"],
      ["model-visible bytes", `${seen}`, "≤ 51200", seen <= 51_200 ? "ok" : "MISS"],
      ["bash call (generate + spill) wall", `${(toolMs / 1000).toFixed(2)} s`, "", ""],
      ["baseline: same pipeline into cat > file", `${(base.wallMs / 1000).toFixed(2)} s`, "", ""],
      ["spill throughput vs cat", `${ratio.toFixed(2)}×`, "≥ 0.5×", ratio >= 0.5 ? "ok" : "MISS"],
      ["throughput", `${(bytes / 2 ** 20 / (toolMs / 1000)).toFixed(0)} MiB/s`, "", ""]
    ]
  )
)
console.log(
  `\n${pass ? "PASS" : "FAIL"}: peak RSS ${flood.run.rssMiB.toFixed(0)} MiB for ${MB} MiB of output ` +
    `(target ≤ ${TARGET_MIB} MiB; the same run with 1 MiB of output peaked at ${idle.run.rssMiB.toFixed(0)} MiB)`
)
