// pi (@mariozechner/pi-coding-agent), the peer bash40 and tui compare reins with: installed from the npm registry into a
// temporary directory at bench time (never a dependency of the project), run offline in a private HOME.
import * as fs from "node:fs"
import * as path from "node:path"
import { baseEnv, installAnchor } from "./tui-support.ts"

export const PI_SPEC = "@mariozechner/pi-coding-agent@0.73.1"
export const PI_NAME = "pi 0.73.1"

/** pi's executable (a node script), or why it could not be installed. */
export const installPi = () => installAnchor(PI_SPEC, "pi")

/** pi's environment with `home` as HOME: offline (no download of fd/rg nor version check; the network is closed here and would only add a timeout), no telemetry. */
export const piEnv = (home: string): Record<string, string> => ({ ...baseEnv(home), PI_OFFLINE: "1", PI_SKIP_VERSION_CHECK: "1", PI_TELEMETRY: "0" })

/**
 * Makes an OpenAI-compatible chat completions server (`baseUrl` ends in `/v1`) pi's provider `bench` in `home`'s
 * ~/.pi/agent/models.json, with the one model `modelId`; returns the arguments that select it.
 */
export const piModel = (home: string, baseUrl: string, modelId: string): Array<string> => {
  const dir = path.join(home, ".pi", "agent")
  fs.mkdirSync(dir, { recursive: true })
  const provider = { baseUrl, api: "openai-completions", apiKey: "sk-bench-dummy", models: [{ id: modelId }] }
  fs.writeFileSync(path.join(dir, "models.json"), JSON.stringify({ providers: { bench: provider } }))
  return ["--provider", "bench", "--model", modelId]
}
