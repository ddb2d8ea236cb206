// Starts the interactive session: the runtime with a prompter that asks on screen, the stored
// session if one is resumed, and the Ink app until it exits.
import { render } from "ink"
import { Bus, type ModelRef, type Session } from "@reins/domain"
import { Effect, Exit } from "effect"
import { makeRuntime } from "@reins/runtime"
import { SessionService } from "@reins/session"
import { SessionStore } from "@reins/storage"
import { failure, fromRuntimeError, usage } from "../CliError.ts"
import { resolveModel, type Setup } from "../Setup.ts"
import { VERSION } from "../version.ts"
import { App } from "./App.tsx"
import { makePermissionBridge } from "./Bridge.ts"
import { makeController } from "./Controller.ts"
import { historyFile, loadHistory } from "./History.ts"
import { fromHistory, initialTranscript, themeFor } from "./view/index.ts"

export interface TuiOptions {
  readonly setup: Setup
  readonly model: ModelRef
  /** Resume the latest session of the directory. */
  readonly continue: boolean
  /** Resume this session. */
  readonly session: string | undefined
  readonly yolo: boolean
}

/** Clear the screen and the scrollback, cursor home: before the transcript is printed again. */
const CLEAR = "\x1b[2J\x1b[3J\x1b[H"

/** The interactive session, until the user leaves it; the running turn is stopped (and waited for) on the way out. */
export const runTui = (options: TuiOptions) =>
  Effect.gen(function* () {
    const { setup } = options
    const bridge = makePermissionBridge()
    const layer = makeRuntime({
      cwd: setup.cwd,
      dataDir: setup.dataDir,
      config: setup.config,
      env: setup.env,
      version: VERSION,
      permission: { yolo: options.yolo, nonInteractive: "deny", prompter: bridge.prompter }
    })
    const program = Effect.gen(function* () {
      const context = yield* Effect.context<SessionService | SessionStore | Bus>()
      const store = yield* SessionStore
      const resumed: Session | undefined =
        options.session !== undefined
          ? yield* store.getSession(options.session).pipe(
              Effect.mapError((e) => (e.reason === "not-found" ? usage(`No session ${options.session}: see reins sessions list`) : failure(e.message)))
            )
          : options.continue
            ? yield* store.latestSession(setup.cwd)
            : undefined
      const messages = resumed ? yield* store.messages(resumed.id) : []
      const file = historyFile(setup.dataDir, setup.cwd)
      const history = yield* Effect.promise(() => loadHistory(file))
      const controller = makeController(context, { cwd: setup.cwd, model: options.model, sessionID: resumed?.id })
      const stdout = process.stdout
      const checkModel = async (text: string) => {
        const exit = await Effect.runPromiseExit(resolveModel(setup, text))
        return Exit.isSuccess(exit) ? { model: exit.value } : { error: Exit.isFailure(exit) ? String(exit.cause).split("\n")[0]! : "" }
      }
      yield* Effect.acquireUseRelease(
        Effect.sync(() => {
          // no echo of keys typed before Ink reads them (Ink turns raw mode on after its first frame)
          if (process.stdin.isTTY) process.stdin.setRawMode(true)
          const instance = render(
            <App
              controller={controller}
              bridge={bridge}
              initial={resumed ? fromHistory(messages) : initialTranscript}
              cwd={setup.cwd}
              config={setup.config}
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
        (instance) => Effect.promise(() => instance.waitUntilExit().then(() => undefined, () => undefined)),
        (instance) =>
          Effect.promise(async () => {
            instance.unmount()
            if (process.stdin.isTTY) process.stdin.setRawMode(false)
            await controller.shutdown()
          })
      )
    })
    yield* program.pipe(Effect.provide(layer), Effect.mapError(fromRuntimeError))
  })
