// A reins killed (kill -9) while it writes a file leaves the temporary file it was writing beside it: the next reins
// process on the same data dir removes it, and the file itself is as it was.
import { beforeAll, expect, test } from "bun:test"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { ensureBuilt, projects, reins } from "./support.ts"

beforeAll(() => ensureBuilt())
const setup = projects()
const ROOT = path.resolve(import.meta.dir, "../../..")

test("the temp file of a write cut off by kill -9 is removed by the next reins; the file keeps its old content", async () => {
  const p = await setup([{ text: "hello" }])
  const target = path.join(p.cwd, "big.txt")
  fs.writeFileSync(target, "old content\n")
  // the file tools' own write, stopped just before the rename that would put the new content in place
  const script = `
    import * as fs from "node:fs"
    import { noteTempFilesIn } from ${JSON.stringify(path.join(ROOT, "packages/domain/src/TempFiles.ts"))}
    import { replaceContent } from ${JSON.stringify(path.join(ROOT, "packages/tool/src/builtin/SafeWrite.ts"))}
    noteTempFilesIn(process.env.DATA_DIR)
    fs.promises.rename = () => new Promise(() => process.stdout.write("stalled\\n"))
    await replaceContent(process.env.TARGET, "x".repeat(4 * 1024 * 1024))
  `
  const child = spawn("bun", ["-e", script], { cwd: ROOT, env: { ...process.env, DATA_DIR: p.dataDir, TARGET: target }, stdio: ["ignore", "pipe", "inherit"] })
  await new Promise<void>((resolve, reject) => {
    child.stdout.on("data", (b) => String(b).includes("stalled") && resolve())
    child.on("exit", (code) => reject(new Error(`the writer exited (${code}) before it stalled`)))
  })
  const exited = new Promise((resolve) => child.on("exit", resolve))
  child.kill("SIGKILL")
  await exited
  const left = fs.readdirSync(p.cwd).filter((name) => name.includes(".reins-"))
  expect(left).toHaveLength(1)
  expect(fs.statSync(path.join(p.cwd, left[0]!)).size).toBe(4 * 1024 * 1024)
  const run = await reins(["run", "say hello"], p)
  expect(run.code).toBe(0)
  expect(fs.readdirSync(p.cwd).filter((name) => name.includes(".reins-"))).toEqual([])
  expect(fs.readFileSync(target, "utf8")).toBe("old content\n")
})
