// Command hooks: $FILE, $TOOL and $SESSION reach the command as single words, whatever the file name holds.
import { describe, expect, test } from "bun:test"
import { Effect } from "effect"
import * as path from "node:path"
import { expand, runHookCommand, variables } from "../src/plugin/CommandHooks.ts"
import { tempDir } from "./helpers.ts"

const call = (args: unknown, cwd = "/work") => ({ tool: "edit", sessionID: "ses_1", callID: "c1", cwd, args })

describe("command hook expansion", () => {
  const names = [
    "plain.txt",
    "with space.txt",
    "quote'd.txt",
    'double"quote.txt',
    "semi;rm -rf x.txt",
    "$(touch pwned).txt",
    "`touch pwned`.txt",
    "dollar$HOME.txt",
    "new\nline.txt",
    "back\\slash.txt",
    "-n.txt",
    "glob*.txt"
  ]
  for (const name of names) {
    test(`a file named ${JSON.stringify(name)} reaches the command as "$FILE", unexpanded, and the scan sees it as one word`, async () => {
      const cwd = tempDir()
      const c = call({ filePath: name }, cwd)
      const result = await Effect.runPromise(runHookCommand(`printf '%s|%s|%s' "$FILE" "\${TOOL}" "$SESSION"`, cwd, 5_000, variables(c)))
      expect(result.code).toBe(0)
      expect(result.output).toBe(`${path.join(cwd, name)}|edit|ses_1`.trim())
      // what the permission scan judges: the quoted value runs as the same single argument
      const scanned = await Effect.runPromise(runHookCommand(expand("printf '%s' $FILE", c)!, cwd, 5_000))
      expect(scanned.output).toBe(path.join(cwd, name).trim())
      expect(await Bun.file(path.join(cwd, "pwned")).exists()).toBe(false)
    })
  }

  test("a hook that needs $FILE is skipped for a call without a file; others run", () => {
    expect(expand("prettier --write $FILE", call({ command: "ls" }))).toBeUndefined()
    expect(expand("echo $TOOL", call({ command: "ls" }))).toBe("echo 'edit'")
    // other variables are the shell's, left alone
    expect(expand("echo $HOME $FILENAME", call({ filePath: "a.ts" }))).toBe("echo $HOME $FILENAME")
  })
})
