// What the sandbox's tests share: starting a launch as the bash tool does (its files as fd 3, 4, …),
// stdout and stderr collected together, without blocking this process (its test servers must answer).
import { spawn } from "node:child_process"
import * as fs from "node:fs"

/** Runs `file args` in `cwd` with `env` and `readFds` as fd 3, 4, …: its exit code and its output. */
export const spawned = (file: string, args: ReadonlyArray<string>, cwd: string, env: Readonly<Record<string, string>>, readFds: ReadonlyArray<string> = []) =>
  new Promise<{ code: number | null; output: string }>((resolve) => {
    const fds = readFds.map((f) => fs.openSync(f, "r"))
    const child = spawn(file, [...args], { cwd, env, stdio: ["ignore", "pipe", "pipe", ...fds] })
    for (const fd of fds) fs.closeSync(fd)
    const chunks: Array<Buffer> = []
    child.stdout?.on("data", (b: Buffer) => chunks.push(b))
    child.stderr?.on("data", (b: Buffer) => chunks.push(b))
    child.on("close", (code) => resolve({ code, output: Buffer.concat(chunks).toString("utf8") }))
  })
