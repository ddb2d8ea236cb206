// reins auth login|list|logout: the API keys reins keeps for the user (auth.json in the data dir, mode 0600). A key
// in the environment or in reins.json wins over a stored one.
import { Console, Effect, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { defaultDataDir, editConfigFile, effectiveConfig, loadConfigLayers, userConfigFile } from "@reins/domain"
import { authFile, BUILT_IN_PROVIDERS, ENV_KEYS, maskKey, readStoredKeys, removeKey, storeKey } from "@reins/provider"
import * as os from "node:os"
import { CliError, usage } from "../CliError.ts"
import { KEY_PROVIDERS } from "../onboard/Choices.ts"
import { ask } from "../TtyPrompter.ts"

const env = process.env
const dataDir = () => defaultDataDir(env, os.homedir())
const store = <A, E extends { readonly message: string }>(effect: Effect.Effect<A, E>) => effect.pipe(Effect.mapError((e) => usage(e.message)))

/** The user's own config (their global files and REINS_CONFIG's): where providers they set up live. */
const userConfig = Effect.map(
  Effect.suspend(() => loadConfigLayers({ cwd: process.cwd(), env, home: os.homedir() })).pipe(Effect.mapError((e) => usage(e.message))),
  (layers) => effectiveConfig(layers, {})
)

const cancelled = new CliError({ message: "Login cancelled: nothing was stored.", code: 130 })

/** A visible answer to a question on the terminal; Ctrl+C cancels. */
const askLine = (question: string) => ask(question, cancelled).pipe(Effect.map((answer) => answer.trim()))

/** A secret typed on the terminal: nothing echoed; Enter ends it, Ctrl+C or Esc cancels. */
const askHidden = (question: string) =>
  Effect.callback<string, CliError>((resume) => {
    const stdin = process.stdin
    // echo off before the question shows: a key typed or pasted as soon as it appears is never echoed
    stdin.setRawMode(true)
    process.stderr.write(question)
    let typed = ""
    const release = () => {
      stdin.off("data", onData)
      stdin.setRawMode(false)
      stdin.pause()
    }
    const done = (result: Effect.Effect<string, CliError>) => {
      release()
      process.stderr.write("\n")
      resume(result)
    }
    const onData = (chunk: Buffer) => {
      for (const ch of chunk.toString("utf8")) {
        if (ch === "\r" || ch === "\n") return done(Effect.succeed(typed.trim()))
        if (ch === "\u0003" || ch === "\u001b") return done(Effect.fail(cancelled))
        if (ch === "\u007f" || ch === "\b") typed = typed.slice(0, -1)
        else if (ch >= " ") typed += ch
      }
    }
    stdin.resume()
    stdin.on("data", onData)
    return Effect.sync(release)
  })

const readStdin = Effect.promise(async () => (await Bun.stdin.text()).trim())

const terminal = () => Boolean(process.stdin.isTTY && process.stderr.isTTY)

const loginFlags = {
  provider: Argument.String("provider").pipe(
    Argument.withDescription(`The provider: ${KEY_PROVIDERS.join(", ")}, azure, or one of yours (an OpenAI-compatible server: its base URL is asked)`),
    Argument.optional
  ),
  key: Flag.String("key").pipe(
    Flag.withDescription("The key; - reads it from stdin (so does a pipe without --key). On a terminal it is asked for, without echo"),
    Flag.optional
  ),
  baseUrl: Flag.String("base-url").pipe(
    Flag.withDescription("For a provider reins does not know: its OpenAI-compatible endpoint (e.g. http://127.0.0.1:8000/v1), saved in your reins.json"),
    Flag.optional
  )
}

const login = Command.make("login", loginFlags, (input) =>
  Effect.gen(function* () {
    const config = yield* userConfig
    const provider = Option.isSome(input.provider)
      ? input.provider.value
      : terminal()
        ? yield* askLine(`Provider (${KEY_PROVIDERS.join(", ")}, or a name of your own): `)
        : yield* usage("Name the provider: reins auth login anthropic --key - < key.txt")
    if (provider === "" || provider.includes("/")) return yield* usage(`"${provider}" is not a provider id: reins auth login anthropic`)
    if (provider === "amazon-bedrock")
      return yield* usage(
        "amazon-bedrock takes AWS credentials from the environment: set AWS_REGION and AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY (or AWS_BEARER_TOKEN_BEDROCK)"
      )
    const known = BUILT_IN_PROVIDERS.includes(provider as never) || config.provider?.[provider] !== undefined
    // a provider reins does not know is an OpenAI-compatible server: its endpoint goes into the user's config
    const baseURL = known
      ? undefined
      : Option.isSome(input.baseUrl)
        ? input.baseUrl.value
        : terminal()
          ? yield* askLine(`reins does not know "${provider}": its OpenAI-compatible base URL (e.g. http://127.0.0.1:8000/v1): `)
          : yield* usage(
              `reins does not know the provider "${provider}": give its endpoint with --base-url URL (an OpenAI-compatible server), or use one of ${BUILT_IN_PROVIDERS.join(", ")}`
            )
    if (baseURL !== undefined && !/^https?:\/\/\S+$/.test(baseURL)) return yield* usage(`The base URL must be http(s)://…, got "${baseURL}"`)
    const given = Option.getOrUndefined(input.key)
    const key =
      given !== undefined && given !== "-"
        ? given.trim()
        : given === "-" || !process.stdin.isTTY
          ? yield* readStdin
          : yield* askHidden(`API key for ${provider} (not shown as you type): `)
    if (key === "") {
      return yield* usage(
        `No key given for ${provider}: paste it at the prompt on a terminal, or pass it with --key KEY or --key - (stdin): echo "$KEY" | reins auth login ${provider} --key -`
      )
    }
    if (/\s/.test(key)) return yield* usage("The key has spaces or line breaks in it: give the key alone")
    yield* store(storeKey(dataDir(), provider, key))
    if (baseURL !== undefined) {
      const file = userConfigFile(env, os.homedir())
      yield* editConfigFile(file, [{ path: ["provider", provider], value: { type: "openai-compatible", baseURL } }]).pipe(
        Effect.mapError((e) => usage(e.message))
      )
      yield* Console.error(`Added provider "${provider}" (${baseURL}) to ${file}.`)
    }
    const variable = ENV_KEYS[config.provider?.[provider]?.type ?? provider]
    const shadow = variable !== undefined && env[variable] ? ` ${variable} is set in your environment and is used instead while it is.` : ""
    yield* Console.log(`Stored the key for ${provider} (${maskKey(key)}) in ${authFile(dataDir())}.${shadow}`)
  })
).pipe(Command.withDescription("Store an API key for a provider (asked without echo on a terminal; --key - reads stdin)"))

interface Row {
  readonly provider: string
  readonly source: "env" | "stored"
  readonly variable?: string
  readonly key: string
  /** Whether this key is the one used (the environment's wins over a stored one). */
  readonly active: boolean
}

const list = Command.make(
  "list",
  { format: Flag.Literals("format", ["text", "json"]).pipe(Flag.withDescription("Output format"), Flag.withDefault("text" as const)) },
  ({ format }) =>
    Effect.gen(function* () {
      const config = yield* userConfig
      const stored = yield* store(readStoredKeys(dataDir()))
      const providers = [...new Set([...BUILT_IN_PROVIDERS, ...Object.keys(config.provider ?? {}), ...Object.keys(stored)])]
      const rows: Array<Row> = providers.flatMap((provider) => {
        const variable = ENV_KEYS[config.provider?.[provider]?.type ?? provider]
        const fromEnv = variable !== undefined ? env[variable] : undefined
        const saved = stored[provider]?.key
        return [
          ...(fromEnv ? [{ provider, source: "env" as const, variable: variable!, key: maskKey(fromEnv), active: true }] : []),
          ...(saved ? [{ provider, source: "stored" as const, key: maskKey(saved), active: !fromEnv }] : [])
        ]
      })
      if (format === "json") return yield* Console.log(JSON.stringify({ file: authFile(dataDir()), keys: rows }, null, 2))
      if (rows.length === 0) return yield* Console.log("No keys: none stored and none in the environment. reins auth login <provider> stores one.")
      const source = (r: Row) => (r.source === "env" ? `env ${r.variable}` : "stored")
      const width = Math.max(...rows.map((r) => r.provider.length))
      const sourceWidth = Math.max(...rows.map((r) => source(r).length))
      yield* Console.log(
        rows
          .map((r) => `${r.provider.padEnd(width)}  ${source(r).padEnd(sourceWidth)}  ${r.key}${r.active ? "" : "  (unused while the environment has one)"}`)
          .join("\n")
      )
      yield* Console.log(`\nStored keys: ${authFile(dataDir())}`)
    })
).pipe(Command.withDescription("List the keys reins would use: provider, where it comes from (env or stored), the key masked"))

const logout = Command.make(
  "logout",
  { provider: Argument.String("provider").pipe(Argument.withDescription("The provider whose stored key to remove")) },
  ({ provider }) =>
    Effect.gen(function* () {
      const removed = yield* store(removeKey(dataDir(), provider))
      if (!removed) return yield* usage(`No key stored for ${provider} (reins auth list shows the keys)`)
      const variable = ENV_KEYS[provider]
      yield* Console.log(
        `Removed the stored key for ${provider}.${variable !== undefined && env[variable] ? ` ${variable} in your environment is still used.` : ""}`
      )
    })
).pipe(Command.withDescription("Remove the stored key of a provider"))

/** `reins auth`: login, list, logout. */
export const auth = Command.make("auth").pipe(
  Command.withDescription(
    "API keys: reins auth login [provider] stores one (mode 0600, in the data dir's auth.json), list shows them masked, logout removes one. A key in the environment or reins.json wins over a stored one."
  ),
  Command.withSubcommands([login, list, logout])
)
