import {
  PROTOCOL_VERSION,
  RequestError,
  agent,
  ndJsonStream,
  type AgentContext,
  type ClientCapabilities,
  type SessionModeState,
  type SessionUpdate,
  type StopReason
} from "@agentclientprotocol/sdk"
import { Cause, type Context, Effect, Exit, Fiber, FiberSet, Scope, Stream } from "effect"
import type { ModelRef, TurnResult } from "@reins/domain"
import { Agents, SessionService, Sessions, type MessageQueued } from "@reins/session"
import { SessionStore } from "@reins/storage"
import { expandCommand, FileAccess, type PromptCommand } from "@reins/tool"
import * as fs from "node:fs"
import * as path from "node:path"
import type { ClientRef } from "./AcpPrompter.ts"
import { clientFiles } from "./ClientFiles.ts"
import { AVAILABLE_COMMANDS, parseCommand, runCommand } from "./Commands.ts"
import { guardStreams, MAX_MESSAGE_BYTES } from "./Framing.ts"
import { promptInput } from "./PromptContent.ts"
import { historyUpdates, stopReason, turnUpdates } from "./Updates.ts"

/** What the agent needs of a project directory's runtime: its services and the model it runs. */
export interface AcpRuntime {
  readonly context: Context.Context<Sessions | SessionService | SessionStore>
  readonly model: ModelRef
  /** The project's (once trusted) and the user's commands, offered as `/name` beside undo and redo. */
  readonly commands?: ReadonlyArray<PromptCommand>
}

export interface AcpAgentOptions {
  /** The client's messages (stdin) and where the agent's go (stdout: nothing else may be written there). */
  readonly input: ReadableStream<Uint8Array>
  readonly output: WritableStream<Uint8Array>
  /** Set to the connected client, for the runtime's permission prompter; its `route` is set here. */
  readonly client: ClientRef
  readonly version: string
  /** The runtime of a project directory (config, model, tools, permissions), made once per directory for the connection. */
  readonly runtime: (cwd: string) => Effect.Effect<AcpRuntime, { readonly message: string }, Scope.Scope>
}

interface Entry {
  readonly cwd: string
  readonly runtime: AcpRuntime
  /** Whether a reins session is this one or one of its sub-agents'. */
  readonly within: (sessionID: string) => boolean
  /** The primary agents (`build`, `plan`, the project's own) offered as the session's modes. */
  readonly modes: SessionModeState["availableModes"]
  /** The agent the next prompt runs. */
  mode: string
  running?: Fiber.Fiber<StopReason, unknown>
}

const modeState = (entry: Entry): SessionModeState => ({ currentModeId: entry.mode, availableModes: [...entry.modes] })

const exitOf = <A, E>(fiber: Fiber.Fiber<A, E>) => new Promise<Exit.Exit<A, E>>((resolve) => fiber.addObserver(resolve))

/** A failed effect as the JSON-RPC error the client sees: its message. */
const rpcError = (cause: Cause.Cause<unknown>) => {
  const error = Cause.squash(cause)
  const message = typeof error === "object" && error !== null && "message" in error && typeof error.message === "string" ? error.message : String(error)
  return RequestError.internalError(undefined, message)
}

/** Why `cwd` cannot be a session's directory, if so: it does not exist, or is not a directory. */
const directoryProblem = (cwd: string): string | undefined => {
  try {
    return fs.statSync(cwd).isDirectory() ? undefined : `cwd ${cwd} is not a directory: open a project folder.`
  } catch {
    return `cwd ${cwd} does not exist: open a project folder that exists.`
  }
}

/**
 * Serves the Agent Client Protocol on a pair of streams until the client closes them: sessions
 * created and loaded (history replayed as updates), prompts run as turns whose events stream as
 * `session/update`s, cancelled by `session/cancel`. Running turns are interrupted when the
 * connection closes or the effect is interrupted (their commands stopped, their parts marked).
 */
export const serveAcp = (options: AcpAgentOptions): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function* () {
    // The runtimes live in a scope made before the turns' fiber set, so that when the connection
    // ends the turns are interrupted (their commands stopped, their parts marked) while the
    // runtimes (the store) are still open, and closed after.
    const runtimeScope = yield* Scope.fork(yield* Effect.scope)
    const run = yield* FiberSet.makeRuntime<never>()
    const runPromise = async <A, E>(effect: Effect.Effect<A, E>): Promise<A> => {
      const exit = await exitOf(run(effect))
      if (Exit.isSuccess(exit)) return exit.value
      throw rpcError(exit.cause)
    }
    const runtimes = new Map<string, Promise<AcpRuntime>>()
    const sessions = new Map<string, Entry>()
    let capabilities: ClientCapabilities = {}

    // a project directory's runtime, made once; a failure is told to the client and tried again next time
    const runtimeFor = (cwd: string) => {
      if (!path.isAbsolute(cwd)) return Promise.reject(RequestError.invalidParams(undefined, `cwd must be an absolute path, got "${cwd}"`))
      // a project directory that is not there is said as such, not as the config or model it has none of
      const missing = directoryProblem(cwd)
      if (missing !== undefined) return Promise.reject(RequestError.invalidParams(undefined, missing))
      const known = runtimes.get(cwd)
      if (known) return known
      const made = runPromise(Scope.provide(options.runtime(cwd), runtimeScope))
      runtimes.set(cwd, made)
      made.catch(() => runtimes.delete(cwd))
      return made
    }

    // the editor's own MCP servers are not started: reins runs those of the project's reins.json
    const ignoredMcp = (servers: ReadonlyArray<{ readonly name: string }>) =>
      servers.length === 0
        ? Promise.resolve()
        : runPromise(
            Effect.logWarning(
              `reins acp does not start the editor's MCP servers (${servers.map((s) => s.name).join(", ")}); configure them under "mcp" in reins.json`
            )
          )

    const open = async (sessionId: string, cwd: string, runtime: AcpRuntime, agent?: string) => {
      const agents = await runPromise(Effect.provideContext(Effect.service(Agents), runtime.context))
      const primaries = agents.catalog.agents.filter((a) => a.mode !== "subagent")
      const modes = primaries.map((a) => ({ id: a.name, name: a.name, description: a.description }))
      // a loaded session goes on with the agent its last turn ran
      const mode = agent !== undefined && modes.some((m) => m.id === agent) ? agent : agents.primary.name
      // a prompt that started on it meanwhile keeps its entry (its `running` is what cancel and the next prompt look at)
      const known = sessions.get(sessionId)
      if (known?.running !== undefined) return known
      const entry: Entry = { cwd, runtime, within: agents.within(sessionId), modes, mode }
      sessions.set(sessionId, entry)
      return entry
    }

    // a question from a sub-agent's session goes to the ACP session whose turn started it
    options.client.route = (sessionID) => {
      if (sessions.has(sessionID)) return sessionID
      for (const [id, entry] of sessions) if (entry.running !== undefined && entry.within(sessionID)) return id
      return undefined
    }

    const send = (client: AgentContext, sessionId: string, updates: ReadonlyArray<SessionUpdate>) =>
      Effect.forEach(updates, (update) => Effect.promise(() => client.notify("session/update", { sessionId, update }).catch(() => undefined)), {
        discard: true
      })

    // the commands the editor offers in its prompt, told once the session is known to it (after the response)
    const offerCommands = (client: AgentContext, sessionId: string, runtime: AcpRuntime) => {
      const custom = (runtime.commands ?? [])
        .filter((c) => !AVAILABLE_COMMANDS.some((a) => a.name === c.name))
        .map((c) => ({ name: c.name, description: c.description ?? "a command of yours", input: { hint: "arguments" } }))
      const availableCommands = [...AVAILABLE_COMMANDS, ...custom]
      setTimeout(() => void run(send(client, sessionId, [{ sessionUpdate: "available_commands_update", availableCommands }])), 0)
    }

    const entryOf = (sessionId: string) => {
      const entry = sessions.get(sessionId)
      if (entry === undefined) throw RequestError.sessionNotFound(sessionId)
      return entry
    }

    const app = agent({ name: "reins" })
      .onRequest("initialize", ({ params }) => {
        capabilities = params.clientCapabilities ?? {}
        return {
          protocolVersion: PROTOCOL_VERSION,
          agentCapabilities: {
            loadSession: true,
            promptCapabilities: { image: true, audio: false, embeddedContext: true }
          },
          agentInfo: { name: "reins", title: "reins", version: options.version },
          authMethods: []
        }
      })
      .onRequest("session/new", async ({ params, client }) => {
        const runtime = await runtimeFor(params.cwd)
        await ignoredMcp(params.mcpServers)
        const session = await runPromise(
          Effect.provideContext(
            Effect.flatMap(Effect.service(SessionService), (s) => s.create({ directory: params.cwd })),
            runtime.context
          )
        )
        const entry = await open(session.id, params.cwd, runtime)
        offerCommands(client, session.id, runtime)
        return { sessionId: session.id, modes: modeState(entry) }
      })
      .onRequest("session/load", async ({ params, client }) => {
        // its running prompt's entry is kept: loaded again it would be forgotten, and a second prompt start beside it
        if (sessions.get(params.sessionId)?.running !== undefined) {
          throw RequestError.invalidRequest(
            undefined,
            `Session ${params.sessionId} is running a prompt in this connection: cancel it (session/cancel) or wait for it to end, then load it.`
          )
        }
        const runtime = await runtimeFor(params.cwd)
        await ignoredMcp(params.mcpServers)
        const history = await runPromise(
          Effect.gen(function* () {
            const store = yield* SessionStore
            const found = yield* Effect.result(store.getSession(params.sessionId))
            if (found._tag === "Failure") return found.failure.reason === "not-found" ? undefined : yield* found.failure
            // calls left open by a reins that died are closed first, as they are shown finished
            yield* (yield* SessionService).repair(params.sessionId)
            return { session: found.success, messages: yield* store.messages(params.sessionId) }
          }).pipe(Effect.provideContext(runtime.context))
        )
        if (history === undefined) throw RequestError.sessionNotFound(params.sessionId)
        const entry = await open(params.sessionId, params.cwd, runtime, history.session.agent)
        await runPromise(send(client, params.sessionId, historyUpdates(history.messages, entry.cwd)))
        offerCommands(client, params.sessionId, runtime)
        return { modes: modeState(entry) }
      })
      // a mode is one of reins's primary agents: the next prompt runs it (plan: read-only)
      .onRequest("session/set_mode", ({ params }) => {
        const entry = entryOf(params.sessionId)
        if (!entry.modes.some((m) => m.id === params.modeId)) {
          throw RequestError.invalidParams(undefined, `No mode "${params.modeId}": modes are ${entry.modes.map((m) => m.id).join(", ")}`)
        }
        entry.mode = params.modeId
        return {}
      })
      .onRequest("session/prompt", async ({ params, client, signal }) => {
        const entry = entryOf(params.sessionId)
        const given = promptInput(params.prompt)
        // `/name args` of a command of the project's or the user's: its prompt, the words after it its arguments
        const customCommand = /^\/(\S+)\s*([\s\S]*)$/.exec(given.text.trim())
        const custom =
          customCommand && !AVAILABLE_COMMANDS.some((a) => a.name === customCommand[1])
            ? entry.runtime.commands?.find((c) => c.name === customCommand[1])
            : undefined
        const input = custom !== undefined && customCommand ? { ...given, text: expandCommand(custom, customCommand[2] ?? "") } : given
        if (input.text === "" && input.files.length === 0) throw RequestError.invalidParams(undefined, "The prompt is empty: give some text.")
        const command = input.files.length === 0 ? parseCommand(input.text) : undefined
        if (command !== undefined) {
          const text = await runPromise(runCommand(params.sessionId, command).pipe(Effect.provideContext(entry.runtime.context)))
          await runPromise(send(client, params.sessionId, [{ sessionUpdate: "agent_message_chunk", content: { type: "text", text } }]))
          return { stopReason: "end_turn" as const }
        }
        const updates = turnUpdates(params.sessionId, entry.cwd)
        let result: TurnResult | undefined
        let queued: MessageQueued | undefined
        // a prompt queued into this connection's running one leaves that one the session's
        const mine = entry.running === undefined
        // a new turn, or the message queued into the one running (this connection's or another reins process's), as run and serve do
        const turn = Effect.gen(function* () {
          const sessions = yield* Sessions
          yield* sessions
            .follow({
              sessionID: params.sessionId,
              text: input.text,
              model: entry.runtime.model,
              agent: entry.mode,
              ...(input.files.length > 0 ? { files: input.files } : {})
            })
            .pipe(
              // the file tools read and write through the editor while this turn runs
              Stream.provideService(FileAccess, clientFiles(client, params.sessionId, capabilities.fs)),
              Stream.runForEach((event) =>
                event.type === "turn.finished"
                  ? Effect.sync(() => void (result = event.result))
                  : event.type === "message.queued"
                    ? Effect.sync(() => void (queued = event))
                    : // a message queued into this connection's running prompt shows there, once
                      mine
                      ? send(client, params.sessionId, updates.update(event))
                      : Effect.void
              )
            )
          if (queued !== undefined) {
            if (queued.where === "elsewhere")
              yield* send(client, params.sessionId, [
                {
                  sessionUpdate: "agent_message_chunk",
                  content: {
                    type: "text",
                    text: `Session ${params.sessionId} is running in another reins process (pid ${queued.run.pid}): your message was queued, and that turn reads it at its next step.`
                  }
                }
              ])
            return "end_turn" as const
          }
          if (result === undefined) return yield* Effect.die("The turn's stream ended without its result")
          // a turn the loop ended on purpose (a doom loop stopped) says why in the thread
          const error = result.assistant.error
          if (error !== undefined)
            yield* send(client, params.sessionId, [{ sessionUpdate: "agent_message_chunk", content: { type: "text", text: `\n\n${error.message}` } }])
          return stopReason(result)
        }).pipe(Effect.provideContext(entry.runtime.context))
        const fiber = run(turn)
        if (mine) entry.running = fiber
        const cancel = () => void run(Fiber.interrupt(fiber))
        signal.addEventListener("abort", cancel)
        const exit = await exitOf(fiber)
        signal.removeEventListener("abort", cancel)
        if (entry.running === fiber) entry.running = undefined
        if (Exit.isSuccess(exit)) return { stopReason: exit.value }
        if (Cause.hasInterruptsOnly(exit.cause)) {
          // the calls it left open end as failed in the thread, as their parts end interrupted in the session
          await runPromise(send(client, params.sessionId, updates.interrupted()))
          return { stopReason: "cancelled" as const }
        }
        throw rpcError(exit.cause)
      })
      // this connection's prompt stops its turn as it stops following it; a turn of another process is asked to stop
      .onNotification("session/cancel", ({ params }) => {
        const entry = sessions.get(params.sessionId)
        if (entry?.running !== undefined) run(Fiber.interrupt(entry.running))
        else if (entry !== undefined)
          run(
            Effect.ignore(
              Effect.provideContext(
                Effect.flatMap(Effect.service(Sessions), (s) => s.abort(params.sessionId)),
                entry.runtime.context
              )
            )
          )
      })

    // a message over the size limit is refused on its own, the connection kept (the SDK would end it)
    const streams = guardStreams(options.input, options.output, (bytes, method) =>
      run(
        Effect.logWarning(
          `Refused a ${(bytes / 1024 / 1024).toFixed(1)} MiB message${method ? ` (${method})` : ""} from the editor: over the ${MAX_MESSAGE_BYTES / 1024 / 1024} MiB limit`
        )
      )
    )
    const connection = app.connect(ndJsonStream(streams.output, streams.input))
    options.client.current = connection.client
    yield* Effect.promise(() => connection.closed).pipe(Effect.onInterrupt(() => Effect.sync(() => connection.close())))
  })
