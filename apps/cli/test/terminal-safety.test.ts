// Issue 25, item 5: control sequences in the model's text, a command or a tool's output never act on the
// user's terminal in reins run: shown escaped on a terminal, removed from plain output.
import { beforeAll, describe, expect, test } from "bun:test"
import { plain, plainStream, visible } from "../src/present/Terminal.ts"
import { spawnPty } from "./pty/index.ts"
import { BIN, ensureBuilt, projects, reins } from "./support.ts"

beforeAll(() => ensureBuilt())
const setup = projects()

const ESC = "\u001b"
const hostile: ReadonlyArray<readonly [string, string]> = [
  ["clear the screen", `${ESC}[2J${ESC}[H`],
  ["cursor up and erase the line (rewrite a question)", `${ESC}[1A${ESC}[2K`],
  ["OSC 52 clipboard write, BEL-terminated", `${ESC}]52;c;ZWNobyBwd25lZA==\u0007`],
  ["OSC 52 clipboard write, ST-terminated", `${ESC}]52;c;ZWNobyBwd25lZA==${ESC}\\`],
  ["OSC 8 hyperlink", `${ESC}]8;;https://evil.example${ESC}\\click${ESC}]8;;${ESC}\\`],
  ["window title", `${ESC}]0;pwned\u0007`],
  ["DCS string", `${ESC}P1$r0m${ESC}\\`],
  ["8-bit CSI", "\u009b2J"],
  ["carriage return overwrite", "safe text\rrm -rf /"],
  ["bidi override", "file\u202etxt.exe"],
  ["backspaces", "rm\b\b\bls"]
]

describe("visible and plain", () => {
  for (const [name, text] of hostile) {
    test(name, () => {
      const shown = visible(`a ${text} b`)
      expect(shown).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202e]/)
      const stripped = plain(`a ${text} b`)
      expect(stripped).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202e]/)
      expect(stripped).not.toContain("52;c;")
    })
  }
  test("streamed: a sequence cut anywhere between pieces is removed whole", () => {
    const text = `before ${ESC}]52;c;ZWNobyBwd25lZA==\u0007${ESC}[2Jafter ${ESC}P1$r${ESC}\\end`
    for (let cut = 0; cut <= text.length; cut++) {
      for (let second = cut; second <= text.length; second += 7) {
        const s = plainStream()
        const out = s.write(text.slice(0, cut)) + s.write(text.slice(cut, second)) + s.write(text.slice(second)) + s.end()
        expect([cut, second, out]).toEqual([cut, second, "before after end"])
      }
    }
  })

  test("ordinary text is untouched: unicode, emoji, tabs, newlines", () => {
    const text = "héllo 世界 🎉\tcol\nnext line — “quoted”"
    expect(visible(text)).toBe(text)
    expect(plain(text)).toBe(text)
  })
})

describe("reins run", () => {
  test("piped: the model's escape sequences are removed from stdout, the words stay", async () => {
    const p = await setup([{ text: `before ${ESC}]52;c;ZWNobyBwd25lZA==\u0007${ESC}[2Jafter` }])
    const r = await reins(["run", "hello"], p)
    expect(r.code).toBe(0)
    expect(r.stdout).toBe("before after\n")
  })

  test("on a terminal: a command with escape sequences is shown escaped in the permission question and the tool line", async () => {
    const command = `echo ok ${ESC}[2J${ESC}[1A${ESC}[2Kall clear`
    const p = await setup([{ toolCalls: [{ name: "bash", arguments: { command } }] }, { text: `done ${ESC}]0;title\u0007` }], { permission: { bash: "ask" } })
    await using pty = spawnPty([BIN, "run", "go"], { cwd: p.cwd, env: { ...p.env, TERM: "xterm-256color" }, cols: 160, rows: 40 })
    await pty.waitFor("[o]nce  [a]lways  [r]eject")
    expect(pty.screen()).toContain("\\u001b[2J\\u001b[1A\\u001b[2Kall clear")
    pty.type("o\r")
    expect(await pty.waitExit()).toBe(0)
    expect(pty.screen()).toContain("done \\u001b]0;title\\u0007")
  })
})
