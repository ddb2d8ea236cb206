import * as path from "node:path"
import { jsonLines } from "../src/Testing.ts"

export { freePort, freshDatabase, pgLayer, settled } from "../src/Testing.ts"
export const pgUrl = process.env.REINS_TEST_PG_URL || undefined

export interface RunnerLine {
  readonly runner: string
  readonly ready?: boolean
  readonly handling?: string
  readonly sessionID?: string
  readonly promptID?: string
  readonly text?: string
}

/** A runner process (test/fixtures/runner.ts) at 127.0.0.1:`port`: what it said so far, and a wait for a line it says. */
export const startRunner = (databaseUrl: string, port: number, mode?: "hang", security: { readonly secret?: string; readonly tlsDir?: string } = {}) => {
  const address = `127.0.0.1:${port}`
  const extra = [mode ?? "-", security.secret ?? "-", security.tlsDir ?? "-"]
  // stdin a pipe that the runner exits at the end of: a test killed outright leaves no runner behind
  const proc = Bun.spawn(["bun", path.join(import.meta.dir, "fixtures", "runner.ts"), databaseUrl, address, ...extra], {
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe"
  })
  return { address, proc, ...jsonLines<RunnerLine>(proc, `runner ${address}`) }
}
