// What the interactive session does to the session (send, queue, interrupt, resume, compact, export),
// as plain calls for the UI: each runs an Effect in the runtime's services.
import * as fs from "node:fs/promises"
import { Cause, Context, Effect, Exit, Fiber, Stream } from "effect"
import { Bus, type MessageWithParts, type ModelRef, type Session, type SessionEvent } from "@reins/domain"
import type { SessionService, Sessions } from "@reins/session"
import type { SessionStore } from "@reins/storage"
import type { JobView } from "@reins/tool"
import { exportTarget, toJson, toMarkdown } from "./Export.ts"
import { ownEvents } from "../OwnEvents.ts"

/** The session and storage modules, loaded on first use (the runtime is built behind the first frame anyway). */
const lib = Effect.promise(() => import("./SessionLib.ts"))

/** What the controller runs its effects with: the runtime's services. */
export type Services = Sessions | SessionService | SessionStore | Bus

/** What the UI hears from the controller. */
export interface ControllerEvents {
  /** Events of the session shown (a turn's, a compaction's), in order, in batches. */
  readonly events: (events: ReadonlyArray<SessionEvent>) => void
  /** A turn started (true) or ended (false). */
  readonly running: (running: boolean) => void
  /** A line to show under the transcript: what a command did, or why it failed. */
  readonly notice: (text: string, kind: "info" | "error") => void
}

/** A failure as one line for the screen. */
export const failureText = (cause: Cause.Cause<unknown>): string => {
  const error = Cause.squash(cause)
  const message = typeof error === "object" && error !== null && "message" in error ? String(error.message) : String(error)
  return message.split("\n")[0] ?? "failed"
}

/**
 * The controller of one interactive session. `services` may still be coming (the runtime is built
 * behind the first frame): whatever runs before waits for them.
 */
export const makeController = (
  services: Promise<Context.Context<Services>>,
  options: { readonly cwd: string; readonly model: ModelRef; readonly sessionID: string | undefined }
) => {
  const withServices = <A, E>(effect: Effect.Effect<A, E, Services>) =>
    Effect.flatMap(
      Effect.promise(() => services),
      (context) => Effect.provideContext(effect, context)
    )
  // each run has its own scope: whatever it opens is closed when it ends
  const fork = <A, E>(effect: Effect.Effect<A, E, Services>) => Effect.runFork(Effect.scoped(withServices(effect)))
  const promise = <A, E>(effect: Effect.Effect<A, E, Services>) => Effect.runPromiseExit(Effect.scoped(withServices(effect)))
  let sessionID = options.sessionID
  let model = options.model
  let turn: Fiber.Fiber<void, unknown> | undefined
  // settles once the running turn holds its session (made with its first message) or has ended
  let turnSession: Promise<void> = Promise.resolve()
  // the UI puts its handlers here once it is mounted
  const on: { -readonly [K in keyof ControllerEvents]: ControllerEvents[K] } = { events: () => {}, running: () => {}, notice: () => {} }

  const sessionFor = Effect.gen(function* () {
    if (sessionID !== undefined) return sessionID
    const { SessionService } = yield* lib
    const created = yield* (yield* SessionService).create({ directory: options.cwd })
    sessionID = created.id
    return created.id
  })

  /** A message's `@path` mentions of project files, read to attach; one outside the project is left to the read tool, which asks. */
  const attach = (text: string) =>
    Effect.gen(function* () {
      const { collectAttachments } = yield* lib
      const { attachments, skipped } = yield* collectAttachments({ cwd: options.cwd, text, insideOnly: true })
      for (const target of skipped)
        on.notice(`@${target.given} is outside the project and was not attached: the agent can read it (it will ask first).`, "info")
      return attachments.length > 0 ? { files: attachments } : {}
    })

  /** Runs a turn on `text`, its events to the UI as they come. */
  const startTurn = (text: string) => {
    on.running(true)
    // a failure the session announced (session.error) is on screen already
    let announced = false
    let sessionKnown = () => {}
    turnSession = new Promise<void>((resolve) => (sessionKnown = resolve))
    const program = Effect.gen(function* () {
      const { Sessions } = yield* lib
      const files = yield* attach(text)
      const id = yield* sessionFor
      const own = ownEvents(id)
      // a new turn, or (T5: another process runs this session) the message queued into that turn, as reins run does
      yield* (yield* Sessions).follow({ sessionID: id, text, model, ...files }).pipe(
        Stream.runForEachArray((batch) =>
          Effect.sync(() => {
            // the turn's first events come once it holds its session: a message sent now is queued into it
            sessionKnown()
            for (const event of batch)
              if (event.type === "message.queued" && event.where === "elsewhere")
                on.notice(
                  `This session is running in another reins process (pid ${event.run.pid}): your message was queued, and that turn reads it at its next step.`,
                  "info"
                )
            // the session's own events: a sub-agent's progress is its task line (T19)
            const shown = batch.filter((event): event is SessionEvent => event.type !== "message.queued" && own(event))
            announced ||= shown.some((event) => event.type === "session.error")
            if (shown.length > 0) on.events(shown)
          })
        )
      )
    })
    const fiber = fork(program)
    turn = fiber
    fiber.addObserver((exit) => {
      sessionKnown()
      if (turn === fiber) turn = undefined
      on.running(false)
      if (Exit.isFailure(exit) && !Cause.hasInterruptsOnly(exit.cause) && !announced) on.notice(failureText(exit.cause), "error")
    })
  }

  return {
    on,
    get sessionID() {
      return sessionID
    },
    get model() {
      return model
    },
    get running() {
      return turn !== undefined
    },
    /**
     * Sends a message: a new turn, or, while a turn runs, queued into it (T5: the model reads it
     * at the turn's next step; its events come through the running turn's stream).
     */
    send: async (text: string) => {
      // a turn still starting (the runtime loading, its session not made or not yet held) gets the message queued too
      if (turn !== undefined) await turnSession
      if (turn === undefined || sessionID === undefined) return startTurn(text)
      const id = sessionID
      const queued = await promise(
        Effect.gen(function* () {
          const { SessionService } = yield* lib
          // its @path files are attached as they would be to a new turn
          return yield* (yield* SessionService).queue({ sessionID: id, text, ...(yield* attach(text)) })
        })
      )
      if (Exit.isFailure(queued)) return on.notice(failureText(queued.cause), "error")
      // the turn ended in between: the message starts the next one
      if (queued.value === undefined) {
        if (turn !== undefined) await promise(Fiber.await(turn))
        startTurn(text)
      }
    },
    /**
     * Interrupts the running turn and waits until it has stopped (its commands killed, its parts
     * closed). The stream stops with its consumer, so what the turn's cleanup publishes (the parts
     * marked interrupted, the message's error, the idle status) is heard on the bus meanwhile.
     */
    interrupt: async () => {
      const running = turn
      const id = sessionID
      if (running === undefined) return
      // a turn still starting has no session events to hear yet: stop it, at once — not once the runtime it may still
      // be waiting for has been built (interrupting a fiber needs none of its services)
      if (id === undefined) return void (await Effect.runPromise(Fiber.interrupt(running)))
      await promise(
        Effect.scoped(
          Effect.gen(function* () {
            const mine = (yield* lib).ofSession(id, new Set())
            yield* (yield* Bus).listen((event) => (event.type !== "part.delta" && mine(event) ? Effect.sync(() => on.events([event])) : Effect.void))
            yield* Fiber.interrupt(running)
          })
        )
      )
    },
    /** A new session, created with its first message. */
    newSession: () => {
      sessionID = undefined
    },
    setModel: (next: ModelRef) => {
      model = next
    },
    /** The project's sessions, newest first. */
    sessions: async (): Promise<ReadonlyArray<Session>> => {
      const exit = await promise(
        Effect.gen(function* () {
          const { SessionStore } = yield* lib
          return yield* (yield* SessionStore).listSessions({ directory: options.cwd, limit: 50 })
        })
      )
      return Exit.isSuccess(exit) ? exit.value : []
    },
    /** Switches to a stored session: its messages, for the transcript. */
    resume: async (id: string): Promise<ReadonlyArray<MessageWithParts> | undefined> => {
      const exit = await promise(
        Effect.gen(function* () {
          const { SessionStore } = yield* lib
          return yield* (yield* SessionStore).messages(id)
        })
      )
      if (Exit.isFailure(exit)) {
        on.notice(failureText(exit.cause), "error")
        return undefined
      }
      sessionID = id
      return exit.value
    },
    /** Compacts the idle session now; its compaction events go to the transcript. */
    compact: async () => {
      if (sessionID === undefined) return on.notice("Nothing to compact yet: this session has no messages.", "info")
      const id = sessionID
      const program = Effect.scoped(
        Effect.gen(function* () {
          const { Sessions } = yield* lib
          const bus = yield* Bus
          yield* bus.listen((event) =>
            (event.type === "compaction.started" || event.type === "compaction.completed" || event.type === "session.error") && event.sessionID === id
              ? Effect.sync(() => on.events([event]))
              : Effect.void
          )
          return yield* (yield* Sessions).compact({ sessionID: id, model })
        })
      )
      on.running(true)
      const exit = await promise(program)
      on.running(false)
      if (Exit.isFailure(exit)) on.notice(`Compaction failed: ${failureText(exit.cause)}`, "error")
    },
    /**
     * `/undo` (or `/redo`) of the idle session: the files and the conversation; says why not (a file changed since:
     * named, `--force` to overwrite). The session's messages after it, for the transcript, and what was done.
     */
    undo: async (
      direction: "undo" | "redo",
      force: boolean,
      to?: string
    ): Promise<{ readonly messages: ReadonlyArray<MessageWithParts>; readonly said: string } | undefined> => {
      if (sessionID === undefined) return void on.notice(`Nothing to ${direction} yet: this session has no messages.`, "info")
      const id = sessionID
      const exit = await promise(
        Effect.gen(function* () {
          const { Sessions, SessionStore } = yield* lib
          const sessions = yield* Sessions
          const done =
            direction === "undo"
              ? yield* sessions.undo({ sessionID: id, to, files: true, conversation: true, force })
              : yield* sessions.redo({ sessionID: id, force })
          return { done, messages: yield* (yield* SessionStore).messages(id) }
        })
      )
      if (Exit.isFailure(exit)) return void on.notice(failureText(exit.cause), "error")
      const { done, messages } = exit.value
      const files =
        done.files.length === 0
          ? "no files"
          : `${done.files.length} file${done.files.length === 1 ? "" : "s"} (${done.files.slice(0, 5).join(", ")}${done.files.length > 5 ? ", …" : ""})`
      const skipped = done.skipped.map((s) => `\n  not restored: ${s.path} (${s.reason})`).join("")
      const verb = direction === "undo" ? "Undid" : "Redid"
      return { messages, said: `${verb} ${done.messages.length} message${done.messages.length === 1 ? "" : "s"} and ${files}.${skipped}` }
    },
    /** The messages you sent that the rewind picker offers (an undo back to before one), newest first, with their text. */
    rewindPoints: async (): Promise<ReadonlyArray<{ readonly id: string; readonly text: string; readonly time: number }> | undefined> => {
      if (sessionID === undefined) return []
      const id = sessionID
      const exit = await promise(
        Effect.gen(function* () {
          const { SessionStore, undoTargets } = yield* lib
          const store = yield* SessionStore
          const session = yield* store.getSession(id)
          // a files-only undo (an in-place fork's) stands: a rewind (files and conversation) would be refused
          if (session.revert !== undefined && session.revert.conversation === false) return undefined
          return undoTargets(session, yield* store.messages(id))
        })
      )
      if (Exit.isFailure(exit)) {
        on.notice(failureText(exit.cause), "error")
        return undefined
      }
      if (exit.value === undefined) {
        on.notice("This session's files have an undo of their own (a fork brought them back): /redo it first, then rewind.", "error")
        return undefined
      }
      return exit.value
        .map((m) => ({
          id: m.info.id,
          text: m.parts.flatMap((p) => (p.type === "text" && p.synthetic !== true ? [p.text] : [])).join("\n"),
          time: m.info.time.created
        }))
        .reverse()
    },
    /** Writes the session to a file (`/export [md|json] [file]`); says where. */
    exportSession: async (args: ReadonlyArray<string>) => {
      if (sessionID === undefined) return on.notice("Nothing to export yet: this session has no messages.", "info")
      const target = exportTarget(args, options.cwd, sessionID)
      const id = sessionID
      const exit = await promise(
        Effect.gen(function* () {
          const store = yield* (yield* lib).SessionStore
          const session = yield* store.getSession(id)
          const messages = yield* store.messages(id)
          const text = target.format === "json" ? toJson(session, messages) : toMarkdown(session, messages)
          yield* Effect.tryPromise({ try: () => fs.writeFile(target.file, text), catch: (e) => new Error(`cannot write ${target.file}: ${String(e)}`) })
        })
      )
      if (Exit.isFailure(exit)) on.notice(`Export failed: ${failureText(exit.cause)}`, "error")
      else on.notice(`Exported the session as ${target.format === "json" ? "JSON" : "Markdown"} to ${target.file}`, "info")
    },
    /** Calls `listener` with the background jobs (once the runtime is up), then whenever one starts or ends; returns the unwatch. */
    watchJobs: (listener: (jobs: ReadonlyArray<JobView>) => void): (() => void) => {
      let unwatch: (() => void) | undefined
      let stopped = false
      Promise.all([services, Effect.runPromise(lib)])
        .then(([context, { Jobs }]) => {
          if (!stopped) unwatch = Context.get(context, Jobs).watch(listener)
        })
        .catch((error: unknown) => on.notice(`Background jobs are not shown: ${error instanceof Error ? error.message : String(error)}`, "error"))
      return () => {
        stopped = true
        unwatch?.()
      }
    },
    /** `/jobs`: the background jobs of this session and its sub-agents' sessions, as they are now (output so far included). */
    listJobs: async (): Promise<ReadonlyArray<JobView>> => {
      if (sessionID === undefined) return []
      const session = sessionID
      const exit = await promise(
        Effect.gen(function* () {
          const { Jobs, SessionStore } = yield* lib
          const jobs = yield* Jobs
          const tree = yield* (yield* SessionStore).sessionTree(session).pipe(Effect.orElseSucceed(() => [session]))
          return tree.flatMap((id) => jobs.list(id))
        })
      )
      if (Exit.isFailure(exit)) {
        on.notice(failureText(exit.cause), "error")
        return []
      }
      return exit.value
    },
    /** `/jobs kill ID`: stops a background job of this session (its whole process group); says how it ended. */
    killJob: async (id: string) => {
      if (sessionID === undefined) return on.notice(`No background job ${id}: this session has not started one.`, "error")
      const session = sessionID
      const exit = await promise(
        Effect.gen(function* () {
          const jobs = yield* (yield* lib).Jobs
          return yield* jobs.kill(session, id)
        })
      )
      if (Exit.isFailure(exit)) return on.notice(failureText(exit.cause), "error")
      on.notice(`${id} stopped: ${exit.value.status.state === "killed" ? `killed by ${exit.value.status.signal}` : exit.value.status.state}.`, "info")
    },
    /** Stops whatever runs (before exit): the turn's cleanup is awaited. */
    shutdown: async () => {
      const running = turn
      if (running) await promise(Fiber.interrupt(running))
    }
  }
}

export type Controller = ReturnType<typeof makeController>
