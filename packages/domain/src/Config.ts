import { Schema } from "effect"
import { LspConfig } from "./LspConfig.ts"
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
  input: Dollars.annotate({ description: "Dollars per million input tokens." }),
  output: Dollars.annotate({ description: "Dollars per million output tokens." }),
  cache_read: Schema.optional(Dollars).annotate({ description: "Dollars per million tokens read from the cache (default: the input price)." }),
  cache_write: Schema.optional(Dollars).annotate({ description: "Dollars per million tokens written to the cache (default: the input price)." })
})
export type ModelPrice = typeof ModelPrice.Type

/** AI SDK provider options for one provider: passed as `providerOptions.<provider>` (T22). */
export const ProviderOptions = Schema.Record(Schema.String, Schema.Unknown)
export type ProviderOptions = typeof ProviderOptions.Type

/** A model under `provider.<id>.models`: limits, price and capabilities that add to or override the shipped catalogue. */
export const ModelConfig = Schema.Struct({
  context: Schema.optional(Schema.Number).annotate({ description: "The context window in tokens (unknown models: 128000)." }),
  output: Schema.optional(Schema.Number).annotate({ description: "The most output tokens per call (unknown models: 8192)." }),
  input: Schema.optional(Schema.Number).annotate({ description: "The most input tokens, where the model limits input apart from its context." }),
  name: Schema.optional(Schema.String).annotate({ description: "A display name." }),
  price: Schema.optional(ModelPrice).annotate({ description: "Dollars per million tokens, for the cost shown and traced." }),
  tools: Schema.optional(Schema.Boolean).annotate({ description: "Whether the model takes tool calls." }),
  reasoning: Schema.optional(Schema.Boolean).annotate({ description: "Whether the model reasons (thinks) before answering." }),
  images: Schema.optional(Schema.Boolean).annotate({ description: "Whether the model accepts images." }),
  /** The AI SDK provider options of every call to this model (under the provider's key, e.g. `{ "reasoningSummary": "auto" }`; T22). */
  options: Schema.optional(ProviderOptions).annotate({
    description: 'AI SDK provider options for every call to this model, without the provider key (e.g. { "reasoningSummary": "auto" }).'
  }),
  /** Named variants of the options (`--variant NAME`): added to or replacing the built-in `low`, `medium`, `high`, … */
  variants: Schema.optional(Schema.Record(Schema.String, ProviderOptions)).annotate({
    description: "Named sets of provider options (--variant NAME), added to or replacing the built-in low, medium, high, …"
  }),
  /** The variant used when none is asked for. */
  variant: Schema.optional(Schema.String).annotate({ description: "The variant used when none is asked for." })
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
  connect: Schema.optional(Seconds).annotate({ description: "Seconds from sending the request to the response headers (default 60; 0: no limit)." }),
  /** From the headers to the first bytes of the stream (default 180). */
  first_byte: Schema.optional(Seconds).annotate({ description: "Seconds from the headers to the first bytes of the stream (default 180; 0: no limit)." }),
  /** The longest gap between two chunks of the stream (default 120). */
  idle: Schema.optional(Seconds).annotate({ description: "The longest gap in seconds between two chunks of the stream (default 120; 0: no limit)." })
})
export type ProviderTimeoutConfig = typeof ProviderTimeoutConfig.Type

export const ProviderConfig = Schema.Struct({
  type: ProviderType.annotate({ description: "Which API the provider speaks: a built-in provider, or openai-compatible for any OpenAI-compatible server." }),
  baseURL: Schema.optional(Schema.String).annotate({ description: "The API's base URL, e.g. http://127.0.0.1:11434/v1 for Ollama." }),
  apiKey: Schema.optional(Schema.String).annotate({
    description: "The API key (default: the provider's environment variable, e.g. ANTHROPIC_API_KEY)."
  }),
  headers: Schema.optional(Schema.Record(Schema.String, Schema.String)).annotate({ description: "HTTP headers sent with every request." }),
  models: Schema.optional(Schema.Record(Schema.String, ModelConfig)).annotate({
    description: "Models by id: limits, prices, capabilities and options that add to or override the shipped catalogue."
  }),
  timeout: Schema.optional(ProviderTimeoutConfig).annotate({ description: "This provider's timeouts, over provider_timeout field by field." })
})
export type ProviderConfig = typeof ProviderConfig.Type

/** `"allow"` for everything, or per permission an action or a map of pattern → action (order kept). */
export const PermissionConfig = Schema.Union([Action, Schema.Record(Schema.String, Schema.Union([Action, Schema.Record(Schema.String, Action)]))]).annotate({
  description:
    'Permission rules: one action for everything, or per permission (bash, edit, read, external_directory, a tool id, …) an action or a map of pattern → action, e.g. { "bash": { "*": "ask", "git status *": "allow" } }.'
})
export type PermissionConfig = typeof PermissionConfig.Type

export const RetryConfig = Schema.Struct({
  attempts: Schema.optional(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 20 }))).annotate({
    description: "Attempts of a provider call on transient and rate-limit errors (1-20, default 5)."
  }),
  initial_delay_ms: Schema.optional(Schema.Number).annotate({ description: "The first wait between attempts, in ms (default 2000); it doubles each time." }),
  max_delay_ms: Schema.optional(Schema.Number).annotate({ description: "The longest wait between attempts, in ms (default 30000)." })
})

const PositiveInt = Schema.Int.check(Schema.isGreaterThan(0))

/** Limits and reducers for one tool's output; unset fields fall back to `tool_output`. */
export const ToolOutputLimits = Schema.Struct({
  max_lines: Schema.optional(PositiveInt).annotate({ description: "Lines of this tool's output the model sees." }),
  max_bytes: Schema.optional(PositiveInt).annotate({ description: "Bytes of this tool's output the model sees." }),
  direction: Schema.optional(Schema.Literals(["head", "tail", "head_tail"])).annotate({
    description: "Which part of a long output is kept: the start, the end, or both."
  }),
  reducers: Schema.optional(Schema.Boolean).annotate({ description: "Whether reducers compact this tool's known outputs." })
})

/** How tool output is cut for the model and how long spill files are kept. */
export const ToolOutputConfig = Schema.Struct({
  max_lines: Schema.optional(PositiveInt).annotate({ description: "Lines of a tool output the model sees (default 2000); the rest is in a spill file." }),
  max_bytes: Schema.optional(PositiveInt).annotate({ description: "Bytes of a tool output the model sees (default 51200); the rest is in a spill file." }),
  /** Whether reducers compact known outputs (test runs, builds, git) before truncation. */
  reducers: Schema.optional(Schema.Boolean).annotate({
    description: "Whether reducers compact known outputs (test runs, builds, git) before truncation (default true)."
  }),
  /** Spill files older than this many days are deleted. */
  retention_days: Schema.optional(Schema.Finite.check(Schema.isGreaterThan(0))).annotate({
    description: "Spill files older than this many days are deleted (default 7)."
  }),
  /** The cap of a streamed output's spill file, in bytes (default 256 MiB): past it the file keeps the start and the end. */
  spill_max_bytes: Schema.optional(Schema.Int.check(Schema.isGreaterThanOrEqualTo(65_536))).annotate({
    description: "The cap of a streamed output's spill file in bytes (default 268435456): past it the file keeps its start and its end."
  }),
  /** Per-tool overrides, by tool id (e.g. `"bash"`). */
  tools: Schema.optional(Schema.Record(Schema.String, ToolOutputLimits)).annotate({ description: 'Per-tool overrides by tool id (e.g. "bash").' })
})
export type ToolOutputConfig = typeof ToolOutputConfig.Type

/** Which file-editing tools the model is offered: by model family (`auto`), or forced for every model. */
export const EditToolSetting = Schema.Literals(["auto", "edit", "apply_patch"]).annotate({
  description: "Which file-editing tools are offered: auto (the default) gives GPT-family models apply_patch and the others edit and write."
})
export type EditToolSetting = typeof EditToolSetting.Type

/** When and how the context is compacted (SPEC §2 T7–T12). */
export const CompactionConfig = Schema.Struct({
  /** Compact when the context is about to overflow (default true). */
  auto: Schema.optional(Schema.Boolean).annotate({ description: "Compact when the context is about to overflow (default true)." }),
  /**
   * Tokens kept free for the model's answer (default: the model's output limit, at most a third of
   * its input limit or context, and at most 20_000 with a separate input limit). Must be below the
   * model's input limit (else its context): a larger reserve is a config error when a turn starts.
   */
  reserved: Schema.optional(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))).annotate({
    description: "Tokens kept free for the answer (default: the model's output limit, at most a third of its window); must be below the model's input limit."
  }),
  /** User turns kept verbatim after a compaction (default 2), within a quarter of the usable context; 0 keeps none. */
  tail_turns: Schema.optional(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))).annotate({
    description: "User turns kept verbatim after a compaction (default 2); 0 keeps none."
  }),
  /** Tools whose outputs are never pruned (default ["skill"]). */
  protected_tools: Schema.optional(Schema.Array(Schema.String)).annotate({ description: 'Tools whose outputs are never pruned (default ["skill"]).' }),
  /** Outputs over this many lines keep their first and last lines when pruned instead of being dropped (default 0: dropped). */
  prune_keep_lines: Schema.optional(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))).annotate({
    description: "A pruned output longer than twice this many lines keeps its first and last lines (default 0: cleared whole)."
  }),
  /** A file whose text replaces the summary template. */
  template: Schema.optional(Schema.String).annotate({ description: "A file (relative to the project) whose text replaces the built-in summary instructions." })
})
export type CompactionConfig = typeof CompactionConfig.Type

/** When a run of tool calls counts as a loop (SPEC §1 T6). */
export const DoomLoopConfig = Schema.Struct({
  /** Identical calls (tool + arguments) in one turn (default 3). */
  identical: Schema.optional(Schema.Int.check(Schema.isGreaterThanOrEqualTo(2))).annotate({
    description: "Identical calls (tool and arguments) in one turn that count as a loop (default 3)."
  }),
  /** Repeats of a cycle of calls such as A,B,A,B,A,B (default 3). */
  cycles: Schema.optional(Schema.Int.check(Schema.isGreaterThanOrEqualTo(2))).annotate({
    description: "Repeats of a cycle of 2-4 calls (A,B,A,B,A,B) that count as a loop (default 3)."
  }),
  /** The same call getting the same result this many times (default 3). */
  pairs: Schema.optional(Schema.Int.check(Schema.isGreaterThanOrEqualTo(2))).annotate({
    description: "The same call getting the same result this many times counts as a loop (default 3)."
  })
})
export type DoomLoopConfig = typeof DoomLoopConfig.Type

/** A host a sandboxed command may reach through reins's proxy: a name, `*.suffix`, `*`, an IP literal, or `@registries`. */
export const SandboxHost = Schema.String.check(
  Schema.isPattern(/^(@registries|\*|(\*\.)?[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*\.?|[0-9.]+|\[?[0-9A-Fa-f:.]+\]?)$/u, {
    message: 'Expected a host name ("registry.npmjs.org"), "*.suffix", an IP address or "@registries" (no scheme, port or path)'
  })
)

/**
 * `sandbox.network`: `mode` `none` (no network; the default unless `allow` is given), `allow` (HTTP and
 * HTTPS through reins's proxy to the hosts in `allow`, by default the package registries, `@registries`)
 * or `all` (the host's network, unfiltered).
 */
export const SandboxNetworkConfig = Schema.Struct({
  mode: Schema.optional(Schema.Literals(["none", "allow", "all"])).annotate({
    description: "none (the default unless allow is given): no network; allow: HTTP(S) through reins's proxy to the allow hosts; all: the whole network."
  }),
  allow: Schema.optional(Schema.Array(SandboxHost)).annotate({
    description: 'Hosts commands may reach through the proxy: names, "*.suffix", IP addresses, "@registries" (the package registries; the default).'
  })
})

/**
 * The OS sandbox every command the agent runs goes through (bubblewrap on Linux): `auto` (the default)
 * uses it where it can and says once where it cannot, `required` refuses to run commands without it,
 * `off` runs them as they are. Commands may write the project, /tmp and package caches; `writable`
 * adds directories, `deny_read` hides more paths, `network` says what they reach (SandboxNetworkConfig);
 * `env.pass` names secret-looking variables that still reach commands (`NAME` or `PREFIX_*`).
 */
export const SandboxConfig = Schema.Struct({
  mode: Schema.optional(Schema.Literals(["auto", "required", "off"])).annotate({
    description: "auto (the default): sandbox commands where the OS allows, saying once where not; required: refuse to run without it; off: no sandbox."
  }),
  network: Schema.optional(SandboxNetworkConfig).annotate({ description: "What sandboxed commands may reach on the network (default nothing)." }),
  writable: Schema.optional(Schema.Array(Schema.String)).annotate({
    description: "More directories commands may write, besides the project, /tmp and package caches."
  }),
  deny_read: Schema.optional(Schema.Array(Schema.String)).annotate({
    description: "More paths hidden from commands, besides ~/.ssh, credential files and the like."
  }),
  env: Schema.optional(
    Schema.Struct({
      pass: Schema.optional(Schema.Array(Schema.String)).annotate({
        description: "Secret-looking variables that still reach commands: NAME or PREFIX_*."
      })
    })
  ).annotate({ description: "The environment of sandboxed commands." })
})
export type SandboxConfig = typeof SandboxConfig.Type

/** Where an agent may run: as the session's own agent, as a sub-agent of the `task` tool, or both. */
export const AgentMode = Schema.Literals(["primary", "subagent", "all"])
export type AgentMode = typeof AgentMode.Type

/** The tools an agent is offered: a list of tool ids (an allow list), or tool id (wildcards) → offered or not. */
export const AgentTools = Schema.Union([Schema.Array(Schema.String), Schema.Record(Schema.String, Schema.Boolean)])
export type AgentTools = typeof AgentTools.Type

/** One agent, under `agent.<name>` in reins.json or as the front matter of `.reins/agents/<name>.md`. */
const ModelRef = Schema.String.check(Schema.isPattern(/^[^/]+\/.+$/u, { message: 'Expected "<provider>/<model>"' }))

/** `cluster`: `reins serve` joins the cluster of runners on its PostgreSQL database (`--runner` overrides `runner`). */
export const ClusterConfig = Schema.Struct({
  runner: Schema.optional(Schema.String).annotate({
    description: "The HOST:PORT the other runners reach this one at (an address of this machine, a free port); the same database on every runner."
  })
})

export const AgentConfig = Schema.Struct({
  description: Schema.optional(Schema.String).annotate({ description: "What the agent is for; the model reads it when picking a sub-agent." }),
  /** `"<provider>/<model>"`; default the run's model. */
  model: Schema.optional(ModelRef).annotate({ description: '"<provider>/<model>" (default: the run\'s model).' }),
  /** The system prompt header (the text, or a file path relative to the project); a Markdown agent's body. */
  prompt: Schema.optional(Schema.String).annotate({ description: "The system prompt header: the text, or a file path relative to the project." }),
  tools: Schema.optional(AgentTools).annotate({
    description: "The tools offered: a list of tool ids, or tool id (wildcards allowed) → true/false (default: all)."
  }),
  /** Rules over the config's `permission`; its denies hold even against "always" answers. */
  permission: Schema.optional(PermissionConfig).annotate({
    description: 'Rules over the config\'s permission; their denies hold even against "always" answers.'
  }),
  steps: Schema.optional(Schema.Int.check(Schema.isGreaterThan(0))).annotate({ description: "The most steps (model calls) in one turn." }),
  mode: Schema.optional(AgentMode).annotate({
    description: "primary (for --agent), subagent (for the task tool) or all (default)."
  }),
  variant: Schema.optional(Schema.String).annotate({ description: "The model variant this agent runs with." }),
  /** `true` removes the agent (a built-in too). */
  disable: Schema.optional(Schema.Boolean).annotate({ description: "true removes the agent, a built-in one too." })
})
export type AgentConfig = typeof AgentConfig.Type

/** `agent` in reins.json: the default agent's `steps` and `prompt` (kept from before agents had names), and named agents. */
export const AgentsConfig = Schema.StructWithRest(
  Schema.Struct({
    steps: Schema.optional(Schema.Int.check(Schema.isGreaterThan(0))).annotate({ description: "The default agent's step limit per turn." }),
    prompt: Schema.optional(Schema.String).annotate({
      description: "Replaces the model family's system prompt header for every model: the text, or a file path relative to the project."
    })
  }),
  [Schema.Record(Schema.String.check(Schema.isPattern(/^(?!(steps|prompt)$)/u)), AgentConfig)]
)
export type AgentsConfig = typeof AgentsConfig.Type

/** A command run around tool calls (config `hooks`): `$FILE`, `$TOOL` and `$SESSION` are replaced, shell-quoted. */
export const CommandHookConfig = Schema.Struct({
  /** Tool ids it applies to, a regular expression matched against the whole id (`edit|write`); default every tool. */
  match: Schema.optional(Schema.String).annotate({
    description: "A regular expression matched against the whole tool id (edit|write); default every tool."
  }),
  command: Schema.String.annotate({ description: "Run with sh in the project directory; FILE, TOOL and SESSION are in its environment." }),
  /** Milliseconds before it is killed (default 10000). */
  timeout: Schema.optional(PositiveInt).annotate({ description: "Milliseconds before it is killed (default 10000)." })
})
export type CommandHookConfig = typeof CommandHookConfig.Type

/** Command hooks by event: `tool.before` (a non-zero exit denies the call, its output the reason), `tool.after`. */
export const HooksConfig = Schema.Struct({
  "tool.before": Schema.optional(Schema.Array(CommandHookConfig)).annotate({
    description: "Run before a tool call; a non-zero exit denies the call, with the command's output as the reason."
  }),
  "tool.after": Schema.optional(Schema.Array(CommandHookConfig)).annotate({ description: "Run after a tool call (formatters, checks)." })
})
export type HooksConfig = typeof HooksConfig.Type

/** Spend caps in dollars, from the catalogue's prices (or `price` in config); a model with no price costs nothing. */
export const BudgetConfig = Schema.Struct({
  session: Schema.optional(Dollars.check(Schema.isGreaterThan(0))).annotate({
    description: "The most a session may spend in all, its sub-agents included (--max-cost sets it for a run)."
  }),
  turn: Schema.optional(Dollars.check(Schema.isGreaterThan(0))).annotate({ description: "The most one turn may spend, its sub-agents included." }),
  subagent: Schema.optional(Dollars.check(Schema.isGreaterThan(0))).annotate({ description: "The most one sub-agent (one task call) may spend." })
})
export type BudgetConfig = typeof BudgetConfig.Type

/** The whole of `reins.json`. Unknown keys are reported, so typos do not pass silently. */
export const Config = Schema.Struct({
  $schema: Schema.optional(Schema.String).annotate({ description: "The JSON Schema of this file, for editors; reins ignores it." }),
  model: Schema.optional(ModelRef).annotate({ description: 'The model: "<provider>/<model>", e.g. "anthropic/claude-sonnet-4-5".' }),
  /** The variant of the model's options (`low`, `medium`, `high`, … or one under `provider.<id>.models.<model>.variants`); `--variant` wins, then the model's own `variant` (T22). */
  variant: Schema.optional(Schema.String).annotate({
    description: "How hard a reasoning model thinks: low, medium, high, … or a variant of the model's own; --variant wins, then the model's variant."
  }),
  provider: Schema.optional(Schema.Record(Schema.String, ProviderConfig)).annotate({
    description: "Providers by id: built-in ones to change, or your own (any OpenAI-compatible server)."
  }),
  permission: Schema.optional(PermissionConfig),
  /**
   * The default agent's step limit and `prompt` (a file path relative to the project, or the text)
   * replacing the model family's system prompt header; and named agents (`agent.<name>`).
   */
  agent: Schema.optional(AgentsConfig).annotate({
    description: "The default agent's steps and prompt, and named agents (agent.<name>)."
  }),
  retry: Schema.optional(RetryConfig).annotate({ description: "How provider calls are retried on transient and rate-limit errors." }),
  /** Timeouts for every provider; `provider.<id>.timeout` overrides them field by field. */
  provider_timeout: Schema.optional(ProviderTimeoutConfig).annotate({
    description: "Seconds a provider may stay silent, for every provider; provider.<id>.timeout overrides them field by field."
  }),
  instructions: Schema.optional(Schema.Array(Schema.String)).annotate({
    description: "More instruction files for the system prompt besides AGENTS.md: paths or globs relative to the project root."
  }),
  tool_output: Schema.optional(ToolOutputConfig).annotate({ description: "What the model sees of tool output: limits, reducers, spill files." }),
  /** Where "always" replies are kept: for the session only (the default) or for the project, across runs. */
  permission_persist: Schema.optional(Schema.Literals(["session", "project"])).annotate({
    description: 'Where "always" replies are kept: for the session (the default) or for the project, across runs.'
  }),
  /** How rules combine: the last matching rule wins (the default), or any matching deny wins. */
  permission_mode: Schema.optional(Schema.Literals(["last-match", "deny-wins"])).annotate({
    description: "How rules combine: the last matching rule wins (the default), or any matching deny wins."
  }),
  /** Seconds a question waits for an answer before the non-interactive policy decides. */
  permission_timeout: Schema.optional(Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0))).annotate({
    description: "Seconds a permission question waits for an answer before the non-interactive policy decides."
  }),
  compaction: Schema.optional(CompactionConfig).annotate({ description: "When and how a long session's context is compacted." }),
  /** Commands run before or after tool calls (formatters, checks), with the permission rules of bash. */
  hooks: Schema.optional(HooksConfig).annotate({
    description: "Commands run before or after tool calls (formatters, checks), under the permission rules of bash."
  }),
  doom_loop: Schema.optional(DoomLoopConfig).annotate({ description: "When repeated tool calls count as a loop (a doom_loop permission question)." }),
  /**
   * `auto` (the default) offers GPT-family models (`gpt-`, `codex` in the id) `apply_patch` and
   * the others `edit` and `write`; `edit` or `apply_patch` offers that choice to every model.
   */
  edit_tool: Schema.optional(EditToolSetting),
  /** MCP servers by name (`local`: a command over stdio; `remote`: a URL); their tools are offered as `<name>_<tool>`. */
  mcp: Schema.optional(McpConfig).annotate({
    description: "MCP servers by name (local: a command over stdio; remote: a URL); their tools are offered as <name>_<tool>."
  }),
  /** Spend caps, checked before each model call; a config file can only lower them (the smallest wins), --max-cost sets the session's. */
  budget: Schema.optional(BudgetConfig).annotate({
    description: "Spend caps in dollars (session, turn, subagent), checked before each model call; every config file can only lower them."
  }),
  /** Language servers asked for errors after each edit (`false`: none); built-in ones changed, or servers of your own. */
  lsp: Schema.optional(LspConfig).annotate({
    description:
      "Language servers asked for errors after each edit: false switches them off; by language (typescript, python, go, rust, clangd, or your own) a command, extensions, disabled, timeouts."
  }),
  sandbox: Schema.optional(SandboxConfig).annotate({ description: "The OS sandbox that commands and command hooks run in." }),
  cluster: Schema.optional(ClusterConfig).annotate({
    description: "reins serve as a runner of a cluster on its PostgreSQL database (as --runner): sessions spread over every runner."
  })
})
export type Config = typeof Config.Type

export const emptyConfig: Config = {}
