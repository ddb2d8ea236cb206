// React and Ink are loaded only by the interactive session: `reins --version` and `reins run` never
// import them (the entry's static import graph has no Ink in it, nor has main.cjs, every command's bundle).
import { beforeAll, describe, expect, test } from "bun:test"
import * as fs from "node:fs"
import * as path from "node:path"
import { BIN, ensureBuilt } from "./support.ts"
import { routeArgs } from "../src/commands/chat.ts"

beforeAll(() => ensureBuilt())

/** The files a module of the bundle imports statically (`import … from "./x.js"`), transitively. */
const staticClosure = (entry: string): Set<string> => {
  const seen = new Set<string>()
  const visit = (file: string) => {
    if (seen.has(file)) return
    seen.add(file)
    const text = fs.readFileSync(file, "utf8")
    for (const m of text.matchAll(/(?:import|export)\s*(?:[^"'()]*?from\s*)?["'](\.\.?\/[^"']+)["']/g)) visit(path.resolve(path.dirname(file), m[1]!))
  }
  visit(entry)
  return seen
}

/** Whether a bundle file holds Ink (its Yoga layout engine and its input hook are unmistakable). */
const holdsInk = (file: string) => {
  const text = fs.readFileSync(file, "utf8")
  return text.includes("yoga") && text.includes("kitty")
}

describe("the interactive session is loaded lazily", () => {
  test("the entry and everything it imports statically hold no Ink; some lazily loaded chunk does", () => {
    const entry = staticClosure(BIN)
    expect([...entry].filter(holdsInk)).toEqual([])
    const chunks = fs.readdirSync(path.join(path.dirname(BIN), "chunks")).map((f) => path.join(path.dirname(BIN), "chunks", f))
    const ink = chunks.filter(holdsInk)
    expect(ink.length).toBeGreaterThan(0)
    // every command's bundle (main.cjs, build.ts) holds no Ink either: only its `import("./ChatMain.js")` reaches it
    expect(holdsInk(path.join(path.dirname(BIN), "main.cjs"))).toBe(false)
  })

  test("reins --version still answers from the entry alone", () => {
    const r = Bun.spawnSync([BIN, "--version"])
    expect(r.exitCode).toBe(0)
    expect(r.stdout.toString()).toMatch(/^reins v\d+\.\d+\.\d+/)
  })

  test("which arguments open the interactive session", () => {
    const cases: Array<[ReadonlyArray<string>, boolean, ReadonlyArray<string>]> = [
      [[], true, ["chat"]],
      // off a terminal, reins alone stays the help
      [[], false, []],
      [["-c"], true, ["chat", "-c"]],
      [["--continue"], false, ["chat", "--continue"]],
      [["--session", "ses_1"], true, ["chat", "--session", "ses_1"]],
      [["--session=ses_1"], true, ["chat", "--session=ses_1"]],
      [["-m", "openai/gpt-5"], true, ["chat", "-m", "openai/gpt-5"]],
      [["--yolo"], true, ["chat", "--yolo"]],
      // ordinary commands and flags are left alone
      [["run", "-c", "go on"], true, ["run", "-c", "go on"]],
      [["chat"], true, ["chat"]],
      [["--help"], true, ["--help"]],
      [["sessions", "list"], true, ["sessions", "list"]]
    ]
    for (const [args, terminal, expected] of cases) expect({ args, terminal, routed: routeArgs(args, terminal) }).toEqual({ args, terminal, routed: expected })
  })
})
