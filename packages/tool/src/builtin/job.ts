// The tools over a session's background jobs (Jobs.ts): `job_output` reads what a job wrote since the last read,
// `job_kill` stops one. bash with `background: true` starts them.
import { Effect, Schema } from "effect"
import { define } from "../Tool.ts"
import { Jobs, type JobView } from "./Jobs.ts"
import outputTemplate from "./job_output.txt" with { type: "text" }
import killTemplate from "./job_kill.txt" with { type: "text" }

/** A job's status in a few words: `running`, `exited with code 0`, `killed by SIGTERM`. */
export const statusText = (job: JobView): string => {
  const s = job.status
  switch (s.state) {
    case "running":
      return "running"
    case "exited":
      return s.code !== null ? `exited with code ${s.code}` : `ended by ${s.signal ?? "a signal"}`
    case "killed":
      return `killed by ${s.signal}`
    case "failed":
      return `failed to start: ${s.message}`
  }
}

/** One line per job: id, status, output so far, command. */
export const jobLine = (job: JobView) => `${job.id}  ${statusText(job)}  ${job.outputBytes} bytes  ${job.command.split("\n", 1)[0]!.slice(0, 120)}`

/** `job_output`: the output a job wrote since the last read, then its status; without an id, the session's jobs. */
export const jobOutput = Effect.gen(function* () {
  const jobs = yield* Jobs
  return yield* define("job_output", {
    description: outputTemplate.trim(),
    // no descriptions on the parameters and no full_output: every request carries the definition
    parameters: Schema.Struct({ id: Schema.optionalKey(Schema.String), wait_ms: Schema.optionalKey(Schema.Number) }),
    truncate: "tail",
    fullOutput: false,
    // offered once the session has a job: until then the definition would only take room in every request
    offered: (sessionID) => jobs.list(sessionID).length > 0,
    execute: (args, ctx) =>
      Effect.gen(function* () {
        // what running jobs left where git runs code goes now, not only when they end
        jobs.settle()
        if (args.id === undefined) {
          const listed = jobs.list(ctx.sessionID)
          return {
            title: `${listed.filter((j) => j.status.state === "running").length} running`,
            output: listed.length === 0 ? "No background jobs in this session." : listed.map(jobLine).join("\n"),
            metadata: { jobs: listed.map((j) => ({ id: j.id, status: j.status })) }
          }
        }
        const { job, piece } = yield* jobs.read(ctx.sessionID, args.id, args.wait_ms !== undefined ? { waitMs: Math.max(0, args.wait_ms) } : {})
        const notes: Array<string> = []
        if (piece.dropped > 0) notes.push(`(${piece.dropped} bytes before this were dropped: a job keeps only its last output)`)
        if (job.note !== undefined) notes.push(job.note)
        notes.push(job.status.state === "running" ? `(${job.id} running, ${job.outputBytes} bytes of output so far)` : `(${job.id} ${statusText(job)})`)
        return {
          title: `${job.id} ${statusText(job)}`,
          output: piece.text.length === 0 ? "(no new output)" : piece.text,
          trailer: notes.join("\n"),
          command: job.command,
          ...(job.status.state === "exited" ? { exitCode: job.status.code } : {}),
          metadata: { jobID: job.id, status: job.status, outputBytes: job.outputBytes, from: piece.from, to: piece.to }
        }
      })
  })
})

/** `job_kill`: stops a job's whole process group and says how it ended. */
export const jobKill = Effect.gen(function* () {
  const jobs = yield* Jobs
  return yield* define("job_kill", {
    description: killTemplate.trim(),
    parameters: Schema.Struct({ id: Schema.String }),
    truncate: false,
    offered: (sessionID) => jobs.list(sessionID).length > 0,
    execute: (args, ctx) =>
      Effect.map(
        Effect.andThen(
          Effect.sync(() => jobs.settle()),
          jobs.kill(ctx.sessionID, args.id)
        ),
        (job) => ({
          title: `${job.id} ${statusText(job)}`,
          output: `${job.id} ${statusText(job)}; its process group is gone.${job.outputBytes > 0 ? " Output not yet read stays readable with job_output." : ""}`,
          metadata: { jobID: job.id, status: job.status }
        })
      )
  })
})
