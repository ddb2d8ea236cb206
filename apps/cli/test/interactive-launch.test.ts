// bin.ts opens the interactive session without the command line's parser when the arguments are an interactive
// launch on a terminal (Interactive.ts); anything else goes through effect/cli as before, with its help and errors.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import * as fs from "node:fs"
import { interactiveLaunch, interactiveLaunchWithDatabase, type ChatInput } from "../src/Interactive.ts"
import { spawnPty } from "./pty/index.ts"
import { BIN, ensureBuilt, project, type Project } from "./support.ts"

const chat = (over: Partial<ChatInput> = {}): ChatInput => ({
  model: undefined,
  variant: undefined,
  continue: false,
  session: undefined,
  yolo: false,
  trust: false,
  ...over
})

describe("which launches take the fast path to the interactive session", () => {
  test("the chat command's flags, alone or after chat, on a terminal", () => {
    const cases: Array<[ReadonlyArray<string>, ChatInput]> = [
      [[], chat()],
      [["chat"], chat()],
      [["-c"], chat({ continue: true })],
      [["chat", "--continue", "--yolo"], chat({ continue: true, yolo: true })],
      [["--session", "ses_1"], chat({ session: "ses_1" })],
      [["-s", "ses_1"], chat({ session: "ses_1" })],
      [["--session=ses_1"], chat({ session: "ses_1" })],
      [["-m", "openai/gpt-5", "--variant", "high"], chat({ model: "openai/gpt-5", variant: "high" })],
      [["--model=local/scripted", "--variant=low", "-c"], chat({ model: "local/scripted", variant: "low", continue: true })],
      [["--sandbox", "off"], chat({ sandbox: "off" })],
      [["--yolo", "--sandbox=required"], chat({ yolo: true, sandbox: "required" })],
      [["--max-cost", "2.50"], chat({ maxCost: 2.5 })],
      [["chat", "--yolo", "--max-cost=7"], chat({ yolo: true, maxCost: 7 })],
      // refused by the session as by the chat command (withMaxCost), with the same line
      [["--max-cost", "0"], chat({ maxCost: 0 })]
    ]
    for (const [args, expected] of cases) expect({ args, got: interactiveLaunch(args, true) }).toEqual({ args, got: expected })
  })

  test("everything else is left to effect/cli: other commands, help, unknown, repeated or malformed flags, no terminal", () => {
    const cases: Array<ReadonlyArray<string>> = [
      ["run", "hello"],
      ["sessions", "list"],
      ["--help"],
      ["-h"],
      ["chat", "--help"],
      ["--version"],
      ["--wizard"],
      ["chat", "extra"],
      ["-c", "-c"],
      ["-m", "a/b", "--model", "c/d"],
      ["--model"],
      ["--model="],
      ["--model", "--yolo"],
      ["--yolo=true"],
      ["-cm", "a/b"],
      ["--log-level", "debug"],
      ["--sandbox", "maybe"],
      ["--sandbox"],
      ["--sandbox", "off", "--sandbox", "auto"],
      // an amount in another form is effect/cli's to parse (or refuse)
      ["--max-cost", "5e0"],
      ["--max-cost", "+5"],
      ["--max-cost", "lots"],
      ["--max-cost", "-1"],
      ["--max-cost"],
      ["--max-cost", "1", "--max-cost", "2"]
    ]
    for (const args of cases) expect({ args, got: interactiveLaunch(args, true) }).toEqual({ args, got: undefined })
    for (const args of [[], ["chat"], ["-c"]]) expect({ args, got: interactiveLaunch(args, false) }).toEqual({ args, got: undefined })
  })
})

describe("--database on an interactive launch", () => {
  test("taken off the line wherever it is, its URL given beside the chat's flags; a --database without a URL is main's to refuse", () => {
    const url = "postgres://reins@127.0.0.1:5432/reins"
    const cases: Array<[ReadonlyArray<string>, ReturnType<typeof interactiveLaunchWithDatabase>]> = [
      [["--database", url], { chat: chat(), database: url }],
      [[`--database=${url}`, "-c"], { chat: chat({ continue: true }), database: url }],
      [["chat", "--yolo", "--database", url], { chat: chat({ yolo: true }), database: url }],
      [["--yolo"], { chat: chat({ yolo: true }) }],
      // the last one wins, as main takes it
      [["--database", "postgres://a/b", "--database", url], { chat: chat(), database: url }],
      [["--database"], undefined],
      [["--database", "--yolo"], undefined],
      [["--database", url, "run", "hi"], undefined],
      [["--database", url, "--help"], undefined]
    ]
    for (const [args, expected] of cases) expect({ args, got: interactiveLaunchWithDatabase(args, true) }).toEqual({ args, got: expected })
    expect(interactiveLaunchWithDatabase(["--database", url], false)).toBeUndefined()
  })
})

describe("the fast path behaves as reins chat did, on a real terminal", () => {
  let p: Project
  beforeAll(async () => {
    ensureBuilt()
    p = await project([])
  })
  afterAll(() => {
    fs.rmSync(p.cwd, { recursive: true, force: true })
    fs.rmSync(p.dataDir, { recursive: true, force: true })
  })

  // tall enough for the whole of reins --help
  const launch = async (args: ReadonlyArray<string>) => {
    const pty = spawnPty([BIN, ...args], { cwd: p.cwd, env: p.env, cols: 100, rows: 60 })
    try {
      const code = await pty.waitExit()
      await pty.settle()
      return { code, screen: pty.screen() }
    } finally {
      await pty.close()
    }
  }

  test("a bad --model is one line and exit 2 before any screen, with or without chat", async () => {
    for (const args of [
      ["-m", "nonsense"],
      ["chat", "--model=nonsense"]
    ]) {
      const r = await launch(args)
      expect({ args, ...r }).toEqual({ args, code: 2, screen: 'reins: --model must look like <provider>/<model>, got "nonsense"' })
    }
  })

  test("a --max-cost of 0 is the same line and exit 2 on the fast path as through effect/cli", async () => {
    const expected = "reins: --max-cost takes a positive amount of dollars (e.g. --max-cost 2.50), not 0"
    for (const args of [
      ["--max-cost", "0"],
      ["--max-cost", "0e0"]
    ]) {
      const r = await launch(args)
      expect({ args, ...r }).toEqual({ args, code: 2, screen: expected })
    }
  })

  test("an unknown session id is one line and exit 2", async () => {
    const r = await launch(["--session", "ses_nope"])
    expect(r).toEqual({ code: 2, screen: "reins: No session ses_nope: see reins sessions list" })
  })

  test("--help and a repeated flag still go through effect/cli on a terminal", async () => {
    const help = await launch(["--help"])
    expect(help.code).toBe(0)
    expect(help.screen).toContain("USAGE")
    const repeated = await launch(["chat", "-m", "a/b", "-m", "c/d"])
    expect(repeated.screen).not.toContain("Enter send")
  })
})
