/**
 * A scripted step as an OpenAI Responses API event stream (`POST /v1/responses`, what
 * `@ai-sdk/openai` calls by default): reasoning as a reasoning item (its summary, and its encrypted
 * content when asked for), text as one message item, each tool call as a function-call item, then
 * `response.completed` with usage. Served by the scripted OpenAI server.
 */
import { splitPieces, type ScriptedStep } from "./ScriptedServer.ts"

type ContentStep = Exclude<ScriptedStep, { error: unknown } | { hang: true } | { stall: unknown } | { raw: unknown }>

const randomId = () => crypto.randomUUID().replaceAll("-", "").slice(0, 24)
const approxTokens = (s: string) => Math.ceil(s.length / 4)

/** The encrypted content the server gives a reasoning item with this summary (so a test can check it is replayed). */
export const encryptedReasoning = (summary: string) => `enc_${Bun.hash(summary).toString(36)}`

const requestedIncludes = (rawBody: string): ReadonlyArray<string> => {
  try {
    const include = (JSON.parse(rawBody) as { include?: unknown }).include
    return Array.isArray(include) ? include.filter((i): i is string => typeof i === "string") : []
  } catch {
    return []
  }
}

/** The SSE frames answering one Responses request with this step (a step's `reasoning` is a reasoning item with that summary). */
export const responsesFrames = (step: ContentStep, model: string, rawBody: string): Array<string> => {
  const id = `resp_${randomId()}`
  const created_at = Math.floor(Date.now() / 1000)
  const out: Array<string> = []
  const frame = (type: string, data: Record<string, unknown>) =>
    out.push(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: out.length, ...data })}\n\n`)
  frame("response.created", { response: { id, object: "response", created_at, model, status: "in_progress", output: [] } })
  let index = 0
  if (step.reasoning) {
    // a reasoning item with its summary; its encrypted content only when the request asked for it (`include`)
    const include = requestedIncludes(rawBody)
    const item = { type: "reasoning", id: `rs_${randomId()}`, summary: [] as Array<unknown> }
    const encrypted = include.includes("reasoning.encrypted_content") ? { encrypted_content: encryptedReasoning(step.reasoning) } : {}
    frame("response.output_item.added", { output_index: index, item })
    frame("response.reasoning_summary_part.added", { item_id: item.id, output_index: index, summary_index: 0, part: { type: "summary_text", text: "" } })
    for (const piece of splitPieces(step.reasoning, 4))
      frame("response.reasoning_summary_text.delta", { item_id: item.id, output_index: index, summary_index: 0, delta: piece })
    frame("response.reasoning_summary_text.done", { item_id: item.id, output_index: index, summary_index: 0, text: step.reasoning })
    frame("response.reasoning_summary_part.done", {
      item_id: item.id,
      output_index: index,
      summary_index: 0,
      part: { type: "summary_text", text: step.reasoning }
    })
    frame("response.output_item.done", { output_index: index, item: { ...item, summary: [{ type: "summary_text", text: step.reasoning }], ...encrypted } })
    index++
  }
  if (step.text) {
    const item = { type: "message", id: `msg_${randomId()}`, role: "assistant", status: "in_progress", content: [] }
    frame("response.output_item.added", { output_index: index, item })
    for (const piece of splitPieces(step.text, step.textChunks ?? 6))
      frame("response.output_text.delta", { item_id: item.id, output_index: index, content_index: 0, delta: piece })
    frame("response.output_item.done", {
      output_index: index,
      item: { ...item, status: "completed", content: [{ type: "output_text", text: step.text, annotations: [] }] }
    })
    index++
  }
  for (const call of step.toolCalls ?? []) {
    const args = typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments)
    const item = {
      type: "function_call",
      id: `fc_${randomId()}`,
      call_id: call.id ?? `call_${randomId()}`,
      name: call.name,
      arguments: "",
      status: "in_progress"
    }
    frame("response.output_item.added", { output_index: index, item })
    for (const piece of splitPieces(args, 3)) frame("response.function_call_arguments.delta", { item_id: item.id, output_index: index, delta: piece })
    frame("response.output_item.done", { output_index: index, item: { ...item, arguments: args, status: "completed" } })
    index++
  }
  const output = (step.reasoning ?? "") + (step.text ?? "") + (step.toolCalls ?? []).map((c) => c.name + JSON.stringify(c.arguments)).join("")
  const usage = {
    input_tokens: step.usage?.prompt_tokens ?? approxTokens(rawBody),
    input_tokens_details: { cached_tokens: step.usage?.cached_tokens ?? 0 },
    output_tokens: step.usage?.completion_tokens ?? approxTokens(output),
    output_tokens_details: { reasoning_tokens: approxTokens(step.reasoning ?? "") }
  }
  frame("response.completed", { response: { id, object: "response", created_at, model, status: "completed", usage } })
  return out
}
