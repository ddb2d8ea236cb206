// The bundle's two halves (build.ts): every command runs from main.cjs, CommonJS with Bun's bytecode beside it; the
// interactive session is ES modules (Ink and Yoga use top-level await). `reins chat` as effect/cli parses it (a form
// bin.ts's fast path leaves to it, such as --max-cost 5e0) hands the session over to ChatMain.js: it must behave as
// the fast path does.
import { beforeAll, describe, expect, test } from "bun:test"
import * as fs from "node:fs"
import * as path from "node:path"
import { spawnPty } from "./pty/index.ts"
import { marker, sleeping } from "./serve-support.ts"
import { BIN, ensureBuilt, projects } from "./support.ts"
import { openTui, READY, send } from "./tui-support.ts"
import { waitFor } from "@reins/testkit"

beforeAll(() => ensureBuilt())
const project = projects()

const dist = path.dirname(BIN)
const read = (file: string) => fs.readFileSync(path.join(dist, file), "utf8")

describe("the bundle", () => {
  test("the commands are one CommonJS file with its bytecode, holding no Ink and no path of the machine that built it", () => {
    const main = read("main.cjs")
    expect(main.startsWith("// @bun @bytecode @bun-cjs")).toBe(true)
    expect(fs.statSync(path.join(dist, "main.cjs.jsc")).size).toBeGreaterThan(0)
    // Ink's layout engine and its keyboard protocol: only in the ES modules
    expect({ yoga: main.includes("yoga"), kitty: main.includes("kitty") }).toEqual({ yoga: false, kitty: false })
    // strict, as the ES modules its sources are
    expect(main).toContain('{"use strict";')
    const root = path.resolve(dist, "..", "..", "..")
    expect(["apps", "packages", "node_modules"].filter((tree) => main.includes(path.join(root, tree) + path.sep))).toEqual([])
    // the entry goes to it, and the session's entry is where main.cjs looks for it
    expect(read("reins.js")).toContain('import("./main.cjs")')
    expect(main).toContain('import("./ChatMain.js")')
    expect(fs.existsSync(path.join(dist, "ChatMain.js"))).toBe(true)
  })

  test("the bash parser's wasm is found beside main.cjs: an ordinary command is allowed (unparsed, it would be asked)", async () => {
    const p = await project([])
    const git = Bun.spawnSync([BIN, "debug", "permission", "git status"], { cwd: p.cwd, env: p.env })
    expect(git.exitCode).toBe(0)
    expect(git.stdout.toString()).not.toContain("could not be loaded")
    expect(JSON.parse(git.stdout.toString())).toMatchObject({ decision: "allow" })
  })
})

describe("reins chat through the commands' bundle behaves as the fast path", () => {
  // an amount the fast path does not read (it takes digits only): that launch goes through main.cjs and its chat command
  for (const [how, flags] of [
    ["the fast path", ["--yolo"]],
    ["through main", ["--yolo", "--max-cost", "5e0"]]
  ] as const) {
    test(`${how}: a turn, then Ctrl+D ends the session with 0`, async () => {
      const p = await project([{ text: "Hello from the model." }])
      await using pty = await openTui(p, flags)
      await send(pty, "hi")
      await pty.waitUntil((s) => s.includes("Hello from the model.") && s.includes(READY), "the answer and the prompt ready")
      await pty.press("ctrl-d")
      expect(await pty.waitExit()).toBe(0)
    })

    test(`${how}: SIGTERM mid-command stops the command, and reins exits as the fast path does`, async () => {
      const n = marker()
      const p = await project([{ toolCalls: [{ name: "bash", arguments: { command: `sleep ${n}` } }] }, { text: "unused" }])
      await using pty = await openTui(p, [...flags, "--sandbox", "off"])
      await send(pty, "sleep")
      await waitFor(() => sleeping(n) === 1, "the command to run")
      pty.kill("SIGTERM")
      // 128 + SIGTERM would be a process killed before its cleanup: reins's own exit says the turn was stopped
      expect(await pty.exited).toBe(130)
      await waitFor(() => sleeping(n) === 0, "the command to be gone")
    })
  }

  test("through main, an error of the session keeps its one line and its exit code", async () => {
    const p = await project([])
    const pty = spawnPty([BIN, "chat", "--max-cost", "5e0", "--model=nonsense"], { cwd: p.cwd, env: p.env, cols: 100, rows: 10 })
    try {
      expect(await pty.waitExit()).toBe(2)
      await pty.settle()
      expect(pty.screen()).toBe('reins: --model must look like <provider>/<model>, got "nonsense"')
    } finally {
      await pty.close()
    }
  })
})
