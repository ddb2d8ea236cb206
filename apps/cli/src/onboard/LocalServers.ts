// Model servers on this machine that the first-run setup offers: Ollama, LM Studio and llama.cpp on their default
// loopback ports, asked in parallel with a short timeout (a closed port answers at once). Nothing else is contacted.

/** A local server that answered, with the models it serves. */
export interface LocalServer {
  /** The provider id it is configured as (`ollama`, `lmstudio`, `llamacpp`). */
  readonly id: string
  readonly name: string
  /** The OpenAI-compatible endpoint reins talks to. */
  readonly baseURL: string
  readonly models: ReadonlyArray<string>
}

interface Probe {
  readonly id: string
  readonly name: string
  /** `host:port` */
  readonly address: string
  /** Ollama lists its models at /api/tags; the others at the OpenAI-compatible /v1/models. */
  readonly kind: "ollama" | "openai"
}

const KNOWN: ReadonlyArray<Probe> = [
  { id: "ollama", name: "Ollama", address: "127.0.0.1:11434", kind: "ollama" },
  { id: "lmstudio", name: "LM Studio", address: "127.0.0.1:1234", kind: "openai" },
  { id: "llamacpp", name: "llama.cpp", address: "127.0.0.1:8080", kind: "openai" }
]

/**
 * The servers to ask. `REINS_LOCAL_PROBE` (a test hook) replaces the default ports: `ollama=127.0.0.1:5000,lmstudio=…`
 * asks only those, and an empty value asks none.
 */
export const probesFrom = (env: Readonly<Record<string, string | undefined>>): ReadonlyArray<Probe> => {
  const spec = env.REINS_LOCAL_PROBE
  if (spec === undefined) return KNOWN
  return spec
    .split(",")
    .map((entry) => entry.trim().split("="))
    .flatMap(([id, address]) => {
      const known = KNOWN.find((k) => k.id === id)
      return known !== undefined && address ? [{ ...known, address }] : []
    })
}

const PROBE_TIMEOUT_MS = 800
/** Whatever listens on these ports (any local user's process) is not trusted: its answer is bounded and its names checked. */
const MAX_BODY_BYTES = 1 << 20
const MAX_MODELS = 200
/** A model id as the picker draws it and reins.json keeps it: no control characters (a terminal's escapes), not huge. */
const MODEL_ID = /^[^\p{Cc}\p{Cf}\p{Zl}\p{Zp}]{1,200}$/u

const modelsOf = (kind: Probe["kind"], body: unknown): ReadonlyArray<string> => {
  const list = (body as { models?: unknown; data?: unknown } | null) ?? {}
  const entries = kind === "ollama" ? list.models : list.data
  if (!Array.isArray(entries)) return []
  const ids = entries.flatMap((e: { name?: unknown; id?: unknown }) => {
    const id = kind === "ollama" ? e?.name : e?.id
    return typeof id === "string" && MODEL_ID.test(id) && id !== "__proto__" ? [id] : []
  })
  return [...new Set(ids)].slice(0, MAX_MODELS)
}

/** The body as JSON, read up to MAX_BODY_BYTES (a bigger one is not a model list: undefined). */
const boundedJson = async (response: Response): Promise<unknown> => {
  const reader = response.body?.getReader()
  if (reader === undefined) return undefined
  const chunks: Array<Uint8Array> = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > MAX_BODY_BYTES) {
      await reader.cancel()
      return undefined
    }
    chunks.push(value)
  }
  return JSON.parse(Buffer.concat(chunks).toString("utf8"))
}

const probe = async (p: Probe): Promise<LocalServer | undefined> => {
  const url = `http://${p.address}${p.kind === "ollama" ? "/api/tags" : "/v1/models"}`
  try {
    // the timeout covers the body too: a server that answers its headers and then trickles is dropped
    const response = await fetch(url, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS), redirect: "manual" })
    if (!response.ok) return undefined
    const models = modelsOf(p.kind, await boundedJson(response))
    return models.length === 0 ? undefined : { id: p.id, name: p.name, baseURL: `http://${p.address}/v1`, models }
  } catch {
    // nothing listening, too slow, or not the server we thought: not offered
    return undefined
  }
}

/** The local servers that answer, in the order of `probesFrom`. */
export const findLocalServers = async (env: Readonly<Record<string, string | undefined>>): Promise<ReadonlyArray<LocalServer>> =>
  (await Promise.all(probesFrom(env).map(probe))).filter((s) => s !== undefined)
