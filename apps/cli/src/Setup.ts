import { Effect } from "effect"
import * as os from "node:os"
import { defaultDataDir, loadConfig, type Config, type ModelRef } from "@reins/domain"
import { BUILT_IN_PROVIDERS, missingCredentials, parseModel, providerConfig } from "@reins/provider"
import { usage } from "./CliError.ts"

export interface Setup {
  readonly cwd: string
  readonly dataDir: string
  readonly config: Config
  readonly env: Record<string, string | undefined>
}

/** Loads config for the current directory; a bad file becomes a one-line usage error (exit 2). */
export const loadSetup = Effect.suspend(() => setupAt(process.cwd()))

/** Loads config for a project directory (`reins acp` runs sessions in the directories its client names). */
export const setupAt = (cwd: string) =>
  Effect.gen(function* () {
    const env = process.env
    const home = os.homedir()
    const { config } = yield* loadConfig({ cwd, env, home }).pipe(Effect.mapError((e) => usage(e.message)))
    return { cwd, dataDir: defaultDataDir(env, home), config, env } satisfies Setup
  })

const NO_MODEL =
  "No model configured: set ANTHROPIC_API_KEY or OPENAI_API_KEY, pass --model <provider>/<model>, " + 'or set "model" (and "provider") in reins.json'

/** Picks the model: --model, then config, then whichever API key is set. */
export const resolveModel = (setup: Setup, flag: string | undefined) =>
  Effect.gen(function* () {
    const text =
      flag ?? setup.config.model ?? (setup.env.ANTHROPIC_API_KEY ? "anthropic/claude-sonnet-4-5" : setup.env.OPENAI_API_KEY ? "openai/gpt-5" : undefined)
    if (!text) return yield* usage(NO_MODEL)
    const model: ModelRef | undefined = parseModel(text)
    if (!model) return yield* usage(`--model must look like <provider>/<model>, got "${text}"`)
    const provider = providerConfig({ providers: setup.config.provider ?? {}, env: setup.env }, model.providerID)
    if (!provider) {
      return yield* usage(
        `Unknown provider "${model.providerID}": use one of ${BUILT_IN_PROVIDERS.join(", ")}, or add it under "provider" in reins.json (type openai-compatible for any other server)`
      )
    }
    // a missing key (or Bedrock's region, Azure's resource) is told before any request
    const missing = missingCredentials(model.providerID, provider, setup.env)
    if (missing !== undefined) return yield* usage(missing.replace(/\.$/, ""))
    return model
  })
