import { Schema } from "effect"

export const Action = Schema.Literals(["allow", "ask", "deny"])
export type Action = typeof Action.Type

export const ModelLimits = Schema.Struct({
  context: Schema.Number,
  output: Schema.Number,
  input: Schema.optional(Schema.Number),
  name: Schema.optional(Schema.String)
})
export type ModelLimits = typeof ModelLimits.Type

export const ProviderType = Schema.Literals(["openai-compatible", "openai", "anthropic"])
export type ProviderType = typeof ProviderType.Type

export const ProviderConfig = Schema.Struct({
  type: ProviderType,
  baseURL: Schema.optional(Schema.String),
  apiKey: Schema.optional(Schema.String),
  headers: Schema.optional(Schema.Record(Schema.String, Schema.String)),
  models: Schema.optional(Schema.Record(Schema.String, ModelLimits))
})
export type ProviderConfig = typeof ProviderConfig.Type

/** `"allow"` for everything, or per permission an action or a map of pattern → action (order kept). */
export const PermissionConfig = Schema.Union([
  Action,
  Schema.Record(Schema.String, Schema.Union([Action, Schema.Record(Schema.String, Action)]))
])
export type PermissionConfig = typeof PermissionConfig.Type

export const RetryConfig = Schema.Struct({
  attempts: Schema.optional(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 20 }))),
  initial_delay_ms: Schema.optional(Schema.Number),
  max_delay_ms: Schema.optional(Schema.Number)
})

/** The whole of `reins.json`. Unknown keys are reported, so typos do not pass silently. */
export const Config = Schema.Struct({
  $schema: Schema.optional(Schema.String),
  model: Schema.optional(Schema.String.check(Schema.isPattern(/^[^/]+\/.+$/, { message: 'Expected "<provider>/<model>"' }))),
  provider: Schema.optional(Schema.Record(Schema.String, ProviderConfig)),
  permission: Schema.optional(PermissionConfig),
  agent: Schema.optional(Schema.Struct({ steps: Schema.optional(Schema.Int.check(Schema.isGreaterThan(0))) })),
  retry: Schema.optional(RetryConfig),
  instructions: Schema.optional(Schema.Array(Schema.String))
})
export type Config = typeof Config.Type

export const emptyConfig: Config = {}
