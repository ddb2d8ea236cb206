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

const modelsOf = (kind: Probe["kind"], body: unknown): ReadonlyArray<string> => {
  const list = (body as { models?: unknown; data?: unknown } | null) ?? {}
  const entries = kind === "ollama" ? list.models : list.data
  if (!Array.isArray(entries)) return []
  return entries.flatMap((e: { name?: unknown; id?: unknown }) => {
    const id = kind === "ollama" ? e?.name : e?.id
    return typeof id === "string" && id !== "" ? [id] : []
  })
}

const probe = async (p: Probe): Promise<LocalServer | undefined> => {
  const url = `http://${p.address}${p.kind === "ollama" ? "/api/tags" : "/v1/models"}`
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) })
    if (!response.ok) return undefined
    const models = modelsOf(p.kind, await response.json())
    return models.length === 0 ? undefined : { id: p.id, name: p.name, baseURL: `http://${p.address}/v1`, models }
  } catch {
    // nothing listening, too slow, or not the server we thought: not offered
    return undefined
  }
}

/** The local servers that answer, in the order of `probesFrom`. */
export const findLocalServers = async (env: Readonly<Record<string, string | undefined>>): Promise<ReadonlyArray<LocalServer>> =>
  (await Promise.all(probesFrom(env).map(probe))).filter((s) => s !== undefined)
