// A local model server that is down: the call fails on the first refused connection, naming the URL
// and what to do, instead of retrying for half a minute. Remote hosts keep their retries.
import { describe, expect, test } from "bun:test"
import { Effect, Stream } from "effect"
import * as net from "node:net"
import type { ModelEvent } from "../src/ModelEvent.ts"
import { Provider, type ProviderSettings } from "../src/Provider.ts"
import { classify, isConnectionRefused, isLocalURL, ProviderError, unreachableError } from "../src/ProviderError.ts"
import { hi, withProvider } from "./support.ts"

/** A loopback port nothing listens on: bound, then closed. */
const closedPort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })

const streamTo = async (baseURL: string) => {
  const settings: ProviderSettings = {
    providers: { ollama: { type: "openai-compatible", baseURL, models: { m: { context: 16_000, output: 1_000 } } } },
    env: {}
  }
  const seen: Array<ModelEvent> = []
  const program = Effect.flatMap(Provider, (provider) =>
    provider.stream({ model: { providerID: "ollama", modelID: "m" }, system: ["You are a test."], messages: hi, tools: [] }).pipe(
      Stream.tap((event) => Effect.sync(() => seen.push(event))),
      Stream.runDrain
    )
  )
  // the default retry policy: 5 attempts, 2 s doubling — what made a down server cost 30 s
  const result = await Effect.runPromise(Effect.result(program).pipe(withProvider(settings)))
  return { result, seen }
}

describe("a local provider that refuses the connection", () => {
  test("fails on the first attempt (no retry) with the URL and what to do", async () => {
    const url = `http://127.0.0.1:${await closedPort()}/v1`
    const { result, seen } = await streamTo(url)
    expect(seen.filter((e) => e.type === "retry")).toEqual([])
    if (result._tag !== "Failure") throw new Error("expected a failure")
    expect(result.failure).toBeInstanceOf(ProviderError)
    expect(result.failure.reason).toBe("unreachable")
    expect(result.failure.retryable).toBe(false)
    expect(result.failure.message).toBe(
      `could not connect to ${url} (connection refused): is the model server running? Start it, or change provider.ollama.baseURL in reins.json`
    )
  })

  test("localhost counts as local too", async () => {
    const url = `http://localhost:${await closedPort()}/v1`
    const { result, seen } = await streamTo(url)
    expect(seen.filter((e) => e.type === "retry")).toEqual([])
    expect(result._tag === "Failure" && result.failure.reason).toBe("unreachable")
  })
})

describe("what counts as local and refused", () => {
  test("loopback names and addresses are local; other hosts, private ranges included, are not", () => {
    for (const url of [
      "http://localhost:11434",
      "http://127.0.0.1:1234/v1",
      "http://127.1.2.3",
      "http://[::1]:8080/v1",
      "http://app.localhost",
      "http://0.0.0.0:8080"
    ]) {
      expect([url, isLocalURL(url)]).toEqual([url, true])
    }
    for (const url of ["https://api.openai.com/v1", "http://192.168.1.10:11434", "http://10.0.0.2", "http://localhost.example.com", "not a url"]) {
      expect([url, isLocalURL(url)]).toEqual([url, false])
    }
  })

  test("a refusal is found in the cause chain; a reset is not one", () => {
    const refused = Object.assign(new TypeError("ECONNREFUSED: Unable to connect. Is the computer able to access the url?"), { code: "ECONNREFUSED" })
    expect(isConnectionRefused(new Error("Cannot connect to API", { cause: refused }))).toBe(true)
    expect(isConnectionRefused(Object.assign(new Error("x"), { code: "ConnectionRefused" }))).toBe(true)
    expect(isConnectionRefused(Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }))).toBe(false)
  })

  test("a refused remote host stays transient (retried); the well-known local ports name their server", () => {
    expect(classify(new TypeError("ECONNREFUSED: Unable to connect"), 0).reason).toBe("transient")
    expect(unreachableError("http://localhost:11434", "ollama").message).toContain("is Ollama running?")
    expect(unreachableError("http://127.0.0.1:1234/v1", "lmstudio").message).toContain("is LM Studio running?")
  })
})
