// The prompt's `@path` completion and `!command`: completion read from the project's directories, and the
// user's own command run in the project, its output shown and carried to the model with the next message.
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { completeMention, mentionAt, mentionMatches } from "../src/tui/Mentions.ts"
import { runShell, runsNote, shellCommand, shownRun } from "../src/tui/Shell.ts"
import { ensureBuilt, projects } from "./support.ts"
import { openTui, send, settled } from "./tui-support.ts"

setDefaultTimeout(60_000)

const tree = () => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-mentions-")))
  for (const f of ["src/main.ts", "src/mainline.ts", "src/util/x.ts", "README.md", ".env", "node_modules/a/index.js", ".git/HEAD"]) {
    fs.mkdirSync(path.dirname(path.join(dir, f)), { recursive: true })
    fs.writeFileSync(path.join(dir, f), "x\n")
  }
  return dir
}

describe("@path completion", () => {
  test.each([
    ["at the start", "@sr", { start: 1, typed: "sr" }],
    ["after a space", "look at @src/ma", { start: 9, typed: "src/ma" }],
    ["after a bracket", "(@READ", { start: 2, typed: "READ" }],
    ["an address is not a mention", "mail a@b.c", undefined],
    ["a finished word is not completed", "@src/main.ts done", undefined]
  ] as const)("the @ word before the cursor: %s", (_, text, expected) => {
    expect(mentionAt({ text, cursor: text.length })).toEqual(expected)
  })

  test("entries of the typed directory: directories first, hidden only when asked, never .git or node_modules, nothing outside", () => {
    const dir = tree()
    expect(mentionMatches(dir, "").map((m) => m.path)).toEqual(["src/", "README.md"])
    expect(mentionMatches(dir, ".").map((m) => m.path)).toEqual([".env"])
    expect(mentionMatches(dir, "src/").map((m) => m.path)).toEqual(["src/util/", "src/main.ts", "src/mainline.ts"])
    expect(mentionMatches(dir, "n")).toEqual([])
    expect(mentionMatches(dir, "../")).toEqual([])
    expect(mentionMatches(dir, "/etc/")).toEqual([])
    expect(mentionMatches(dir, "~/")).toEqual([])
    expect(mentionMatches(dir, "missing/")).toEqual([])
  })

  test("Tab completes the single match (a file then takes a space), or the common prefix; text after the cursor stays", () => {
    const dir = tree()
    expect(completeMention({ text: "see @sr", cursor: 7 }, dir)).toEqual({ text: "see @src/", cursor: 9 })
    expect(completeMention({ text: "see @src/m", cursor: 10 }, dir)).toEqual({ text: "see @src/main", cursor: 13 })
    expect(completeMention({ text: "see @src/main", cursor: 13 }, dir)).toBeUndefined()
    expect(completeMention({ text: "@RE and more", cursor: 3 }, dir)).toEqual({ text: "@README.md  and more", cursor: 11 })
    expect(completeMention({ text: "no mention", cursor: 10 }, dir)).toBeUndefined()
  })
})

describe("!command", () => {
  test.each([
    ["!ls -la", "ls -la"],
    ["!  git status ", "git status"],
    ["!", undefined],
    ["ls", undefined]
  ])("%j is the command %j", (text, command) => {
    expect(shellCommand(text)).toBe(command)
  })

  test("runs in the project with stdout and stderr together and its exit code", async () => {
    const dir = tree()
    const run = await runShell("ls src; echo oops >&2; exit 3", dir, process.env).done
    expect(run.code).toBe(3)
    expect(run.output).toContain("main.ts")
    expect(run.output).toContain("oops")
    expect(shownRun(run)).toContain("(exit 3; the output goes to the model with your next message)")
  })

  test("a long output keeps its start and end for the model, and the screen shows its last lines", async () => {
    const run = await runShell("seq 1 100000", os.tmpdir(), process.env).done
    expect(run.code).toBe(0)
    expect(run.omitted).toBeGreaterThan(0)
    expect(run.output.startsWith("1\n2\n")).toBe(true)
    expect(run.output.trimEnd().endsWith("100000")).toBe(true)
    expect(run.output).toContain("bytes left out")
    const shown = shownRun(run).split("\n")
    expect(shown.length).toBeLessThan(25)
    expect(shown.at(-2)).toBe("100000")
  })

  test("stop kills the whole process group, a grandchild included", async () => {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-shell-")))
    const run = runShell(`sh -c 'echo $$ > ${dir}/pid; exec sleep 600' & wait`, dir, process.env)
    const pidFile = path.join(dir, "pid")
    const { waitFor } = await import("@reins/testkit")
    await waitFor(() => fs.existsSync(pidFile) && fs.readFileSync(pidFile, "utf8").trim() !== "", { what: "the grandchild's pid" })
    const grandchild = Number(fs.readFileSync(pidFile, "utf8").trim())
    run.stop()
    const done = await run.done
    expect(done.signal).toBe("SIGKILL")
    await waitFor(
      () => {
        try {
          process.kill(grandchild, 0)
          return false
        } catch {
          return true
        }
      },
      { what: "the grandchild gone" }
    )
  })

  test("the note fences the output with more backticks than it holds", () => {
    const note = runsNote([{ command: "cat x.md", output: "```js\ncode\n```\n", code: 0, omitted: 0, timedOut: false }])
    expect(note).toBe("I ran `cat x.md` in the project (exit 0):\n````\n```js\ncode\n```\n````")
  })
})

describe("under a pty", () => {
  beforeAll(() => ensureBuilt())
  const project = projects()

  test("!command shows its output and the next message carries it; @ completes a path with Tab and attaches it", async () => {
    const p = await project([{ text: "Saw the listing." }])
    fs.mkdirSync(path.join(p.cwd, "src"))
    fs.writeFileSync(path.join(p.cwd, "src", "notes-for-model.txt"), "the milk is in the fridge\n")
    await using pty = await openTui(p, ["--yolo"])
    await send(pty, "!ls src; echo shell-said-hi")
    await pty.waitFor("shell-said-hi")
    await pty.waitFor("(exit 0; the output goes to the model with your next message)")
    expect(p.server.requests).toHaveLength(0)
    pty.type("what is in @sr")
    await pty.settle()
    await pty.press("tab")
    await pty.waitFor("what is in @src/")
    pty.type("no")
    await pty.settle()
    await pty.press("tab")
    await pty.waitFor("what is in @src/notes-for-model.txt")
    await pty.press("enter")
    await settled(pty, "Saw the listing.")
    const body = JSON.stringify(p.server.requests[0]!.body)
    expect(body).toContain("I ran `ls src; echo shell-said-hi` in the project (exit 0)")
    expect(body).toContain("shell-said-hi")
    expect(body).toContain("the milk is in the fridge")
    await send(pty, "/exit")
    expect(await pty.waitExit()).toBe(0)
  })
})
