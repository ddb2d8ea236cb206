// The OTLP receiver of bench/tracing.ts in a process of its own, as a real collector would be (its
// decoding must not slow the scripted model server in the bench's process). Prints its URL; each
// line on stdin asks for what arrived since the last one, as one JSON line.
import { startOtlpReceiver } from "@reins/testkit"

const receiver = await startOtlpReceiver()
console.log(receiver.url)
for await (const _ of console) {
  console.log(
    JSON.stringify({
      requests: receiver.requests.length,
      chats: receiver.spans.filter((s) => s.name.startsWith("chat ")).length,
      tools: receiver.spans.filter((s) => s.name === "execute_tool bash").length,
      tokenUsage: receiver.dataPoints.some((d) => d.metric === "gen_ai.client.token.usage"),
      errors: receiver.errors
    })
  )
  receiver.clear()
}
