import { afterAll } from "bun:test"
import { Database } from "bun:sqlite"
import { execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { startScriptedServer, type ScriptedStep } from "@reins/testkit"

// Waiting for what a test needs (a process, a line, a file), never for a time: the bound is a hang guard (HANG_MS).
export { HANG_MS, waitFor } from "@reins/testkit"

const root = path.resolve(import.meta.dir, "..")
export const BIN = path.join(root, "dist", "reins.js")

/** Builds the CLI bundle once if a previous step has not. */
export const ensureBuilt = () => {
  if (!fs.existsSync(BIN)) execFileSync("bun", ["run", path.join(root, "build.ts")], { stdio: "inherit" })
}

/**
 * Whether the session's lease has lapsed (or was released), judged as every reins judges it: by the
 * database's own time. A reins killed outright releases nothing; its session is free once this holds.
 */
export const leaseLapsed = (p: { readonly dataDir: string }, sessionID: string) => {
  const db = new Database(path.join(p.dataDir, "reins.db"), { readonly: true })
  try {
    const row = db
      .query<{ lapsed: number }, [string]>(
        "SELECT time_expires <= CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) AS lapsed FROM session_run WHERE session_id = ?"
      )
      .get(sessionID)
    return row === null || row.lapsed === 1
  } finally {
    db.close()
  }
}

export interface Project {
  readonly cwd: string
  readonly dataDir: string
  readonly env: Record<string, string>
  /** The user's own config file (`$HOME/.config/reins/reins.json`): the scripted model and the test's settings. */
  readonly configFile?: string
}

/**
 * A temp git repo and a temp data dir (also HOME); the user's config (`configFile`) points at a scripted
 * server and holds the test's extra settings. The user's config is theirs: it applies whether or not
 * the project directory is trusted. What a test writes into the project itself (`reins.json`,
 * `.reins/`) applies once the directory is trusted (`trust(p)`).
 */
export const project = async (steps: ReadonlyArray<ScriptedStep>, extraConfig: Record<string, unknown> = {}) => {
  const server = await startScriptedServer(steps)
  const cwd = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-e2e-")))
  const dataDir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-e2e-data-")))
  execFileSync("git", ["init", "-q"], { cwd })
  const configFile = path.join(dataDir, ".config", "reins", "reins.json")
  fs.mkdirSync(path.dirname(configFile), { recursive: true })
  fs.writeFileSync(
    configFile,
    JSON.stringify({
      model: "local/scripted",
      provider: { local: { type: "openai-compatible", baseURL: server.url, models: { scripted: { context: 32000, output: 4000 } } } },
      ...extraConfig
    })
  )
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: dataDir,
    REINS_DATA_DIR: dataDir,
    NO_COLOR: "1"
  }
  return { cwd, dataDir, env, server, configFile }
}

/** Trusts the project directory as it is now (`reins trust`): what it holds applies until it changes. */
export const trust = async (p: Project) => {
  const r = await reins(["trust"], p)
  if (r.code !== 0) throw new Error(`reins trust failed (${r.code}): ${r.stderr}`)
}

/** Reads, changes and writes back the user's config file. */
export const editConfig = (p: Project & { readonly configFile: string }, change: (config: Record<string, any>) => Record<string, any>) =>
  fs.writeFileSync(p.configFile, JSON.stringify(change(JSON.parse(fs.readFileSync(p.configFile, "utf8")))))

export interface RunResult {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs the real CLI binary to completion. */
export const reins = (args: ReadonlyArray<string>, p: Project, stdin = "") =>
  new Promise<RunResult>((resolve) => {
    const child = spawn(BIN, args, { cwd: p.cwd, env: p.env, stdio: ["pipe", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (b) => (stdout += b))
    child.stderr.on("data", (b) => (stderr += b))
    child.stdin.end(stdin)
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }))
  })

/** Runs the real CLI binary to completion; a non-zero exit fails the test with what it printed. */
export const reinsOk = async (args: ReadonlyArray<string>, p: Project) => {
  const r = await reins(args, p)
  if (r.code !== 0) throw new Error(`reins ${args.join(" ")} failed (${r.code}):\n${r.stdout}\n${r.stderr}`)
  return r
}

/** The text of the tool result the model received in the last request. */
export const lastToolResult = (requests: ReadonlyArray<{ body: any }>) => {
  const messages = requests.at(-1)!.body.messages as Array<{ role: string; content: unknown }>
  const tool = messages.filter((m) => m.role === "tool").at(-1)!
  return typeof tool.content === "string" ? tool.content : JSON.stringify(tool.content)
}

/** Parses `--format json` output: one event per line. */
export const events = (stdout: string) =>
  stdout
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as { type: string; [k: string]: any })

/** A `project` maker for one test file: every scripted server it starts is stopped after the file. */
export const projects = () => {
  const stops: Array<() => Promise<void>> = []
  afterAll(async () => {
    for (const stop of stops) await stop()
  })
  return async (...args: Parameters<typeof project>) => {
    const p = await project(...args)
    stops.push(() => p.server.stop())
    return p
  }
}

/**
 * A command a test holds open until it says so: it waits for a file to appear in the project's directory (where
 * commands run), made by `open(p)`; the turn running it lasts exactly as long as the test needs, however slow the machine.
 */
export const gate = (name = "go") => ({
  command: `while [ ! -e ${name} ]; do sleep 0.05; done; echo released`,
  open: (p: { readonly cwd: string }) => fs.writeFileSync(path.join(p.cwd, name), "")
})

/** Writes the user's config file under `home` (`$HOME/.config/reins/reins.json`): theirs, in force whether or not the project is trusted. */
export const writeUserConfig = (home: string, text: string) => {
  const file = path.join(home, ".config", "reins", "reins.json")
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, text)
  return file
}
