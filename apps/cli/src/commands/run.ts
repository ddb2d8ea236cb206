import { Effect, Option, Stream } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { maxCostFlag, withMaxCost } from "../BudgetFlag.ts"
import { sandboxFlag, sandboxOption } from "../SandboxFlag.ts"
import { defaultDataDir, RUN_SPAN } from "@reins/domain"
import * as os from "node:os"
import type { Prompter } from "@reins/permission"
import { makeRuntime } from "@reins/runtime"
import { Agents, SessionService, Sessions, agentModel } from "@reins/session"
import { SessionStore } from "@reins/storage"
import { discoverCommands, expandCommand } from "@reins/tool"
import { admitAttachments, attachFiles } from "../Attach.ts"
import { failure, fromRuntimeError, usage } from "../CliError.ts"
import { ownEvents } from "../OwnEvents.ts"
import { liveEnabled, styleFor } from "../present/Style.ts"
import { loadSetup, resolveModel, runtimeProject, type Setup } from "../Setup.ts"
import { tokenFor } from "../ServerToken.ts"
import { textPrinter } from "../TextPrinter.ts"
import { jsonRun, reportTurnResult } from "../TurnResultLine.ts"
import { ttyPrompter } from "../TtyPrompter.ts"
import { withVariant } from "../Variant.ts"
import { VERSION } from "../version.ts"

const readStdin = Effect.promise(async () => (process.stdin.isTTY ? "" : (await Bun.stdin.text()).trim()))

/** The flags of `reins run` (`reins init` takes some of them). */
export const runFlags = {
  message: Argument.String("message").pipe(Argument.withDescription("What to ask the agent (or pipe it on stdin)"), Argument.variadic()),
  format: Flag.Literals("format", ["text", "json"]).pipe(
    Flag.withDescription("text: stream the answer; json: one event object per line"),
    Flag.withDefault("text" as const)
  ),
  model: Flag.String("model").pipe(Flag.withAlias("m"), Flag.withDescription("Model as <provider>/<model>"), Flag.optional),
  variant: Flag.String("variant").pipe(
    Flag.withDescription("A named variant of the model's options: low, medium, high, … (reasoning effort, thinking budget) or one from reins.json"),
    Flag.optional
  ),
  continue: Flag.Boolean("continue").pipe(Flag.withAlias("c"), Flag.withDescription("Continue the latest session in this directory"), Flag.withDefault(false)),
  session: Flag.String("session").pipe(Flag.withAlias("s"), Flag.withDescription("Continue the session with this id"), Flag.optional),
  permission: Flag.Literals("permission", ["allow", "deny"]).pipe(
    Flag.withDescription('What a permission "ask" becomes without a terminal (default deny)'),
    Flag.optional
  ),
  agent: Flag.String("agent").pipe(
    Flag.withDescription("The agent to run: build (default), plan (read-only), or one from reins.json or .reins/agents (see reins debug config)"),
    Flag.optional
  ),
  yolo: Flag.Boolean("yolo").pipe(Flag.withDescription("Allow every tool call without asking"), Flag.withDefault(false)),
  sandbox: sandboxFlag,
  maxCost: maxCostFlag,
  trust: Flag.Boolean("trust").pipe(
    Flag.withDescription("Trust this directory for this run: its hooks, MCP servers, plugins, tools and agents run (reins trust keeps it)"),
    Flag.withDefault(false)
  ),
  attach: Flag.String("attach").pipe(
    Flag.withDescription("Run the turn on a running `reins serve` at this URL (e.g. http://127.0.0.1:4096) instead of in this process"),
    Flag.optional
  ),
  token: Flag.String("token").pipe(
    Flag.withDescription("With --attach: the server's token (default $REINS_SERVER_TOKEN, else the one a reins serve of yours left for that port)"),
    Flag.optional
  ),
  command: Flag.String("command").pipe(
    Flag.withDescription(
      "Run a command: the prompt of .reins/commands/NAME.md (a trusted project's) or ~/.config/reins/commands/NAME.md, the message words as its $ARGUMENTS"
    ),
    Flag.optional
  ),
  file: Flag.String("file").pipe(
    Flag.withAlias("f"),
    Flag.withDescription(
      "Attach a file (repeatable; @path in the message does the same): an image (png, jpeg, gif, webp) for models that take images, or a text file, inlined with its path"
    ),
    Flag.atLeast(0)
  )
}

/** `--attach URL`: the turn runs on that server (loaded only then: a local run does not pay for the HTTP client). */
const onServer = (input: RunFlags, url: string) =>
  Effect.gen(function* () {
    const text = input.message.join(" ").trim() || (yield* readStdin)
    if (!text) return yield* usage('Give a message: reins run --attach URL "fix the failing test" (or pipe it on stdin)')
    if (input.file.length > 0) return yield* usage("--file cannot go with --attach: the server's prompt route takes text only")
    const policy = [input.yolo && "--yolo", Option.isSome(input.permission) && "--permission"].filter((f) => f !== false)
    if (policy.length > 0)
      return yield* usage(`${policy.join(" and ")} cannot go with --attach: the server decides permissions (start it with reins serve --yolo or --permission)`)
    const { runAttach } = yield* Effect.promise(() => import("../RemoteRun.ts"))
    yield* runAttach({
      url,
      // --token, REINS_SERVER_TOKEN, or the token a server of this user left on the data dir for its port
      token: Option.getOrElse(input.token, () => process.env.REINS_SERVER_TOKEN || tokenFor(defaultDataDir(process.env, os.homedir()), url)),
      text,
      format: input.format,
      model: Option.getOrUndefined(input.model),
      variant: Option.getOrUndefined(input.variant),
      agent: Option.getOrUndefined(input.agent),
      session: Option.getOrUndefined(input.session),
      continue: input.continue,
      env: process.env
    })
  })

/** The command `name` of the project (once trusted) or the user; a usage error listing those there are, else. */
const findCommand = (setup: Setup, name: string) =>
  Effect.gen(function* () {
    const found = yield* discoverCommands({ cwd: setup.cwd, home: os.homedir(), trusted: setup.project.trusted })
    const command = found.commands.find((c) => c.name === name)
    if (command !== undefined) return command
    const why = found.skipped.map((s) => `${s.path}: ${s.error}`).join("; ")
    const names = found.commands.map((c) => c.name).join(", ")
    return yield* usage(
      `No command "${name}"${names ? ` (commands: ${names})` : ""}: put its prompt in .reins/commands/${name}.md or ~/.config/reins/commands/${name}.md.${why ? ` Skipped: ${why}` : ""}`
    )
  })

/** What `reins run` is given, parsed. */
export type RunFlags = Command.Command.Config.Infer<typeof runFlags>

/** One turn of the agent on a new or continued session, as `reins run` runs it (`reins init` runs one with its own prompt). */
export const runMessage = (flags: RunFlags) =>
  Effect.gen(function* () {
    let input = flags
    if (Option.isSome(input.attach)) {
      if (Option.isSome(input.maxCost))
        return yield* usage("--max-cost applies to a run in this process: set budget.session in the server's reins.json for --attach")
      return yield* onServer(input, input.attach.value)
    }
    const setup = yield* loadSetup({ trust: input.trust ? "flag" : "ask" })
    const config = yield* withMaxCost(setup.config, input.maxCost)
    // `--command NAME`: the command's prompt with the message as its arguments; its agent and model unless given
    const command = Option.isSome(input.command) ? yield* findCommand(setup, input.command.value) : undefined
    const model = yield* withVariant(
      setup,
      yield* resolveModel(setup, Option.getOrUndefined(input.model) ?? command?.model),
      Option.getOrUndefined(input.variant)
    )
    const words = input.message.join(" ").trim()
    const text = command !== undefined ? expandCommand(command, words) : words || (yield* readStdin)
    if (!text) return yield* usage('Give a message: reins run "fix the failing test" (or pipe it on stdin)')
    if (command?.agent !== undefined && Option.isNone(input.agent)) input = { ...input, agent: Option.some(command.agent) }
    const attached = yield* attachFiles({ cwd: setup.cwd, text, files: input.file })
    const interactive = Boolean(process.stdin.isTTY && process.stderr.isTTY) && Option.isNone(input.permission)
    const out = (s: string) => void process.stdout.write(s)
    const err = (s: string) => void process.stderr.write(s)
    // text: colour and a spinner on stderr when it is a terminal (NO_COLOR, FORCE_COLOR and TERM=dumb honoured)
    const human =
      input.format === "text"
        ? textPrinter(out, err, {
            style: styleFor(process.stderr, setup.env),
            live: liveEnabled(process.stderr.isTTY === true, setup.env),
            outIsTTY: process.stdout.isTTY === true,
            cwd: setup.cwd,
            columns: () => process.stderr.columns ?? 80
          })
        : undefined
    // json: every event printed is watched for the closing `turn.result` line
    const json = human ? undefined : jsonRun(out)
    const printer = human ?? json!.printer
    // the spinner stops while a permission question owns the terminal
    const prompter: Prompter = {
      ask: (request) =>
        Effect.acquireUseRelease(
          Effect.sync(() => human?.hold()),
          () => ttyPrompter.ask(request),
          () => Effect.sync(() => human?.release())
        )
    }
    let current: string | undefined
    const layer = makeRuntime({
      cwd: setup.cwd,
      dataDir: setup.dataDir,
      config,
      env: setup.env,
      storedKeys: setup.storedKeys,
      version: VERSION,
      ...sandboxOption(input.sandbox),
      project: runtimeProject(setup),
      permission: {
        yolo: input.yolo,
        nonInteractive: Option.getOrElse(input.permission, () => "deny" as const),
        ...(interactive ? { prompter } : {})
      }
    })

    const program = Effect.gen(function* () {
      const store = yield* SessionStore
      const sessions = yield* Sessions
      // `--agent`: a known agent that may run as the session's own, else exit 2 naming them
      const agents = yield* Agents
      const agentName = Option.getOrUndefined(input.agent)
      const agent = agentName === undefined ? undefined : agents.get(agentName)
      if (agentName !== undefined && (agent === undefined || agent.mode === "subagent")) {
        const primaries = agents.catalog.agents.filter((a) => a.mode !== "subagent").map((a) => a.name)
        return yield* usage(
          `${agent === undefined ? `No agent named "${agentName}"` : `"${agentName}" is a sub-agent (the task tool runs it)`}. Agents: ${primaries.join(", ")}. Define one under "agent" in reins.json or in .reins/agents/<name>.md.`
        )
      }
      // a new session is announced by its own event, as the bus has it; the turn's events come from its stream
      const create = Effect.tap((yield* SessionService).create({ directory: setup.cwd }), (session) => printer.handler({ type: "session.created", session }))
      // before any session is made: an image the model cannot take, a file outside the project not allowed
      yield* admitAttachments(
        model,
        Option.getOrElse(input.session, () => ""),
        setup.cwd,
        attached
      )
      const sessionID = Option.isSome(input.session)
        ? (yield* store
            .getSession(input.session.value)
            .pipe(
              Effect.mapError((e) =>
                e.reason === "not-found" ? usage(`No session ${input.session.pipe(Option.getOrElse(() => ""))}: see reins sessions list`) : failure(e.message)
              )
            )).id
        : input.continue
          ? ((yield* store.latestSession(setup.cwd)) ?? (yield* create)).id
          : (yield* create).id
      current = sessionID
      json?.session(sessionID)
      // the agent's own model when --model was not given: the agent chosen, else the one the session ran last
      const remembered =
        agent ??
        (yield* store.getSession(sessionID).pipe(
          Effect.map((s) => (s.agent === undefined ? undefined : agents.get(s.agent))),
          Effect.orElseSucceed(() => undefined)
        ))
      const turnModel = remembered !== undefined && Option.isNone(input.model) ? agentModel(remembered, model) : model
      human?.begin()
      // The turn as a stream: its events rendered as they come (text or json lines), its result last.
      // the text view shows the session's own events (a sub-agent's progress is its task line; its tokens
      // and cost count in the closing line); json shows all
      const own = human ? ownEvents(sessionID, { usage: true }) : () => true
      // the turn as a stream: its events rendered as they come, its result last; T5: a session another
      // process is running gets the message queued into that turn instead (`message.queued`)
      const sent = yield* sessions
        .follow({
          sessionID,
          text,
          model: turnModel,
          ...(agent !== undefined ? { agent: agent.name } : {}),
          ...(attached.attachments.length > 0 ? { files: attached.attachments } : {})
        })
        .pipe(
          Stream.tap((event) => (event.type === "turn.finished" || event.type === "message.queued" || !own(event) ? Effect.void : printer.handler(event))),
          Stream.filter((event) => event.type === "turn.finished" || event.type === "message.queued"),
          Stream.runLast,
          Effect.flatMap((last) =>
            Option.isNone(last)
              ? Effect.die("The turn's stream ended without its result")
              : Effect.succeed(last.value.type === "message.queued" ? { queued: last.value } : { queued: undefined, turn: last.value.result })
          )
        )
      printer.finish()
      if (sent.queued !== undefined) {
        const { run, messageID } = sent.queued
        json?.ended({ _tag: "Queued" })
        if (input.format === "json") out(`${JSON.stringify({ type: "message.queued", sessionID, messageID, pid: run.pid, host: run.host })}\n`)
        else
          err(
            `Session ${sessionID} is running in another reins process (pid ${run.pid}): your message was queued, and that turn reads it at its next step. Follow it with: reins sessions show ${sessionID}\n`
          )
        return
      }
      const turn = sent.turn
      json?.ended({ _tag: "Finished", turn })
      if (human) err(`\n${human.closing(turn)}\n`)
      // a turn the loop ended on purpose (a doom loop the policy stopped) is a failed run
      if (turn.assistant.error) return yield* failure(turn.assistant.error.message)
    }).pipe(
      Effect.onInterrupt(() =>
        Effect.sync(() => {
          process.exitCode = 130
          // what the turn cost so far, and how to pick it up again
          if (human) {
            human.finish()
            err(`\n${human.interrupted(current)}\n`)
          }
        })
      ),
      // whatever ends the turn (an error, a takeover, Ctrl+C), the deltas held back are printed
      Effect.ensuring(Effect.sync(() => printer.finish()))
    )
    yield* program.pipe(
      // one trace per run: the session's creation and its turn under one root
      Effect.withSpan(RUN_SPAN, { attributes: { "reins.model": `${model.providerID}/${model.modelID}` } }),
      Effect.provide(layer),
      Effect.mapError(fromRuntimeError),
      // json: one last line saying how the run ended, also when it failed or was stopped
      reportTurnResult(json)
    )
  })

/** `reins run [message..]`: one turn of the agent on a new or continued session. */
export const run = Command.make("run", runFlags, runMessage).pipe(Command.withDescription("Run the agent on a message, streaming its answer"))
