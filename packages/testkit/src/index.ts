export {
  SCRIPTED_MODEL_ID,
  splitPieces,
  startScriptedServer,
  type ScriptedRequest,
  type ScriptedServer,
  type ScriptedServerOptions,
  type ScriptedStep,
  type ScriptedToolCall
} from "./ScriptedServer.ts"
export {
  ANTHROPIC_MODEL_ID,
  startAnthropicServer,
  thinkingSignature,
  type AnthropicRequest,
  type AnthropicServer,
  type AnthropicServerOptions
} from "./AnthropicServer.ts"
export { encryptedReasoning } from "./ResponsesStream.ts"
export { approxTokens, LOOKBACK, PromptCache, requestBlocks, type CacheUsage } from "./PromptCache.ts"
export { startOtlpReceiver, type OtlpReceiver, type OtlpReceiverMode, type OtlpRequest } from "./OtlpReceiver.ts"
export {
  decodeMetrics,
  decodeTraces,
  type AttributeValue,
  type Attributes,
  type MetricType,
  type ReceivedDataPoint,
  type ReceivedSpan,
  type SpanKind,
  type StatusCode
} from "./OtlpDecode.ts"
export { it, runLive, runTest, type TestBody } from "./EffectTest.ts"
export { eventually, HANG_MS, waitFor, type WaitOptions } from "./Wait.ts"
export { treeSnapshot } from "./Tree.ts"
