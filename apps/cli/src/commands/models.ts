// reins models [provider]: the catalogue's models and the configured ones, with limits, prices and capabilities.
import { Console, Effect } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import type { Config } from "@reins/domain"
import { BUILT_IN_PROVIDERS, CATALOGUE_SOURCE, catalogue, modelInfo, providerConfig, type ModelInfo } from "@reins/provider"
import { usage } from "../CliError.ts"
import { loadSetup, resolveModel } from "../Setup.ts"

const format = Flag.Literals("format", ["text", "json"]).pipe(Flag.withDescription("Output format"), Flag.withDefault("text" as const))
const provider = Argument.String("provider").pipe(
  Argument.withDescription("Only this provider's models (e.g. anthropic, openrouter, or one from reins.json)"),
  Argument.optional
)

interface Row {
  readonly provider: string
  readonly model: string
  readonly info: ModelInfo
  readonly configured: boolean
}

/** The providers listed: one, or every built-in one and every configured one. */
const providersOf = (config: Config, only: string | undefined): ReadonlyArray<string> => {
  const configured = Object.keys(config.provider ?? {})
  const all = [...BUILT_IN_PROVIDERS, ...configured.filter((id) => !BUILT_IN_PROVIDERS.includes(id as never))]
  return only === undefined ? all : all.filter((id) => id === only)
}

const rowsOf = (config: Config, providerID: string): ReadonlyArray<Row> => {
  const settings = { providers: config.provider ?? {}, env: {} }
  const p = providerConfig(settings, providerID)
  if (!p) return []
  // a configured provider of a built-in type lists that type's catalogue too; openai-compatible only its own models
  const shipped = p.type === "openai-compatible" ? [] : Object.keys(catalogue()[p.type] ?? {})
  const own = Object.keys(p.models ?? {})
  const ids = [...shipped, ...own.filter((id) => !shipped.includes(id))]
  return ids.map((model) => ({ provider: providerID, model, info: modelInfo(p, model, providerID), configured: own.includes(model) }))
}

const tokens = (n: number | undefined) =>
  n === undefined ? "-" : n >= 1_000_000 ? `${+(n / 1_000_000).toFixed(2)}M` : n >= 10_000 ? `${Math.round(n / 1_000)}k` : String(n)

const dollars = (n: number | undefined) => (n === undefined ? "-" : `${+n.toFixed(4)}`)

const capabilities = (info: ModelInfo) =>
  [info.tools ? "tools" : undefined, info.reasoning ? "reasoning" : undefined, info.images ? "images" : undefined].filter((c) => c !== undefined).join(",") ||
  "-"

const table = (rows: ReadonlyArray<ReadonlyArray<string>>) => {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)))
  return rows
    .map((r) =>
      r
        .map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!)))
        .join("  ")
        .trimEnd()
    )
    .join("\n")
}

const json = (row: Row, isDefault: boolean) => ({
  provider: row.provider,
  model: row.model,
  ...(row.info.name !== undefined ? { name: row.info.name } : {}),
  default: isDefault,
  configured: row.configured,
  context: row.info.context,
  ...(row.info.input !== undefined ? { input: row.info.input } : {}),
  output: row.info.output,
  price: row.info.price
    ? {
        input: row.info.price.input,
        output: row.info.price.output,
        cache_read: row.info.price.cacheRead ?? null,
        cache_write: row.info.price.cacheWrite ?? null
      }
    : null,
  tools: row.info.tools ?? null,
  reasoning: row.info.reasoning ?? null,
  images: row.info.images ?? null
})

/** The catalogue as `reins models --format json` prints it (GET /models of `reins serve`). */
export const modelsJson = (config: Config, chosen: string | undefined) => ({
  source: CATALOGUE_SOURCE,
  default: chosen ?? null,
  models: providersOf(config, undefined)
    .flatMap((id) => rowsOf(config, id))
    .map((row) => json(row, chosen === `${row.provider}/${row.model}`))
})

export const models = Command.make("models", { provider, format }, ({ provider, format }) =>
  Effect.gen(function* () {
    const setup = yield* loadSetup({ notice: false })
    const only = provider._tag === "Some" ? provider.value : undefined
    const providers = providersOf(setup.config, only)
    if (only !== undefined && providers.length === 0) {
      return yield* usage(`Unknown provider "${only}": reins knows ${BUILT_IN_PROVIDERS.join(", ")}, and those under "provider" in reins.json`)
    }
    // the model a run would use (config, then whichever key is set); none is fine here
    const chosen =
      setup.config.model ??
      (yield* resolveModel(setup, undefined).pipe(
        Effect.map((m) => `${m.providerID}/${m.modelID}`),
        Effect.orElseSucceed(() => undefined)
      ))
    const rows = providers.flatMap((id) => rowsOf(setup.config, id))
    const isDefault = (row: Row) => chosen === `${row.provider}/${row.model}`
    if (format === "json") {
      return yield* Console.log(
        JSON.stringify({ source: CATALOGUE_SOURCE, default: chosen ?? null, models: rows.map((row) => json(row, isDefault(row))) }, null, 2)
      )
    }
    const header = ["", "MODEL", "CONTEXT", "INPUT", "OUTPUT", "$IN", "$OUT", "$CACHE-R", "$CACHE-W", "CAPABILITIES"]
    const lines = rows.map((row) => [
      isDefault(row) ? "*" : "",
      `${row.provider}/${row.model}`,
      tokens(row.info.context),
      tokens(row.info.input),
      tokens(row.info.output),
      dollars(row.info.price?.input),
      dollars(row.info.price?.output),
      dollars(row.info.price?.cacheRead),
      dollars(row.info.price?.cacheWrite),
      capabilities(row.info)
    ])
    yield* Console.log(table([header, ...lines]))
    yield* Console.log(
      `\n${rows.length} models. Limits in tokens, prices in $ per million tokens${chosen ? `; * is the default (${chosen})` : ""}.` +
        `\nCatalogue: ${CATALOGUE_SOURCE.models}, prices ${CATALOGUE_SOURCE.prices} (${CATALOGUE_SOURCE.generated}); override under provider.<id>.models in reins.json.`
    )
  })
).pipe(Command.withDescription("List the models reins knows: limits, prices and capabilities (the catalogue and reins.json)"))
