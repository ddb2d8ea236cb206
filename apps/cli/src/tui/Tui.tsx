// Starts the interactive session: the runtime with a prompter that asks on screen, the stored
// session if one is resumed, and the Ink app until it exits.
import * as os from "node:os"
import { render } from "ink"
import type { ModelRef, Session } from "@reins/domain"
import { Context, Effect, Exit, Layer, Logger, Scope } from "effect"
import { failure, fromRuntimeError, usage, type CliError } from "../CliError.ts"
import { resolveModel, type Setup } from "../Setup.ts"
import { withVariant } from "../Variant.ts"
import { keyedProviders } from "../KeySources.ts"
import { VERSION } from "../version.ts"
import { App, type LoadedCommands } from "./App.tsx"
import { makePermissionBridge } from "./Bridge.ts"
import { failureText, makeController, type Services } from "./Controller.ts"
import { historyFile, loadHistory } from "./History.ts"
import { noticeLogger } from "./Notices.ts"
import { fromHistory, initialTranscript, themeFor } from "./view/index.ts"

export interface TuiOptions {
  readonly setup: Setup
  readonly model: ModelRef
  /** Resume the latest session of the directory. */
  readonly continue: boolean
  /** Resume this session. */
  readonly session: string | undefined
  readonly yolo: boolean
  /** `--sandbox MODE`: the OS sandbox for this run's commands (over `sandbox.mode`). */
  readonly sandbox?: "auto" | "required" | "off"
}

/** The project's (once trusted) and the user's commands, read after the first frame (the tool modules load then). */
const loadCommands = async (cwd: string, trusted: boolean): Promise<LoadedCommands> => {
  const { discoverCommands, expandCommand } = await import("@reins/tool")
  const found = await Effect.runPromise(discoverCommands({ cwd, home: os.homedir(), trusted }))
  return {
    commands: found.commands,
    skipped: found.skipped,
    prompt: (name, args) => {
      const command = found.commands.find((c) => c.name.toLowerCase() === name)
      return command === undefined ? undefined : expandCommand(command, args)
    }
  }
}

/** Clear the screen and the scrollback, cursor home: before the transcript is printed again. */
const CLEAR = "\x1b[2J\x1b[3J\x1b[H"

/**
 * The interactive session, until the user leaves it; the running turn is stopped (and waited for)
 * on the way out. A new session's prompt is drawn at once while the runtime is built behind it (a
 * message typed meanwhile waits for it); a resumed one is looked up first, so that an unknown id is
 * one line before any screen.
 */
export const runTui = (options: TuiOptions) =>
  Effect.scoped(
    Effect.gen(function* () {
      const { setup } = options
      const bridge = makePermissionBridge()
      // the runtime's modules (session, storage, tools, providers) are loaded only here: behind the first frame
      const layer = Layer.unwrap(
        Effect.promise(() => import("@reins/runtime")).pipe(
          Effect.map(({ makeRuntime }) =>
            makeRuntime({
              cwd: setup.cwd,
              dataDir: setup.dataDir,
              config: setup.config,
              env: setup.env,
              storedKeys: setup.storedKeys,
              version: VERSION,
              project: { trusted: setup.project.trusted, ...(setup.project.restrict !== undefined ? { restrict: setup.project.restrict } : {}) },
              permission: { yolo: options.yolo, nonInteractive: "deny", prompter: bridge.prompter },
              ...(options.sandbox !== undefined ? { sandbox: { mode: options.sandbox } } : {})
            })
          )
        )
      )
      // the command's own context (its logger settings) under the runtime's services; not its scope,
      // which lives as long as the app: what a turn opens is closed with that turn
      // warnings become notices on screen (written to the terminal they would draw over it)
      const notices = noticeLogger()
      const ambient = Context.add(Context.omit(Scope.Scope)(yield* Effect.context<never>()), Logger.CurrentLoggers, notices.loggers)
      const build = Layer.build(layer).pipe(
        Effect.map((built): Context.Context<Services> => Context.merge(ambient, built)),
        Effect.mapError(fromRuntimeError),
        Effect.provideService(Logger.CurrentLoggers, notices.loggers)
      )
      const services = Promise.withResolvers<Context.Context<Services>>()
      let buildFailed: CliError | undefined

      const resuming = options.session !== undefined || options.continue
      let resumed: Session | undefined
      let initial = initialTranscript
      if (resuming) {
        const context = yield* build
        services.resolve(context)
        const lookup = Effect.gen(function* () {
          const store = yield* (yield* Effect.promise(() => import("./SessionLib.ts"))).SessionStore
          const session =
            options.session !== undefined
              ? yield* store
                  .getSession(options.session)
                  .pipe(
                    Effect.mapError((e) => (e.reason === "not-found" ? usage(`No session ${options.session}: see reins sessions list`) : failure(e.message)))
                  )
              : yield* store.latestSession(setup.cwd)
          return session ? { session, messages: yield* store.messages(session.id) } : undefined
        })
        const found = yield* lookup.pipe(Effect.provideContext(context), Effect.mapError(fromRuntimeError))
        resumed = found?.session
        if (found) initial = fromHistory(found.messages)
      }

      const file = historyFile(setup.dataDir, setup.cwd)
      const history = yield* Effect.promise(() => loadHistory(file))
      const controller = makeController(services.promise, { cwd: setup.cwd, model: options.model, sessionID: resumed?.id })
      const stdout = process.stdout
      const checkModel = async (text: string, variant?: string) => {
        const exit = await Effect.runPromiseExit(Effect.flatMap(resolveModel(setup, text), (model) => withVariant(setup, model, variant)))
        return Exit.isSuccess(exit) ? { model: exit.value } : { error: failureText(exit.cause) }
      }
      yield* Effect.acquireUseRelease(
        Effect.sync(() => {
          // no echo of keys typed before Ink reads them (Ink turns raw mode on after its first frame)
          if (process.stdin.isTTY) process.stdin.setRawMode(true)
          const instance = render(
            <App
              controller={controller}
              bridge={bridge}
              initial={initial}
              cwd={setup.cwd}
              config={setup.config}
              keyed={keyedProviders(setup)}
              history={history}
              historyFile={file}
              theme={themeFor(stdout, setup.env)}
              home={setup.env.HOME}
              checkModel={checkModel}
              clearScreen={() => {
                instance.clear()
                stdout.write(CLEAR)
              }}
              writeRaw={(s) => void stdout.write(s)}
              // from then on the warnings logged, and those logged before, show as notices
              onListening={() => notices.attach((text, kind) => controller.on.notice(text, kind))}
              // once the runtime is built (it loads the tool modules): no extra work while the first screens take their keys
              loadCommands={() => services.promise.then(() => loadCommands(setup.cwd, setup.project.trusted))}
            />,
            {
              exitOnCtrlC: false,
              // a terminal is interactive whatever CI says (Ink would otherwise draw only the last frame)
              interactive: stdout.isTTY === true,
              kittyKeyboard: { mode: "auto" }
            }
          )
          return instance
        }),
        (instance) =>
          Effect.gen(function* () {
            if (!resuming) {
              // the runtime comes up behind the first frame, once the prompt is on screen (loading its modules holds
              // the thread: Ink's next frame, the one with the prompt's hint, would wait for them); if it cannot,
              // the app ends with the reason
              yield* Effect.promise(() => instance.waitUntilRenderFlush())
              yield* Effect.forkScoped(
                build.pipe(
                  Effect.tap((context) => Effect.sync(() => services.resolve(context))),
                  Effect.tapError((error) =>
                    Effect.sync(() => {
                      buildFailed = error
                      instance.unmount()
                    })
                  )
                )
              )
            }
            yield* Effect.promise(() =>
              instance.waitUntilExit().then(
                () => undefined,
                () => undefined
              )
            )
            if (buildFailed) return yield* buildFailed
          }),
        (instance) =>
          Effect.promise(async () => {
            instance.unmount()
            if (process.stdin.isTTY) process.stdin.setRawMode(false)
            await controller.shutdown()
          })
      )
    })
  )
