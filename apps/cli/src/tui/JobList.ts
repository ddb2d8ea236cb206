// What /jobs prints: the background jobs the agent started with bash (background: true), running ones first.
import type { JobView } from "@reins/tool"
import { byteSize } from "../present/Units.ts"

const statusOf = (job: JobView) => {
  const s = job.status
  if (s.state === "running") return "running"
  if (s.state === "exited") return s.code !== null ? `exited ${s.code}` : `ended by ${s.signal ?? "a signal"}`
  if (s.state === "killed") return `killed (${s.signal})`
  return "failed to start"
}

/** The jobs as lines for a notice: id, status, output so far, what it runs. */
export const jobsText = (jobs: ReadonlyArray<JobView>): string => {
  if (jobs.length === 0) return "No background jobs: the agent starts them with bash (background: true)."
  const running = jobs.filter((j) => j.status.state === "running")
  const ordered = [...running, ...jobs.filter((j) => j.status.state !== "running")]
  const width = Math.max(...ordered.map((j) => j.id.length))
  return [
    `Background jobs (${running.length} running):`,
    ...ordered.map(
      (j) =>
        `  ${j.id.padEnd(width)}  ${statusOf(j).padEnd(16)}  ${byteSize(j.outputBytes).padStart(8)}  ${(j.description ?? j.command).split("\n", 1)[0]!.slice(0, 80)}`
    ),
    ...(running.length > 0 ? ["/jobs kill ID stops one (its child processes too); all stop when reins exits."] : [])
  ].join("\n")
}
