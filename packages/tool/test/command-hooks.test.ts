// Command hooks: $FILE, $TOOL and $SESSION reach the command as single words, whatever the file name holds.
import { describe, expect, test } from "bun:test"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import type { HooksConfig } from "@reins/domain"
import { HANG_MS } from "@reins/testkit"
import { defaultRules, fromConfig, type Rule } from "@reins/permission"
import { Sandbox } from "@reins/sandbox"
import { applyPatch } from "../src/builtin/apply_patch.ts"
import { write } from "../src/builtin/write.ts"
import { ToolHooks } from "../src/plugin/Hooks.ts"
import { commandHooks, filesOf, needsFile, runHookCommand, variables } from "../src/plugin/CommandHooks.ts"
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
    test(`a file named ${JSON.stringify(name)} reaches the command as "$FILE", unexpanded`, async () => {
      const cwd = tempDir()
      const c = call({ filePath: name }, cwd)
      const file = filesOf(c, "after")?.[0]
      // the timeout is only a hang guard here
      const result = await Effect.runPromise(runHookCommand(`printf '%s|%s|%s' "$FILE" "\${TOOL}" "$SESSION"`, cwd, HANG_MS, variables(c, file)))
      expect(result.code).toBe(0)
      expect(result.output).toBe(`${path.join(cwd, name)}|edit|ses_1`.trim())
      expect(await Bun.file(path.join(cwd, "pwned")).exists()).toBe(false)
    })
  }

  test("a hook that needs $FILE is skipped for a call without a file; others run", () => {
    expect(filesOf(call({ command: "ls" }), "after")).toEqual([])
    expect(needsFile("prettier --write $FILE")).toBe(true)
    expect(needsFile("prettier --write ${FILE}")).toBe(true)
    expect(needsFile("echo $TOOL $FILENAME")).toBe(false)
  })

  test("every target of every file tool: grep, glob and list without a path search the project directory", () => {
    const on = (tool: string, args: unknown) => filesOf({ ...call(args), tool }, "before")
    expect(on("read", { filePath: "a.ts" })).toEqual(["/work/a.ts"])
    expect(on("write", { filePath: "/etc/x" })).toEqual(["/etc/x"])
    for (const tool of ["grep", "glob", "list"]) {
      expect(on(tool, { pattern: "x" })).toEqual(["/work"])
      expect(on(tool, { pattern: "x", path: "src" })).toEqual(["/work/src"])
    }
    expect(on("apply_patch", { patchText: patch })).toEqual(["new.txt", "a.txt", "b.txt", "c.txt", "d.txt"].map((f) => `/work/${f}`))
    // a patch nobody can read names files nobody can tell: a guard cannot run for them
    expect(on("apply_patch", { patchText: "not a patch" })).toBeUndefined()
    expect(on("bash", { command: "ls" })).toEqual([])
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

/** The write tool built with the config's command hooks in force. */
const writeWithHooks = (config: HooksConfig) =>
  Effect.gen(function* () {
    const { hooks } = yield* commandHooks(config)
    return yield* write.pipe(Effect.provideService(ToolHooks, hooks))
  }).pipe(Effect.orDie)

// `rm *` denied: a name whose text pasted into the hook's command would be denied made the guard skip
const rmDenied: ReadonlyArray<Rule> = [...defaultRules, ...fromConfig({ bash: { "*": "allow", "rm *": "deny" } })]

describe("guard hooks run for every target name (fail closed)", () => {
  const names = [
    "x$(rm v).txt",
    "`rm v`.txt",
    "a;rm v.txt",
    "a && rm v.txt",
    "a|rm v.txt",
    "new\nline.txt",
    "new\nrm v.txt",
    "quote'd.txt",
    "quote';rm v;'.txt",
    'double"quote.txt',
    "with space.txt",
    "-n.txt",
    "--help",
    "-rf",
    "$HOME.txt",
    "glob*.txt",
    "back\\slash.txt",
    "x".repeat(250),
    `${"d/".repeat(40)}${"y".repeat(200)}.txt`
  ]
  const guard = `printf '%s' "$FILE" > seen; echo "refused by the guard"; exit 1`
  for (const name of names) {
    test(`the guard runs for ${JSON.stringify(name.length > 60 ? `${name.slice(0, 40)}…` : name)} and its refusal denies the call`, async () => {
      const cwd = tempDir()
      fs.writeFileSync(path.join(cwd, "v"), "v")
      const result = await Effect.runPromise(
        toolCall(writeWithHooks({ "tool.before": [{ command: guard }] }), { filePath: name, content: "x" }, { cwd, rules: rmDenied })
      )
      expect(result.failure.reason).toBe("permission")
      expect(result.failure.message).toBe("The write call was denied by the hook hooks.tool.before[0]: refused by the guard")
      // the guard saw the name as one word, nothing in it ran, and the file was not written
      expect(fs.readFileSync(path.join(cwd, "seen"), "utf8")).toBe(path.join(cwd, name))
      expect(fs.readFileSync(path.join(cwd, "v"), "utf8")).toBe("v")
      expect(fs.existsSync(path.join(cwd, name))).toBe(false)
    })
  }

  test("a guard the rules deny is never skipped: the call is denied, naming the hook and why", async () => {
    const cwd = tempDir()
    const result = await Effect.runPromise(
      toolCall(writeWithHooks({ "tool.before": [{ command: `rm -f "$FILE.bak"` }] }), { filePath: "a.txt", content: "x" }, { cwd, rules: rmDenied })
    )
    expect(result.failure.reason).toBe("permission")
    expect(result.failure.message).toStartWith(
      'The write call was denied by the hook hooks.tool.before[0]: `rm -f "$FILE.bak"` could not run: the permission rules deny bash'
    )
    expect(fs.existsSync(path.join(cwd, "a.txt"))).toBe(false)
  })

  test("a guard the sandbox cannot run denies the call", async () => {
    const cwd = tempDir()
    // the real sandbox in mode required where bubblewrap is missing
    const missing = Sandbox.layer({
      config: { mode: "required" },
      places: { project: cwd, home: tempDir(), dataDir: tempDir() },
      availability: { available: false, reason: "bubblewrap is missing" }
    })
    const result = await Effect.runPromise(
      toolCall(writeWithHooks({ "tool.before": [{ command: "true" }] }).pipe(Effect.provide(missing)), { filePath: "a.txt", content: "x" }, { cwd })
    )
    expect(result.failure.message).toBe(
      'The write call was denied by the hook hooks.tool.before[0]: `true` could not run: the sandbox cannot run it: Not run: sandbox.mode is "required" and bubblewrap is missing. Install bubblewrap, or set "sandbox": {"mode": "auto"} in reins.json to run commands without it.'
    )
    expect(fs.existsSync(path.join(cwd, "a.txt"))).toBe(false)
  })

  test("apply_patch: a guard with match apply_patch runs for the move destination too", async () => {
    const cwd = project()
    const guard = `case "$FILE" in *d.txt) echo "d.txt is protected"; exit 1;; esac`
    const result = await Effect.runPromise(
      toolCall(patchWithHooks({ "tool.before": [{ match: "apply_patch", command: guard }] }), { patchText: patch }, { cwd })
    )
    expect(result.failure.message).toContain("d.txt is protected")
    expect(fs.existsSync(path.join(cwd, "d.txt"))).toBe(false)
    expect(fs.readFileSync(path.join(cwd, "c.txt"), "utf8")).toBe("c\n")
  })

  test("a tool.after hook the rules deny is reported with the result; the call's output stays", async () => {
    const cwd = tempDir()
    const result = await Effect.runPromise(
      toolCall(writeWithHooks({ "tool.after": [{ command: `rm -f "$FILE.orig"` }] }), { filePath: "a.txt", content: "x" }, { cwd, rules: rmDenied })
    )
    expect(fs.readFileSync(path.join(cwd, "a.txt"), "utf8")).toBe("x")
    expect(result.success.metadata.hookErrors[0]).toStartWith('hooks.tool.after[0]: `rm -f "$FILE.orig"` could not run: the permission rules deny bash')
  })
})
