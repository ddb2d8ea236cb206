import { describe, expect, test } from "bun:test"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { discoverCommands, expandCommand } from "../src/plugin/Commands.ts"
import { tempDir } from "./helpers.ts"

const write = (file: string, text: string) => {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, text)
}

describe("commands: Markdown prompts run as /name", () => {
  test("the project's (trusted) and the user's are found, the project's first on a name; bad files are said", async () => {
    const cwd = tempDir()
    const home = tempDir()
    write(path.join(cwd, ".reins/commands/review.md"), "---\ndescription: Review a file\nagent: plan\n---\nReview $ARGUMENTS carefully.\n")
    write(path.join(home, ".config/reins/commands/review.md"), "the user's review\n")
    write(path.join(home, ".config/reins/commands/fix.md"), "---\nmodel: local/other\n---\nFix issue $1 in $2.\n")
    write(path.join(home, ".config/reins/commands/empty.md"), "---\ndescription: nothing\n---\n")
    write(path.join(home, ".config/reins/commands/bad name.md"), "x")
    write(path.join(home, ".config/reins/commands/notes.txt"), "not a command")
    const found = await Effect.runPromise(discoverCommands({ cwd, home, trusted: true }))
    expect(found.commands.map((c) => [c.name, c.source, c.description, c.agent, c.model])).toEqual([
      ["review", "project", "Review a file", "plan", undefined],
      ["fix", "user", undefined, undefined, "local/other"]
    ])
    expect(found.skipped.map((s) => [path.basename(s.path), s.error])).toEqual([
      ["bad name.md", "the file name must be letters, digits, `.`, `_` or `-` (at most 64), then .md"],
      ["empty.md", "the body (the prompt) is empty"]
    ])
    // untrusted: the project's commands stay data; the user's load
    const untrusted = await Effect.runPromise(discoverCommands({ cwd, home, trusted: false }))
    expect(untrusted.commands.map((c) => [c.name, c.source])).toEqual([
      ["fix", "user"],
      ["review", "user"]
    ])
    expect(untrusted.skipped[0]).toEqual({
      path: path.join(cwd, ".reins/commands"),
      error: "the project is not trusted (reins trust), so its commands are not loaded"
    })
  })

  test("arguments: $ARGUMENTS all of them, $1… each word, after a template that uses neither", () => {
    expect(expandCommand({ template: "Review $ARGUMENTS carefully." }, "src/a.ts src/b.ts")).toBe("Review src/a.ts src/b.ts carefully.")
    expect(expandCommand({ template: "Fix issue $1 in $2 ($3)." }, "42 parser")).toBe("Fix issue 42 in parser ().")
    expect(expandCommand({ template: "Summarise the changes." }, "only the docs")).toBe("Summarise the changes.\n\nonly the docs")
    expect(expandCommand({ template: "Summarise the changes." }, "")).toBe("Summarise the changes.")
  })
})
