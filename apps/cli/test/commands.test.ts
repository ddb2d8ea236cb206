// Commands (Markdown prompts) through the built CLI: reins run --command, /name in the interactive session with
// completion, and /name from an ACP editor (offered as an available command); a project's are data until trusted.
import { beforeAll, describe, expect, test } from "bun:test"
import * as fs from "node:fs"
import * as path from "node:path"
import { ofKind, withAcp } from "./acp-support.ts"
import { ensureBuilt, projects, reins, trust, type Project } from "./support.ts"
import { openTui, send, settled } from "./tui-support.ts"

beforeAll(() => ensureBuilt())
const setup = projects()

const write = (file: string, text: string) => {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, text)
}
/** The user's command (HOME is the project's data dir in these tests). */
const userCommand = (p: Project, name: string, text: string) => write(path.join(p.dataDir, ".config", "reins", "commands", `${name}.md`), text)
const sent = (p: Project & { readonly server: { readonly requests: ReadonlyArray<{ readonly body: any }> } }) =>
  JSON.stringify(p.server.requests.at(-1)!.body.messages)

describe("reins run --command", () => {
  test("the command's prompt with the message as its arguments; its agent runs it", async () => {
    const p = await setup([{ text: "reviewed" }])
    userCommand(p, "review", "---\ndescription: Review files\nagent: plan\n---\nREVIEW-PROMPT: look at $ARGUMENTS for bugs.\n")
    const r = await reins(["run", "--command", "review", "src/a.ts", "src/b.ts"], p)
    expect(r.code).toBe(0)
    expect(sent(p)).toContain("REVIEW-PROMPT: look at src/a.ts src/b.ts for bugs.")
    // the plan agent's read-only note is in the system prompt
    expect(JSON.stringify(p.server.requests.at(-1)!.body)).toContain("You are in plan mode")
  })

  test("a project's command loads once the project is trusted; an unknown one is a usage error naming those there are", async () => {
    const p = await setup([{ text: "ok" }])
    write(path.join(p.cwd, ".reins", "commands", "ship.md"), "SHIP-PROMPT $ARGUMENTS\n")
    userCommand(p, "fix", "FIX $1\n")
    const untrusted = await reins(["run", "--command", "ship", "now"], p)
    expect(untrusted.code).toBe(2)
    expect(untrusted.stderr).toContain('No command "ship" (commands: fix)')
    expect(untrusted.stderr).toContain("the project is not trusted")
    await trust(p)
    const trusted = await reins(["run", "--command", "ship", "now"], p)
    expect(trusted.code).toBe(0)
    expect(sent(p)).toContain("SHIP-PROMPT now")
  })
})

test("the interactive session offers the commands after / and runs one with its arguments", async () => {
  const p = await setup([{ text: "The review is done." }])
  userCommand(p, "review", "---\ndescription: Review files\n---\nTUI-REVIEW of $ARGUMENTS please\n")
  await using pty = await openTui(p)
  pty.type("/rev")
  await pty.waitFor("Review files")
  await send(pty, "iew src/main.ts")
  await settled(pty, "The review is done.")
  expect(sent(p)).toContain("TUI-REVIEW of src/main.ts please")
  await send(pty, "/exit")
  expect(await pty.waitExit()).toBe(0)
})

test("an ACP editor is offered the commands, and /name runs the command's prompt", async () => {
  const p = await setup([{ text: "done" }])
  userCommand(p, "review", "---\ndescription: Review files\n---\nACP-REVIEW of $ARGUMENTS\n")
  const { result } = await withAcp(p, [], {}, async ({ ctx, updates }) => {
    const { sessionId } = await ctx.request("session/new", { cwd: p.cwd, mcpServers: [] })
    const response = await ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "/review lib.ts" }] })
    return { response, updates: [...updates] }
  })
  expect(result.response.stopReason).toBe("end_turn")
  expect(ofKind(result.updates, "available_commands_update")[0]!.availableCommands.map((c) => c.name)).toEqual(["undo", "redo", "review"])
  expect(sent(p)).toContain("ACP-REVIEW of lib.ts")
})
