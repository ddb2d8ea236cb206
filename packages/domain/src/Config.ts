import { Schema } from "effect"
import { McpConfig } from "./McpConfig.ts"

export const Action = Schema.Literals(["allow", "ask", "deny"])
export type Action = typeof Action.Type

export const ModelLimits = Schema.Struct({
  context: Schema.Number,
  output: Schema.Number,
  input: Schema.optional(Schema.Number),
  name: Schema.optional(Schema.String)
})
export type ModelLimits = typeof ModelLimits.Type

const Dollars = Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0))

/** Dollars per million tokens; cache prices default to the input price. */
export const ModelPrice = Schema.Struct({
  input: Dollars,
  output: Dollars,
  cache_read: Schema.optional(Dollars),
  cache_write: Schema.optional(Dollars)
})
export type ModelPrice = typeof ModelPrice.Type

/** AI SDK provider options for one provider: passed as `providerOptions.<provider>` (T22). */
export const ProviderOptions = Schema.Record(Schema.String, Schema.Unknown)
export type ProviderOptions = typeof ProviderOptions.Type

/** A model under `provider.<id>.models`: limits, price and capabilities that add to or override the shipped catalogue. */
export const ModelConfig = Schema.Struct({
  context: Schema.optional(Schema.Number),
  output: Schema.optional(Schema.Number),
  input: Schema.optional(Schema.Number),
  name: Schema.optional(Schema.String),
  price: Schema.optional(ModelPrice),
  tools: Schema.optional(Schema.Boolean),
  reasoning: Schema.optional(Schema.Boolean),
  images: Schema.optional(Schema.Boolean),
  /** The AI SDK provider options of every call to this model (under the provider's key, e.g. `{ "reasoningSummary": "auto" }`; T22). */
  options: Schema.optional(ProviderOptions),
  /** Named variants of the options (`--variant NAME`): added to or replacing the built-in `low`, `medium`, `high`, … */
  variants: Schema.optional(Schema.Record(Schema.String, ProviderOptions)),
  /** The variant used when none is asked for. */
  variant: Schema.optional(Schema.String)
})
export type ModelConfig = typeof ModelConfig.Type

export const ProviderType = Schema.Literals([
  "openai-compatible",
  "openai",
  "anthropic",
  "google",
  "amazon-bedrock",
  "azure",
  "openrouter",
  "mistral",
  "groq",
  "deepseek",
  "xai"
])
export type ProviderType = typeof ProviderType.Type

const Seconds = Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0))

/**
 * Seconds a provider may stay silent before the attempt fails and is retried like a dropped
 * connection; 0 turns a limit off. Unset fields fall back to `provider_timeout`, then the defaults.
 */
export const ProviderTimeoutConfig = Schema.Struct({
  /** From sending the request to the response headers (default 60). */
  connect: Schema.optional(Seconds),
  /** From the headers to the first bytes of the stream (default 180). */
  first_byte: Schema.optional(Seconds),
  /** The longest gap between two chunks of the stream (default 120). */
  idle: Schema.optional(Seconds)
})
export type ProviderTimeoutConfig = typeof ProviderTimeoutConfig.Type

export const ProviderConfig = Schema.Struct({
  type: ProviderType,
  baseURL: Schema.optional(Schema.String),
  apiKey: Schema.optional(Schema.String),
  headers: Schema.optional(Schema.Record(Schema.String, Schema.String)),
  models: Schema.optional(Schema.Record(Schema.String, ModelConfig)),
  timeout: Schema.optional(ProviderTimeoutConfig)
})
export type ProviderConfig = typeof ProviderConfig.Type

/** `"allow"` for everything, or per permission an action or a map of pattern → action (order kept). */
export const PermissionConfig = Schema.Union([Action, Schema.Record(Schema.String, Schema.Union([Action, Schema.Record(Schema.String, Action)]))])
export type PermissionConfig = typeof PermissionConfig.Type

export const RetryConfig = Schema.Struct({
  attempts: Schema.optional(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 20 }))),
  initial_delay_ms: Schema.optional(Schema.Number),
  max_delay_ms: Schema.optional(Schema.Number)
})

const PositiveInt = Schema.Int.check(Schema.isGreaterThan(0))

/** Limits and reducers for one tool's output; unset fields fall back to `tool_output`. */
export const ToolOutputLimits = Schema.Struct({
  max_lines: Schema.optional(PositiveInt),
  max_bytes: Schema.optional(PositiveInt),
  direction: Schema.optional(Schema.Literals(["head", "tail", "head_tail"])),
  reducers: Schema.optional(Schema.Boolean)
})

/** How tool output is cut for the model and how long spill files are kept. */
export const ToolOutputConfig = Schema.Struct({
  max_lines: Schema.optional(PositiveInt),
  max_bytes: Schema.optional(PositiveInt),
  /** Whether reducers compact known outputs (test runs, builds, git) before truncation. */
  reducers: Schema.optional(Schema.Boolean),
  /** Spill files older than this many days are deleted. */
  retention_days: Schema.optional(Schema.Finite.check(Schema.isGreaterThan(0))),
  /** The cap of a streamed output's spill file, in bytes (default 256 MiB): past it the file keeps the start and the end. */
  spill_max_bytes: Schema.optional(Schema.Int.check(Schema.isGreaterThanOrEqualTo(65_536))),
  /** Per-tool overrides, by tool id (e.g. `"bash"`). */
  tools: Schema.optional(Schema.Record(Schema.String, ToolOutputLimits))
})
export type ToolOutputConfig = typeof ToolOutputConfig.Type

/** Which file-editing tools the model is offered: by model family (`auto`), or forced for every model. */
export const EditToolSetting = Schema.Literals(["auto", "edit", "apply_patch"])
export type EditToolSetting = typeof EditToolSetting.Type

/** When and how the context is compacted (SPEC §2 T7–T12). */
export const CompactionConfig = Schema.Struct({
  /** Compact when the context is about to overflow (default true). */
  auto: Schema.optional(Schema.Boolean),
  /**
   * Tokens kept free for the model's answer (default: the model's output limit, at most a third of
   * its input limit or context, and at most 20_000 with a separate input limit). Must be below the
   * model's input limit (else its context): a larger reserve is a config error when a turn starts.
   */
  reserved: Schema.optional(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))),
  /** User turns kept verbatim after a compaction (default 2), within a quarter of the usable context; 0 keeps none. */
  tail_turns: Schema.optional(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))),
  /** Tools whose outputs are never pruned (default ["skill"]). */
  protected_tools: Schema.optional(Schema.Array(Schema.String)),
  /** Outputs over this many lines keep their first and last lines when pruned instead of being dropped (default 0: dropped). */
  prune_keep_lines: Schema.optional(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))),
  /** A file whose text replaces the summary template. */
  template: Schema.optional(Schema.String)
})
export type CompactionConfig = typeof CompactionConfig.Type

/** When a run of tool calls counts as a loop (SPEC §1 T6). */
export const DoomLoopConfig = Schema.Struct({
  /** Identical calls (tool + arguments) in one turn (default 3). */
  identical: Schema.optional(Schema.Int.check(Schema.isGreaterThanOrEqualTo(2))),
  /** Repeats of a cycle of calls such as A,B,A,B,A,B (default 3). */
  cycles: Schema.optional(Schema.Int.check(Schema.isGreaterThanOrEqualTo(2))),
  /** The same call getting the same result this many times (default 3). */
  pairs: Schema.optional(Schema.Int.check(Schema.isGreaterThanOrEqualTo(2)))
})
export type DoomLoopConfig = typeof DoomLoopConfig.Type

/** A host a sandboxed command may reach through reins's proxy: a name, `*.suffix`, `*`, an IP literal, or `@registries`. */
export const SandboxHost = Schema.String.check(
  Schema.isPattern(/^(@registries|\*|(\*\.)?[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*\.?|[0-9.]+|\[?[0-9A-Fa-f:.]+\]?)$/, {
    message: 'Expected a host name ("registry.npmjs.org"), "*.suffix", an IP address or "@registries" (no scheme, port or path)'
  })
)

/**
 * `sandbox.network`: `mode` `none` (no network; the default unless `allow` is given), `allow` (HTTP and
 * HTTPS through reins's proxy to the hosts in `allow`, by default the package registries, `@registries`)
 * or `all` (the host's network, unfiltered).
 */
export const SandboxNetworkConfig = Schema.Struct({
  mode: Schema.optional(Schema.Literals(["none", "allow", "all"])),
  allow: Schema.optional(Schema.Array(SandboxHost))
})

/**
 * The OS sandbox every command the agent runs goes through (bubblewrap on Linux): `auto` (the default)
 * uses it where it can and says once where it cannot, `required` refuses to run commands without it,
 * `off` runs them as they are. Commands may write the project, /tmp and package caches; `writable`
 * adds directories, `deny_read` hides more paths, `network` says what they reach (SandboxNetworkConfig);
 * `env.pass` names secret-looking variables that still reach commands (`NAME` or `PREFIX_*`).
 */
export const SandboxConfig = Schema.Struct({
  mode: Schema.optional(Schema.Literals(["auto", "required", "off"])),
  network: Schema.optional(SandboxNetworkConfig),
  writable: Schema.optional(Schema.Array(Schema.String)),
  deny_read: Schema.optional(Schema.Array(Schema.String)),
  env: Schema.optional(Schema.Struct({ pass: Schema.optional(Schema.Array(Schema.String)) }))
})
export type SandboxConfig = typeof SandboxConfig.Type

/** Where an agent may run: as the session's own agent, as a sub-agent of the `task` tool, or both. */
export const AgentMode = Schema.Literals(["primary", "subagent", "all"])
export type AgentMode = typeof AgentMode.Type

/** The tools an agent is offered: a list of tool ids (an allow list), or tool id (wildcards) → offered or not. */
export const AgentTools = Schema.Union([Schema.Array(Schema.String), Schema.Record(Schema.String, Schema.Boolean)])
export type AgentTools = typeof AgentTools.Type

/** One agent, under `agent.<name>` in reins.json or as the front matter of `.reins/agents/<name>.md`. */
export const AgentConfig = Schema.Struct({
  description: Schema.optional(Schema.String),
  /** `"<provider>/<model>"`; default the run's model. */
  model: Schema.optional(Schema.String.check(Schema.isPattern(/^[^/]+\/.+$/, { message: 'Expected "<provider>/<model>"' }))),
  /** The system prompt header (the text, or a file path relative to the project); a Markdown agent's body. */
  prompt: Schema.optional(Schema.String),
  tools: Schema.optional(AgentTools),
  /** Rules over the config's `permission`; its denies hold even against "always" answers. */
  permission: Schema.optional(PermissionConfig),
  steps: Schema.optional(Schema.Int.check(Schema.isGreaterThan(0))),
  mode: Schema.optional(AgentMode),
  variant: Schema.optional(Schema.String),
  /** `true` removes the agent (a built-in too). */
  disable: Schema.optional(Schema.Boolean)
})
export type AgentConfig = typeof AgentConfig.Type

/** `agent` in reins.json: the default agent's `steps` and `prompt` (kept from before agents had names), and named agents. */
export const AgentsConfig = Schema.StructWithRest(
  Schema.Struct({
    steps: Schema.optional(Schema.Int.check(Schema.isGreaterThan(0))),
    prompt: Schema.optional(Schema.String)
  }),
  [Schema.Record(Schema.String.check(Schema.isPattern(/^(?!(steps|prompt)$)/)), AgentConfig)]
)
export type AgentsConfig = typeof AgentsConfig.Type

/** A command run around tool calls (config `hooks`): `$FILE`, `$TOOL` and `$SESSION` are replaced, shell-quoted. */
export const CommandHookConfig = Schema.Struct({
  /** Tool ids it applies to, a regular expression matched against the whole id (`edit|write`); default every tool. */
  match: Schema.optional(Schema.String),
  command: Schema.String,
  /** Milliseconds before it is killed (default 10000). */
  timeout: Schema.optional(PositiveInt)
})
export type CommandHookConfig = typeof CommandHookConfig.Type

/** Command hooks by event: `tool.before` (a non-zero exit denies the call, its output the reason), `tool.after`. */
export const HooksConfig = Schema.Struct({
  "tool.before": Schema.optional(Schema.Array(CommandHookConfig)),
  "tool.after": Schema.optional(Schema.Array(CommandHookConfig))
})
export type HooksConfig = typeof HooksConfig.Type

/** The whole of `reins.json`. Unknown keys are reported, so typos do not pass silently. */
export const Config = Schema.Struct({
  $schema: Schema.optional(Schema.String),
  model: Schema.optional(Schema.String.check(Schema.isPattern(/^[^/]+\/.+$/, { message: 'Expected "<provider>/<model>"' }))),
  /** The variant of the model's options (`low`, `medium`, `high`, … or one under `provider.<id>.models.<model>.variants`); `--variant` wins, then the model's own `variant` (T22). */
  variant: Schema.optional(Schema.String),
  provider: Schema.optional(Schema.Record(Schema.String, ProviderConfig)),
  permission: Schema.optional(PermissionConfig),
  /**
   * The default agent's step limit and `prompt` (a file path relative to the project, or the text)
   * replacing the model family's system prompt header; and named agents (`agent.<name>`).
   */
  agent: Schema.optional(AgentsConfig),
  retry: Schema.optional(RetryConfig),
  /** Timeouts for every provider; `provider.<id>.timeout` overrides them field by field. */
  provider_timeout: Schema.optional(ProviderTimeoutConfig),
  instructions: Schema.optional(Schema.Array(Schema.String)),
  tool_output: Schema.optional(ToolOutputConfig),
  /** Where "always" replies are kept: for the session only (the default) or for the project, across runs. */
  permission_persist: Schema.optional(Schema.Literals(["session", "project"])),
  /** How rules combine: the last matching rule wins (the default), or any matching deny wins. */
  permission_mode: Schema.optional(Schema.Literals(["last-match", "deny-wins"])),
  /** Seconds a question waits for an answer before the non-interactive policy decides. */
  permission_timeout: Schema.optional(Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0))),
  compaction: Schema.optional(CompactionConfig),
  /** Commands run before or after tool calls (formatters, checks), with the permission rules of bash. */
  hooks: Schema.optional(HooksConfig),
  doom_loop: Schema.optional(DoomLoopConfig),
  /**
   * `auto` (the default) offers GPT-family models (`gpt-`, `codex` in the id) `apply_patch` and
   * the others `edit` and `write`; `edit` or `apply_patch` offers that choice to every model.
   */
  edit_tool: Schema.optional(EditToolSetting),
  /** MCP servers by name (`local`: a command over stdio; `remote`: a URL); their tools are offered as `<name>_<tool>`. */
  mcp: Schema.optional(McpConfig),
  sandbox: Schema.optional(SandboxConfig)
})
export type Config = typeof Config.Type

export const emptyConfig: Config = {}
