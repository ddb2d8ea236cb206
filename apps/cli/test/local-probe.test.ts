// The first-run setup asks whatever listens on Ollama's, LM Studio's and llama.cpp's ports, and any local user can
// listen there. Its answer is bounded (size, time, count) and the model names it gives are shown in the picker and
// written to reins.json, so a name with terminal escapes or a huge one is dropped; a real server's list is kept.
import { afterAll, describe, expect, test } from "bun:test"
import { findLocalServers } from "../src/onboard/LocalServers.ts"

type Answer = (request: Request) => Response | Promise<Response>
const servers: Array<ReturnType<typeof Bun.serve>> = []
afterAll(() => {
  for (const s of servers) s.stop(true)
})
const serve = (answer: Answer) => {
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: answer })
  servers.push(server)
  return `127.0.0.1:${server.port}`
}
const ollama =
  (names: ReadonlyArray<string>): Answer =>
  () =>
    Response.json({ models: names.map((name) => ({ name })) })
const found = async (answer: Answer) => {
  const start = performance.now()
  const list = await findLocalServers({ REINS_LOCAL_PROBE: `ollama=${serve(answer)}` })
  return { models: list[0]?.models, ms: performance.now() - start }
}

describe("local server probe against a hostile listener", () => {
  const cases: ReadonlyArray<{ readonly name: string; readonly answer: Answer; readonly models: ReadonlyArray<string> | undefined }> = [
    { name: "escape sequences in names", answer: ollama(["ok:7b", "x\u001b]0;PWNED\u0007", "\u001b[2J", "a\u009b31m", "rtl\u202eevil"]), models: ["ok:7b"] },
    { name: "a 10,000-character name", answer: ollama(["ok", "m".repeat(10_000)]), models: ["ok"] },
    {
      name: "50,000 names (200 kept)",
      answer: ollama(Array.from({ length: 50_000 }, (_, i) => `m${i}`)),
      models: Array.from({ length: 200 }, (_, i) => `m${i}`)
    },
    { name: "__proto__ as a name", answer: ollama(["__proto__", "llama3"]), models: ["llama3"] },
    { name: "a 5 MB body", answer: () => new Response(`{"models":[{"name":"a"}],"pad":"${"x".repeat(5 << 20)}"}`), models: undefined },
    { name: "a redirect elsewhere", answer: () => Response.redirect("http://127.0.0.1:9/api/tags", 302), models: undefined },
    {
      name: "headers, then a body that never ends",
      answer: () =>
        new Response(
          new ReadableStream({
            start: (c) => c.enqueue(new TextEncoder().encode('{"models": [')),
            pull: () => new Promise(() => {})
          })
        ),
      models: undefined
    },
    // ordinary servers: kept as they are
    {
      name: "an ordinary Ollama list",
      answer: ollama(["llama3.1:8b", "qwen2.5-coder:7b", "hf.co/org/Model-GGUF:Q4_K_M"]),
      models: ["llama3.1:8b", "qwen2.5-coder:7b", "hf.co/org/Model-GGUF:Q4_K_M"]
    },
    { name: "names with unicode letters", answer: ollama(["modèle-日本"]), models: ["modèle-日本"] }
  ]
  for (const c of cases) {
    test(c.name, async () => {
      const { models, ms } = await found(c.answer)
      expect(models).toEqual(c.models as Array<string> | undefined)
      // the probe's own timeout (800 ms) bounds it; generous for a loaded machine
      expect(ms).toBeLessThan(15_000)
    })
  }
})
