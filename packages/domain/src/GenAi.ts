import { Context } from "effect"
import {
  ATTR_ERROR_TYPE,
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_INPUT_MESSAGES,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_OUTPUT_MESSAGES,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MAX_TOKENS,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_REQUEST_TEMPERATURE,
  ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
  ATTR_GEN_AI_RESPONSE_ID,
  ATTR_GEN_AI_RESPONSE_MODEL,
  ATTR_GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK,
  ATTR_GEN_AI_SYSTEM_INSTRUCTIONS,
  ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_CALL_RESULT,
  ATTR_GEN_AI_TOOL_DESCRIPTION,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_TOOL_TYPE,
  ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  ATTR_GEN_AI_USAGE_REASONING_OUTPUT_TOKENS,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  GEN_AI_OPERATION_NAME_VALUE_CHAT,
  GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
  GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
  GEN_AI_PROVIDER_NAME_VALUE_ANTHROPIC,
  GEN_AI_PROVIDER_NAME_VALUE_AWS_BEDROCK,
  GEN_AI_PROVIDER_NAME_VALUE_AZURE_AI_OPENAI,
  GEN_AI_PROVIDER_NAME_VALUE_DEEPSEEK,
  GEN_AI_PROVIDER_NAME_VALUE_GCP_GEMINI,
  GEN_AI_PROVIDER_NAME_VALUE_GROQ,
  GEN_AI_PROVIDER_NAME_VALUE_MISTRAL_AI,
  GEN_AI_PROVIDER_NAME_VALUE_OPENAI,
  GEN_AI_PROVIDER_NAME_VALUE_X_AI
} from "@opentelemetry/semantic-conventions/incubating"
import type { ProviderType } from "./Config.ts"
import type { Usage } from "./Message.ts"

/**
 * The OpenTelemetry GenAI semantic conventions as reins uses them: span names, attribute keys
 * (the `@opentelemetry/semantic-conventions` constants) and well-known values. Spans are
 * `invoke_agent {agent}` per turn, `chat {model}` per provider call attempt and
 * `execute_tool {tool}` per tool call; reins's own figures are `reins.*` attributes.
 */
export const GenAiAttr = {
  operation: ATTR_GEN_AI_OPERATION_NAME,
  provider: ATTR_GEN_AI_PROVIDER_NAME,
  agentName: ATTR_GEN_AI_AGENT_NAME,
  conversationId: ATTR_GEN_AI_CONVERSATION_ID,
  requestModel: ATTR_GEN_AI_REQUEST_MODEL,
  requestMaxTokens: ATTR_GEN_AI_REQUEST_MAX_TOKENS,
  requestTemperature: ATTR_GEN_AI_REQUEST_TEMPERATURE,
  responseModel: ATTR_GEN_AI_RESPONSE_MODEL,
  responseId: ATTR_GEN_AI_RESPONSE_ID,
  finishReasons: ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
  timeToFirstChunk: ATTR_GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK,
  inputTokens: ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  outputTokens: ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  cacheReadTokens: ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
  cacheCreationTokens: ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,
  reasoningTokens: ATTR_GEN_AI_USAGE_REASONING_OUTPUT_TOKENS,
  toolName: ATTR_GEN_AI_TOOL_NAME,
  toolCallId: ATTR_GEN_AI_TOOL_CALL_ID,
  toolType: ATTR_GEN_AI_TOOL_TYPE,
  toolDescription: ATTR_GEN_AI_TOOL_DESCRIPTION,
  toolArguments: ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  toolResult: ATTR_GEN_AI_TOOL_CALL_RESULT,
  systemInstructions: ATTR_GEN_AI_SYSTEM_INSTRUCTIONS,
  inputMessages: ATTR_GEN_AI_INPUT_MESSAGES,
  outputMessages: ATTR_GEN_AI_OUTPUT_MESSAGES,
  errorType: ATTR_ERROR_TYPE,
  serverAddress: ATTR_SERVER_ADDRESS,
  serverPort: ATTR_SERVER_PORT
} as const

export const GenAiOperation = {
  invokeAgent: GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
  chat: GEN_AI_OPERATION_NAME_VALUE_CHAT,
  executeTool: GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL
} as const

/** The agent every turn runs today. */
export const DEFAULT_AGENT = "build"

export const agentSpanName = (agent: string) => `${GenAiOperation.invokeAgent} ${agent}`
export const chatSpanName = (model: string) => `${GenAiOperation.chat} ${model}`
export const toolSpanName = (tool: string) => `${GenAiOperation.executeTool} ${tool}`
/** The root span of one `reins run` (session creation and its turn in one trace). */
export const RUN_SPAN = "reins run"

/**
 * `gen_ai.provider.name` for a provider type: the conventions' well-known value; an
 * OpenAI-compatible endpoint is `openai` (the conventions name the client's protocol when the
 * product behind it is unknown). The user's own provider id goes in `reins.provider.id`.
 */
export const providerName = (type: ProviderType | undefined): string => {
  switch (type) {
    case "anthropic":
      return GEN_AI_PROVIDER_NAME_VALUE_ANTHROPIC
    case "openai":
    case "openai-compatible":
      return GEN_AI_PROVIDER_NAME_VALUE_OPENAI
    case "google":
      return GEN_AI_PROVIDER_NAME_VALUE_GCP_GEMINI
    case "amazon-bedrock":
      return GEN_AI_PROVIDER_NAME_VALUE_AWS_BEDROCK
    case "azure":
      return GEN_AI_PROVIDER_NAME_VALUE_AZURE_AI_OPENAI
    case "mistral":
      return GEN_AI_PROVIDER_NAME_VALUE_MISTRAL_AI
    case "groq":
      return GEN_AI_PROVIDER_NAME_VALUE_GROQ
    case "deepseek":
      return GEN_AI_PROVIDER_NAME_VALUE_DEEPSEEK
    case "xai":
      return GEN_AI_PROVIDER_NAME_VALUE_X_AI
    // not in the conventions' list: its own lowercase name, as they ask for other systems
    case "openrouter":
      return "openrouter"
    default:
      return "_OTHER"
  }
}

/** The `gen_ai.usage.*` counts of reins usage: input counts cached tokens too, as the conventions define it. */
export const usageAttributes = (usage: Usage): Record<string, number> => ({
  [GenAiAttr.inputTokens]: usage.input + usage.cacheRead + usage.cacheWrite,
  [GenAiAttr.outputTokens]: usage.output,
  [GenAiAttr.cacheReadTokens]: usage.cacheRead,
  [GenAiAttr.cacheCreationTokens]: usage.cacheWrite,
  [GenAiAttr.reasoningTokens]: usage.reasoning
})

/** `server.address` / `server.port` of a request URL (the port always, its default when the URL has none). */
export const serverAttributes = (url: string): Record<string, string | number> => {
  const parsed = URL.parse(url)
  if (!parsed?.hostname) return {}
  const port = parsed.port ? Number(parsed.port) : parsed.protocol === "http:" ? 80 : 443
  return { [GenAiAttr.serverAddress]: parsed.hostname.replace(/^\[|\]$/g, ""), [GenAiAttr.serverPort]: port }
}

export interface GenAiTracing {
  /**
   * Record prompts, answers, tool arguments and results on the spans
   * (`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`); off by default: they hold
   * whatever the user and the tools saw.
   */
  readonly captureContent: boolean
  /** Let the AI SDK emit its own `ai.*` spans (`experimental_telemetry`), nested under `chat`. */
  readonly aiSdkSpans: boolean
}

export const GenAiTracing = Context.Reference<GenAiTracing>("reins/domain/GenAiTracing", {
  defaultValue: () => ({ captureContent: false, aiSdkSpans: false })
})

/** `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` as the instrumentations read it. */
export const captureContentFromEnv = (env: Readonly<Record<string, string | undefined>>) =>
  (env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT ?? "").trim().toLowerCase() === "true"

/** A value as a span attribute: JSON, as the conventions ask for structured content on spans. */
export const jsonAttribute = (value: unknown): string => (typeof value === "string" ? value : (JSON.stringify(value) ?? "null"))
