// A cloned repository's reins.json is read before anything is trusted: a hostile one gets a clear error, promptly,
// with nothing of it drawn raw on the terminal; ordinary typos keep their did-you-mean.
import { describe, expect, test } from "bun:test"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { loadConfig } from "../src/ConfigLoader.ts"

const tmp = () => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-hostile-")))

const problemOf = async (text: string) => {
  const root = tmp()
  fs.writeFileSync(path.join(root, "reins.json"), text)
  const error = await Effect.runPromise(Effect.flip(loadConfig({ cwd: root, env: {}, home: tmp() })))
  return { field: error.field, problem: error.problem, message: error.message }
}

const hasControl = (s: string) => /[\x00-\x1f\x7f]/.test(s)

describe("hostile config files", () => {
  const cases: ReadonlyArray<{ readonly name: string; readonly text: string; readonly expect: RegExp; readonly field?: RegExp }> = [
    {
      name: "a terminal escape in an unknown key",
      text: JSON.stringify({ "modle\u001b]0;PWNED\u0007": 1 }),
      expect: /unknown key "modle\\u001b]0;PWNED\\u0007"/
    },
    { name: "an escape in a nested unknown key", text: JSON.stringify({ agent: { steps: 3, "x\u001b[2J": 1 } }), expect: /./, field: /^agent\.x\\u001b\[2J$/ },
    { name: "a 300,000-character key (no edit distance over it)", text: JSON.stringify({ ["a".repeat(300_000)]: 1 }), expect: /unknown key "a{80}…"/ },
    { name: "a huge key in a map", text: JSON.stringify({ agent: { ["b".repeat(300_000)]: { stesp: 1 } } }), expect: /./, field: /^agent\.b{80}…/ },
    { name: "nesting 200,000 deep", text: `{"model": ${"[".repeat(200_000)}${"]".repeat(200_000)}}`, expect: /nested too deeply|Expected/ }
  ]
  for (const c of cases) {
    test(c.name, async () => {
      const start = performance.now()
      const { field, problem, message } = await problemOf(c.text)
      expect(problem).toMatch(c.expect)
      if (c.field) expect(field).toMatch(c.field)
      expect(hasControl(message)).toBe(false)
      expect(message.length).toBeLessThan(2_000)
      // the unbounded cost was minutes; anything near a second on a loaded machine is fine
      expect(performance.now() - start).toBeLessThan(20_000)
    })
  }
  // ordinary typos stay as helpful as before
  const quiet: ReadonlyArray<readonly [string, string]> = [
    [JSON.stringify({ modle: "a/b" }), 'unknown key "modle"; did you mean "model"?'],
    [JSON.stringify({ agent: { stesp: 3 } }), 'did you mean "steps"?']
  ]
  for (const [text, want] of quiet) {
    test(`still told: ${text}`, async () => expect((await problemOf(text)).problem).toContain(want))
  }
})
