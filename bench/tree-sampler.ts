// A worker that samples the resident memory of a process tree (from /proc) until told to stop, and
// answers with the peak: walking /proc in the benchmark's own thread would hold up the event stream
// it is timing. Usage: new Worker(url, { workerData: { pid, everyMs } }); postMessage("stop").
import { parentPort, workerData } from "node:worker_threads"
import { treeRssBytes } from "../apps/cli/test/pty/index.ts"

const { pid, everyMs } = workerData as { pid: number; everyMs: number }
let peak = treeRssBytes(pid)
const timer = setInterval(() => (peak = Math.max(peak, treeRssBytes(pid))), everyMs)
parentPort!.on("message", () => {
  clearInterval(timer)
  peak = Math.max(peak, treeRssBytes(pid))
  parentPort!.postMessage(peak)
  parentPort!.close()
})
