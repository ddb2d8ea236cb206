// Command hooks: $FILE, $TOOL and $SESSION reach the command as single words, whatever the file name holds.
import { describe, expect, test } from "bun:test"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import type { HooksConfig } from "@reins/domain"
import { HANG_MS } from "@reins/testkit"
import { applyPatch } from "../src/builtin/apply_patch.ts"
import { ToolHooks } from "../src/plugin/Hooks.ts"
import { commandHooks, expand, filesOf, runHookCommand, variables } from "../src/plugin/CommandHooks.ts"
import { tempDir, toolCall } from "./helpers.ts"

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
      const file = filesOf(c, "after")[0]
      // the timeout is only a hang guard here
      const result = await Effect.runPromise(runHookCommand(`printf '%s|%s|%s' "$FILE" "\${TOOL}" "$SESSION"`, cwd, HANG_MS, variables(c, file)))
      expect(result.code).toBe(0)
      expect(result.output).toBe(`${path.join(cwd, name)}|edit|ses_1`.trim())
      // what the permission scan judges: the quoted value runs as the same single argument
      const scanned = await Effect.runPromise(runHookCommand(expand("printf '%s' $FILE", c, file)!, cwd, HANG_MS))
      expect(scanned.output).toBe(path.join(cwd, name).trim())
      expect(await Bun.file(path.join(cwd, "pwned")).exists()).toBe(false)
    })
  }

  test("a hook that needs $FILE is skipped for a call without a file; others run", () => {
    expect(filesOf(call({ command: "ls" }), "after")).toEqual([])
    expect(expand("prettier --write $FILE", call({ command: "ls" }), undefined)).toBeUndefined()
    expect(expand("echo $TOOL", call({ command: "ls" }), undefined)).toBe("echo 'edit'")
    // other variables are the shell's, left alone
    expect(expand("echo $HOME $FILENAME", call({ filePath: "a.ts" }), "/work/a.ts")).toBe("echo $HOME $FILENAME")
  })
})

/** A patch that adds, updates, deletes and moves: after it, new.txt, a.txt and d.txt exist (b.txt is gone, c.txt is d.txt). */
const patch = [
  "*** Begin Patch",
  "*** Add File: new.txt",
  "+fresh",
  "*** Update File: a.txt",
  "@@",
  "-a",
  "+A",
  "*** Delete File: b.txt",
  "*** Update File: c.txt",
  "*** Move to: d.txt",
  "@@",
  "-c",
  "+C",
  "*** End Patch"
].join("\n")

const project = () => {
  const cwd = tempDir()
  for (const name of ["a", "b", "c"]) fs.writeFileSync(path.join(cwd, `${name}.txt`), `${name}\n`)
  return cwd
}

/** apply_patch built with the config's command hooks in force. */
const patchWithHooks = (config: HooksConfig) =>
  Effect.gen(function* () {
    const { hooks } = yield* commandHooks(config)
    return yield* applyPatch.pipe(Effect.provideService(ToolHooks, hooks))
  }).pipe(Effect.orDie)

describe("command hooks on apply_patch", () => {
  test("$FILE is each changed file in turn: before the call every path the patch names, after it the files as they now are", async () => {
    const cwd = project()
    const log = (name: string) => `printf '%s %s\\n' "$TOOL" "$FILE" >> ${name}.log`
    const result = await Effect.runPromise(
      toolCall(
        patchWithHooks({ "tool.before": [{ match: "apply_patch", command: log("before") }], "tool.after": [{ match: "apply_patch", command: log("after") }] }),
        { patchText: patch },
        { cwd }
      )
    )
    expect(result.success.output).toContain("new.txt")
    const lines = (name: string) =>
      fs
        .readFileSync(path.join(cwd, `${name}.log`), "utf8")
        .trim()
        .split("\n")
    expect(lines("before")).toEqual(["new.txt", "a.txt", "b.txt", "c.txt", "d.txt"].map((f) => `apply_patch ${path.join(cwd, f)}`))
    expect(lines("after")).toEqual(["new.txt", "a.txt", "d.txt"].map((f) => `apply_patch ${path.join(cwd, f)}`))
  })

  test("a tool.before hook that refuses one of the files denies the whole patch: nothing is written", async () => {
    const cwd = project()
    const guard = `case "$FILE" in *b.txt) echo "b.txt is protected"; exit 1;; esac`
    const result = await Effect.runPromise(toolCall(patchWithHooks({ "tool.before": [{ command: guard }] }), { patchText: patch }, { cwd }))
    expect(result.failure.reason).toBe("permission")
    expect(result.failure.message).toContain("b.txt is protected")
    expect(fs.existsSync(path.join(cwd, "new.txt"))).toBe(false)
    expect(fs.readFileSync(path.join(cwd, "b.txt"), "utf8")).toBe("b\n")
  })

  test("a formatter that fails on some files keeps the call's output and names each failure", async () => {
    const cwd = project()
    const fmt = `case "$FILE" in *.txt) grep -q '^[A-Z]' "$FILE" || { echo "cannot format $(basename "$FILE")"; exit 3; };; esac`
    const result = await Effect.runPromise(toolCall(patchWithHooks({ "tool.after": [{ command: fmt }] }), { patchText: patch }, { cwd }))
    expect(result.success.output).toContain("d.txt")
    expect(result.success.metadata.hookErrors).toEqual([`hooks.tool.after[0]: \`${fmt}\` exited with 3: cannot format new.txt`])
  })
})
