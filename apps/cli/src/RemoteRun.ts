// `reins run --attach URL`: one turn on a running `reins serve`, printed exactly as a local `reins run` prints it
// (the answer or one JSON event per line on stdout; tool lines and the closing line on stderr). The turn runs in the
// server: this process subscribes to its events, posts the prompt, answers permission questions when it has a
// terminal, and asks the server to abort the turn on Ctrl+C.
import { Effect, FiberMap, Option, Schema, Semaphore, Stream } from "effect"
import { Action, type PermissionAsked, Session, SessionEvent, TurnResult, type Event } from "@reins/domain"
import type { Pending } from "@reins/permission"
import { failure, type CliError } from "./CliError.ts"
import { jsonRun, reportTurnResult } from "./TurnResultLine.ts"
import { ownEvents } from "./OwnEvents.ts"
import { liveEnabled, styleFor } from "./present/Style.ts"
import { events, remote, request, requestAs, type Remote } from "./Remote.ts"
import { textPrinter } from "./TextPrinter.ts"
import { ttyPrompter } from "./TtyPrompter.ts"

/** What `reins run --attach` was given. */
export interface AttachInput {
  readonly url: string
  readonly token: string | undefined
  readonly text: string
  readonly format: "text" | "json"
  readonly model: string | undefined
  readonly variant: string | undefined
  readonly agent: string | undefined
  readonly session: string | undefined
  readonly continue: boolean
  readonly env: Record<string, string | undefined>
}

const Health = Schema.Struct({ ok: Schema.Boolean, directory: Schema.String })
const Accepted = Schema.Struct({ sessionID: Schema.String, queued: Schema.Boolean, messageID: Schema.optional(Schema.String) })
const TurnFailed = Schema.Struct({
  type: Schema.Literal("turn.failed"),
  sessionID: Schema.String,
  error: Schema.Struct({ tag: Schema.String, message: Schema.String })
})
const Disconnected = Schema.Struct({ type: Schema.Literal("server.disconnected"), reason: Schema.String })
const Finished = Schema.Struct({ type: Schema.Literal("turn.finished"), result: TurnResult })

const json = Schema.fromJsonString
const decodeEvent = Schema.decodeUnknownOption(json(SessionEvent))
const decodeFailed = Schema.decodeUnknownOption(json(TurnFailed))
const decodeDisconnected = Schema.decodeUnknownOption(json(Disconnected))
const decodeFinished = Schema.decodeUnknownOption(json(Finished))
const isAction = Schema.is(Action)

/** A `permission.asked` event as the terminal prompter shows it. */
type Asked = typeof PermissionAsked.Type

const pendingOf = (asked: Asked): Pending => {
  const { type: _, rule, ...rest } = asked
  return { ...rest, ...(rule === undefined ? {} : { rule: { ...rule, action: isAction(rule.action) ? rule.action : "ask" } }) }
}

/** The session the turn runs on: `--session ID`, `--continue` (the server's newest), or a new one. */
const chooseSession = (r: Remote, input: AttachInput, announce: (session: Session) => Effect.Effect<void>) =>
  Effect.gen(function* () {
    if (input.session !== undefined) {
      return (yield* requestAs(r, Session, "GET", `/session/${encodeURIComponent(input.session)}`)).id
    }
    if (input.continue) {
      const latest = (yield* requestAs(r, Schema.Array(Session), "GET", "/session?limit=1"))[0]
      if (latest !== undefined) return latest.id
    }
    const created = yield* requestAs(r, Session, "POST", "/session", {})
    yield* announce(created)
    return created.id
  })

/** How a turn on the server ended, seen from its event stream. */
type Ending =
  | { readonly _tag: "finished"; readonly result: TurnResult }
  | { readonly _tag: "failed"; readonly message: string }
  | { readonly _tag: "queued"; readonly messageID: string | undefined }

/** Runs one turn on the server at `input.url`; the exit code and message as a local run would give them. */
export const runAttach = (input: AttachInput): Effect.Effect<void, CliError> =>
  Effect.gen(function* () {
    const r = yield* remote(input.url, input.token)
    // first of all: is a reins server there, and does it take our token
    yield* requestAs(r, Health, "GET", "/health")
    const out = (s: string) => void process.stdout.write(s)
    const err = (s: string) => void process.stderr.write(s)
    const human =
      input.format === "text"
        ? textPrinter(out, err, {
            style: styleFor(process.stderr, input.env),
            live: liveEnabled(process.stderr.isTTY === true, input.env),
            outIsTTY: process.stdout.isTTY === true,
            cwd: process.cwd(),
            columns: () => process.stderr.columns ?? 80
          })
        : undefined
    // json: every event printed is watched for the closing `turn.result` line
    const json = human ? undefined : jsonRun(out)
    const printer = human ?? json!.printer
    const interactive = Boolean(process.stdin.isTTY && process.stderr.isTTY)
    let current: string | undefined
    let running = false

    const program = Effect.gen(function* () {
      const sessionID = yield* chooseSession(r, input, (session) => printer.handler({ type: "session.created", session }))
      current = sessionID
      json?.session(sessionID)
      const own = human ? ownEvents(sessionID, { usage: true }) : () => true
      // questions on the terminal, one at a time; one answered elsewhere (another client, the timeout) is closed here
      const questions = yield* FiberMap.make<string>()
      const oneAtATime = yield* Semaphore.make(1)
      const answer = (asked: Asked) =>
        Semaphore.withPermits(
          oneAtATime,
          1
        )(
          Effect.acquireUseRelease(
            Effect.sync(() => human?.hold()),
            () => ttyPrompter.ask(pendingOf(asked)),
            () => Effect.sync(() => human?.release())
          )
        ).pipe(
          Effect.flatMap((reply) =>
            request(
              r,
              "POST",
              `/session/${encodeURIComponent(asked.sessionID)}/permissions/${encodeURIComponent(asked.id)}`,
              { response: reply.reply, ...(reply.message ? { message: reply.message } : {}) },
              [404]
            )
          ),
          // 404: the question is no longer waiting (answered meanwhile), not an error of this run
          Effect.catch((e) => Effect.sync(() => err(`reins: ${e.message}\n`)))
        )

      const onFrame = (frame: { readonly event: string; readonly data: string }): Effect.Effect<Option.Option<Ending>, CliError> =>
        Effect.gen(function* () {
          switch (frame.event) {
            case "turn.finished": {
              const finished = decodeFinished(frame.data)
              return Option.isSome(finished) && finished.value.result.sessionID === sessionID
                ? Option.some({ _tag: "finished", result: finished.value.result } as const)
                : Option.none()
            }
            case "turn.failed": {
              const failed = decodeFailed(frame.data)
              return Option.isSome(failed) && failed.value.sessionID === sessionID
                ? Option.some({ _tag: "failed", message: failed.value.error.message } as const)
                : Option.none()
            }
            case "server.disconnected": {
              const why = Option.match(decodeDisconnected(frame.data), { onNone: () => "no reason given", onSome: (d) => d.reason })
              return yield* failure(`the server at ${r.base} disconnected this client (${why}); the turn goes on there in session ${sessionID}`)
            }
          }
          const decoded = decodeEvent(frame.data)
          if (Option.isNone(decoded) || decoded.value.type === "turn.finished") return Option.none()
          const event: Event = decoded.value
          if (own(event)) yield* printer.handler(event)
          if (interactive && event.type === "permission.asked") yield* FiberMap.run(questions, event.id, answer(event))
          if (event.type === "permission.replied") yield* FiberMap.remove(questions, event.id)
          return Option.none()
        })

      const closed = (why?: string) =>
        failure(
          `the server at ${r.base} closed the event stream before the turn ended (${why === undefined ? "" : `${why}; `}did it stop?); the session is ${sessionID}`
        )
      const stream = events(r, sessionID, closed)
      // the prompt is posted once the subscription is in place (its first frame), so no event of the turn is missed
      const ending = yield* stream.pipe(
        Stream.mapEffect((frame) =>
          frame.event === "server.connected"
            ? Effect.gen(function* (): Effect.fn.Return<Option.Option<Ending>, CliError> {
                human?.begin()
                const accepted = yield* requestAs(r, Accepted, "POST", `/session/${encodeURIComponent(sessionID)}/prompt_async`, {
                  text: input.text,
                  ...(input.model === undefined ? {} : { model: input.model }),
                  ...(input.agent === undefined ? {} : { agent: input.agent }),
                  ...(input.variant === undefined ? {} : { variant: input.variant })
                })
                running = !accepted.queued
                return accepted.queued ? Option.some<Ending>({ _tag: "queued", messageID: accepted.messageID }) : Option.none()
              })
            : onFrame(frame)
        ),
        Stream.filter((o): o is Option.Some<Ending> => Option.isSome(o)),
        Stream.runHead,
        Effect.map(Option.map((some) => some.value))
      )
      running = false
      printer.finish()
      if (Option.isNone(ending)) {
        return yield* closed()
      }
      const end = ending.value
      if (end._tag === "queued") {
        json?.ended({ _tag: "Queued" })
        if (input.format === "json") out(`${JSON.stringify({ type: "message.queued", sessionID, messageID: end.messageID })}\n`)
        else err(`Session ${sessionID} is running a turn on the server: your message was queued, and that turn reads it at its next step.\n`)
        return
      }
      if (end._tag === "failed") return yield* failure(end.message)
      json?.ended({ _tag: "Finished", turn: end.result })
      if (human) err(`\n${human.closing(end.result)}\n`)
      // a turn the loop ended on purpose (a doom loop the policy stopped) is a failed run
      if (end.result.assistant.error) return yield* failure(end.result.assistant.error.message)
    }).pipe(Effect.scoped)

    yield* program.pipe(
      Effect.onInterrupt(() =>
        Effect.gen(function* () {
          process.exitCode = 130
          // Ctrl+C stops the turn on the server too (its commands killed, its parts marked interrupted)
          if (running && current !== undefined) {
            yield* request(r, "POST", `/session/${encodeURIComponent(current)}/abort`).pipe(
              Effect.timeout("3 seconds"),
              Effect.catch(() => Effect.sync(() => err(`reins: could not ask ${r.base} to abort the turn: it may still be running in session ${current}\n`)))
            )
          }
          if (human) {
            human.finish()
            err(`\n${human.interrupted(undefined)}\n`)
          }
          if (current !== undefined) err(`Continue with: reins run --attach ${r.base} --session ${current} "…"\n`)
        })
      ),
      Effect.ensuring(Effect.sync(() => printer.finish())),
      // json: one last line saying how the run ended, also when it failed or was stopped
      reportTurnResult(json)
    )
  })
