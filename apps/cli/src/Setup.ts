import { Effect } from "effect"
import * as os from "node:os"
import { defaultDataDir, effectiveConfig, loadConfigLayers, type Config, type ModelRef } from "@reins/domain"
import { BUILT_IN_PROVIDERS, missingCredentials, parseModel, providerConfig, readStoredKeys, type StoredKeys } from "@reins/provider"
import { usage } from "./CliError.ts"
import { DEFAULT_MODELS } from "./KeySources.ts"
import { settleTrust, type ProjectState, type TrustChoice } from "./ProjectTrust.ts"

export interface Setup {
  readonly cwd: string
  readonly dataDir: string
  /** The config in force: the user's, and the project's as far as trust lets it apply. */
  readonly config: Config
  readonly env: Record<string, string | undefined>
  /** What trust decided for the project directory. */
  readonly project: ProjectState
  /** The keys `reins auth login` stored (the data dir's auth.json). */
  readonly storedKeys: StoredKeys
}

export interface SetupOptions {
  /** How trust is settled (default: the store alone; `reins trust` and `--trust` change it). */
  readonly trust?: TrustChoice
  /** Whether to say on stderr that an untrusted project's code is off (default true). */
  readonly notice?: boolean
}

/** Loads config for the current directory; a bad file becomes a one-line usage error (exit 2). */
export const loadSetup = (options: SetupOptions = {}) => Effect.suspend(() => setupAt(process.cwd(), options))

/** Loads config for a project directory (`reins acp` runs sessions in the directories its client names). */
export const setupAt = (cwd: string, options: SetupOptions = {}) =>
  Effect.gen(function* () {
    const env = process.env
    const home = os.homedir()
    const dataDir = defaultDataDir(env, home)
    const layers = yield* loadConfigLayers({ cwd, env, home }).pipe(Effect.mapError((e) => usage(e.message)))
    const project = yield* settleTrust({
      cwd,
      dataDir,
      layers,
      choice: options.trust ?? "stored",
      terminal: Boolean(process.stdin.isTTY && process.stderr.isTTY),
      notice: options.notice ?? true
    })
    const config = effectiveConfig(layers, project.trusted ? project.config : project.inert)
    const storedKeys = yield* readStoredKeys(dataDir).pipe(Effect.mapError((e) => usage(e.message)))
    return { cwd, dataDir, config, env, project, storedKeys } satisfies Setup
  })

/** What `makeRuntime` is told about the project: trusted (and whether by the user's word), or untrusted with its tightening rules. */
export const runtimeProject = (setup: Setup) => ({
  trusted: setup.project.trusted,
  explicit: setup.project.explicit,
  ...(setup.project.restrict !== undefined ? { restrict: setup.project.restrict } : {})
})

/** The one line a run without a model ends with (off a terminal; on one, `reins` walks the user through the setup). */
export const NO_MODEL =
  "No model configured: run reins on a terminal to set one up, or reins auth login <provider>, or set ANTHROPIC_API_KEY or OPENAI_API_KEY, " +
  'or pass --model <provider>/<model>, or set "model" (and "provider") in reins.json'

/**
 * An untrusted project's provider entry for the model's provider: its endpoint, headers or key would
 * get the user's key or the conversation. The run stops, naming the redirect and how to trust it.
 */
const redirected = (setup: Setup, providerID: string) => {
  if (setup.project.trusted) return undefined
  const entry = setup.project.config.provider?.[providerID]
  if (entry === undefined) return undefined
  const to = entry.baseURL ? ` to ${entry.baseURL}` : ""
  const key = BUILT_IN_PROVIDERS.includes(entry.type) && entry.type === providerID ? `, with your ${providerID} key` : ""
  return (
    `The project's reins.json sends requests for provider "${providerID}"${to}${key}, and ${setup.cwd} is not trusted, so nothing was sent. ` +
    "Trust the directory with `reins trust` (or --trust for this run), or set the provider in your own config (~/.config/reins/reins.json)"
  )
}

const keyFor = (setup: Setup, providerID: string, variable: string) => Boolean(setup.env[variable] || setup.storedKeys[providerID]?.key)

/** The model named when none is given: config, then whichever key is set (environment, then stored); undefined when none. */
export const configuredModel = (setup: Setup) =>
  setup.config.model ??
  (keyFor(setup, "anthropic", "ANTHROPIC_API_KEY")
    ? `anthropic/${DEFAULT_MODELS.anthropic}`
    : keyFor(setup, "openai", "OPENAI_API_KEY")
      ? `openai/${DEFAULT_MODELS.openai}`
      : undefined)

/** Picks the model: --model, then config, then whichever API key is set. */
export const resolveModel = (setup: Setup, flag: string | undefined) =>
  Effect.gen(function* () {
    const text = flag ?? configuredModel(setup)
    if (!text) return yield* usage(NO_MODEL)
    const model: ModelRef | undefined = parseModel(text)
    if (!model) return yield* usage(`--model must look like <provider>/<model>, got "${text}"`)
    const redirect = redirected(setup, model.providerID)
    if (redirect !== undefined) return yield* usage(redirect)
    const provider = providerConfig({ providers: setup.config.provider ?? {}, env: setup.env }, model.providerID)
    if (!provider) {
      return yield* usage(
        `Unknown provider "${model.providerID}": use one of ${BUILT_IN_PROVIDERS.join(", ")}, or add it under "provider" in reins.json (type openai-compatible for any other server)`
      )
    }
    // a missing key (or Bedrock's region, Azure's resource) is told before any request
    const missing = missingCredentials(model.providerID, provider, setup.env, setup.storedKeys)
    if (missing !== undefined) return yield* usage(missing.replace(/\.$/, ""))
    return model
  })
