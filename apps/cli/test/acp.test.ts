import { beforeAll, describe, expect, test } from "bun:test"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { chunkText, ofKind, withAcp } from "./acp-support.ts"
import { spawn } from "node:child_process"
import { BIN, ensureBuilt, gate, HANG_MS, lastToolResult, projects, reins, waitFor } from "./support.ts"

beforeAll(() => ensureBuilt())

const setup = projects()

/** A number no other test's `sleep` uses, to find its processes. */
const marker = () => `4${Math.floor(Math.random() * 90000) + 10000}.5`

/** How many `sleep <n>` processes are still running. */
const sleeping = (n: string) =>
  Bun.spawnSync(["ps", "-eo", "args"])
    .stdout.toString()
    .split("\n")
    .filter((l) => l.trim() === `sleep ${n}`).length

/** `reins acp` spoken to line by line, without the SDK: what it writes to stdout is kept whole. */
const rawAcp = (p: { cwd: string; env: Record<string, string> }, args: ReadonlyArray<string>) => {
  const child = spawn("bun", [BIN, "acp", ...args], { cwd: p.cwd, env: p.env, stdio: ["pipe", "pipe", "pipe"] })
  let out = ""
  child.stdout.on("data", (b) => (out += b))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("close", (code, signal) => resolve({ code, signal }))
  )
  const responseOf = (id: number) => out.split("\n").find((l) => l.includes(`"id":${id},`) && (l.includes('"result"') || l.includes('"error"')))
  return {
    child,
    exited,
    out: () => out,
    send: (id: number, method: string, params: unknown) => void child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`),
    /** The result of request `id`, once answered. */
    answered: async (id: number) => {
      return JSON.parse(await waitFor(() => responseOf(id), `the answer to request ${id}`)).result
    }
  }
}

describe("reins acp", () => {
  test("initialize → new session → a bash and an edit turn streams its tool calls (pending → completed, a diff for the edit) and ends with end_turn", async () => {
    const p = await setup([
      { reasoning: "Let me look first.", toolCalls: [{ name: "bash", arguments: { command: "echo acp-bash-out" } }] },
      { toolCalls: [{ name: "edit", arguments: { filePath: "notes.txt", oldString: "old line", newString: "new line" } }] },
      { text: "Both done." }
    ])
    const file = path.join(p.cwd, "notes.txt")
    fs.writeFileSync(file, "first\nold line\nlast\n")
    const { result, stderr } = await withAcp(p, ["--yolo"], {}, async ({ ctx, updates }) => {
      const { sessionId } = await ctx.request("session/new", { cwd: p.cwd, mcpServers: [] })
      const response = await ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "run it and edit" }] })
      return { sessionId, response, updates: [...updates] }
    })
    expect(result.response.stopReason).toBe("end_turn")
    const updates = result.updates
    expect(updates.every((u) => u.sessionId === result.sessionId)).toBe(true)
    expect(chunkText(updates, "agent_message_chunk")).toBe("Both done.")
    expect(chunkText(updates, "agent_thought_chunk")).toBe("Let me look first.")
    // the thread's title, from the first prompt
    expect(ofKind(updates, "session_info_update").map((u) => u.title)).toEqual(["run it and edit"])
    // each call: announced pending, then updated to completed, in that order
    const calls = ofKind(updates, "tool_call")
    expect(calls.map((c) => [c.kind, c.status])).toEqual([
      ["execute", "pending"],
      ["edit", "pending"]
    ])
    const [bash, edit] = calls
    const updatesOf = (id: string) => ofKind(updates, "tool_call_update").filter((u) => u.toolCallId === id)
    expect(updatesOf(bash!.toolCallId).at(-1)!.status).toBe("completed")
    const bashContent = updatesOf(bash!.toolCallId).at(-1)!.content!
    expect(bashContent[0]!.type === "content" && bashContent[0]!.content.type === "text" ? bashContent[0]!.content.text : "").toContain("acp-bash-out")
    const editDone = updatesOf(edit!.toolCallId).at(-1)!
    expect(editDone.status).toBe("completed")
    expect(editDone.locations).toEqual([{ path: file }])
    expect(editDone.content).toEqual([{ type: "diff", path: file, oldText: "old line", newText: "new line" }])
    // the announcement came before its completion
    const order = updates
      .map((u) => u.update)
      .flatMap((u) => ("toolCallId" in u && u.toolCallId === edit!.toolCallId ? [u.sessionUpdate === "tool_call" ? "call" : u.status] : []))
    expect(order[0]).toBe("call")
    expect(order.at(-1)).toBe("completed")
    // without the fs capability the file is written on disk
    expect(fs.readFileSync(file, "utf8")).toBe("first\nnew line\nlast\n")
    expect(stderr).not.toContain("Error")
  })

  test("session/cancel during a running command: stop reason cancelled, the command's processes are gone, and the session takes the next prompt", async () => {
    const n = marker()
    const p = await setup([{ toolCalls: [{ name: "bash", arguments: { command: `sleep ${n} & sleep ${n}` } }] }, { text: "after cancel" }])
    const { result } = await withAcp(p, ["--yolo"], {}, async ({ ctx, updates }) => {
      const { sessionId } = await ctx.request("session/new", { cwd: p.cwd, mcpServers: [] })
      const prompt = ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "sleep" }] })
      await waitFor(() => sleeping(n) === 2, "both sleeps to run")
      const whileRunning = sleeping(n)
      await ctx.notify("session/cancel", { sessionId })
      const response = await prompt
      const atCancel = [...updates]
      await waitFor(() => sleeping(n) === 0, "both sleeps to be gone")
      const afterCancel = sleeping(n)
      const next = await ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "go on" }] })
      return { response, whileRunning, afterCancel, next, atCancel, updates: [...updates] }
    })
    expect(result.whileRunning).toBe(2)
    expect(result.response.stopReason).toBe("cancelled")
    // before the cancelled answer, the running call was shown ended
    const last = ofKind(result.atCancel, "tool_call_update").at(-1)!
    expect(last.status).toBe("failed")
    expect(JSON.stringify(last.content)).toContain("Interrupted")
    expect(result.afterCancel).toBe(0)
    expect(result.next.stopReason).toBe("end_turn")
    expect(chunkText(result.updates, "agent_message_chunk")).toBe("after cancel")
    // the model of the next turn was told the call was interrupted
    const told = JSON.stringify(p.server.requests.at(-1)!.body.messages)
    expect(told).toMatch(/interrupt/i)
  })

  test("permission questions go to the client: allow once runs the call, reject tells the model", async () => {
    const p = await setup(
      [
        { toolCalls: [{ name: "bash", arguments: { command: "echo allowed-once" } }] },
        { toolCalls: [{ name: "bash", arguments: { command: "echo never-run" } }] },
        { text: "understood" }
      ],
      { permission: { bash: "ask" } }
    )
    let asked = 0
    const { result } = await withAcp(
      p,
      [],
      { permission: () => ({ outcome: { outcome: "selected", optionId: asked++ === 0 ? "once" : "reject" } }) },
      async ({ ctx, updates, permissions }) => {
        const { sessionId } = await ctx.request("session/new", { cwd: p.cwd, mcpServers: [] })
        const response = await ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "two commands" }] })
        return { sessionId, response, permissions: [...permissions], updates: [...updates] }
      }
    )
    expect(result.response.stopReason).toBe("end_turn")
    expect(result.permissions).toHaveLength(2)
    const [first, second] = result.permissions
    expect(first!.sessionId).toBe(result.sessionId)
    expect(first!.options.map((o) => o.kind)).toEqual(["allow_once", "allow_always", "reject_once"])
    expect(first!.toolCall.title).toContain("echo allowed-once")
    // the question names the call the client was told about
    const calls = ofKind(result.updates, "tool_call")
    expect(calls.map((c) => c.toolCallId)).toEqual([first!.toolCall.toolCallId, second!.toolCall.toolCallId])
    const finals = ofKind(result.updates, "tool_call_update").filter((u) => u.status === "completed" || u.status === "failed")
    expect(finals.map((u) => u.status)).toEqual(["completed", "failed"])
    // the model saw the output of the allowed call, then the rejection of the other
    expect(JSON.stringify(p.server.requests[1]!.body.messages)).toContain("allowed-once")
    expect(lastToolResult(p.server.requests)).toContain("The user rejected permission for bash")
    expect(JSON.stringify(p.server.requests.map((r) => r.body.messages))).not.toContain("never-run\\n")
  })

  test("an edit's permission question carries the change as diff content", async () => {
    const p = await setup(
      [
        { toolCalls: [{ name: "edit", arguments: { filePath: "app.ts", oldString: "const port = 80", newString: "const port = 8080" } }] },
        { toolCalls: [{ name: "write", arguments: { filePath: "notes/new.md", content: "# new\n" } }] },
        { text: "done" }
      ],
      { permission: { edit: "ask" } }
    )
    fs.writeFileSync(path.join(p.cwd, "app.ts"), "// server\nconst port = 80\nlisten(port)\n")
    const { result } = await withAcp(p, [], {}, async ({ ctx, permissions }) => {
      const { sessionId } = await ctx.request("session/new", { cwd: p.cwd, mcpServers: [] })
      const response = await ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "edit" }] })
      return { response, permissions: [...permissions] }
    })
    expect(result.response.stopReason).toBe("end_turn")
    const [edit, write] = result.permissions
    const cwd = fs.realpathSync(p.cwd)
    expect(edit!.toolCall.kind).toBe("edit")
    expect(edit!.toolCall.locations).toEqual([{ path: path.join(cwd, "app.ts") }])
    expect(edit!.toolCall.content).toEqual([
      {
        type: "diff",
        path: path.join(cwd, "app.ts"),
        oldText: "// server\nconst port = 80\nlisten(port)",
        newText: "// server\nconst port = 8080\nlisten(port)"
      }
    ])
    // a new file has no old text
    expect(write!.toolCall.content).toEqual([{ type: "diff", path: path.join(cwd, "notes/new.md"), oldText: null, newText: "# new" }])
    expect(fs.readFileSync(path.join(p.cwd, "app.ts"), "utf8")).toContain("8080")
  })

  test("/undo and /redo are offered as commands and run without a turn: the files back, the model no longer sees the turn", async () => {
    const p = await setup([
      { toolCalls: [{ name: "bash", arguments: { command: "echo changed > notes.txt && touch made.txt" } }] },
      { text: "CHANGED-IT" },
      { text: "AFTER-UNDO" }
    ])
    fs.writeFileSync(path.join(p.cwd, "notes.txt"), "original\n")
    const { result } = await withAcp(p, ["--yolo"], {}, async ({ ctx, updates }) => {
      const { sessionId } = await ctx.request("session/new", { cwd: p.cwd, mcpServers: [] })
      await ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "change the notes" }] })
      const changed = fs.readFileSync(path.join(p.cwd, "notes.txt"), "utf8")
      const undo = await ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "/undo" }] })
      const undone = { notes: fs.readFileSync(path.join(p.cwd, "notes.txt"), "utf8"), made: fs.existsSync(path.join(p.cwd, "made.txt")) }
      const redo = await ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "/redo" }] })
      const redone = fs.readFileSync(path.join(p.cwd, "notes.txt"), "utf8")
      await ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "/undo --force" }] })
      await ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "go on" }] })
      // a new prompt made the undo final: nothing to redo, said as the answer
      const late = await ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "/redo" }] })
      return { changed, undo, undone, redo, redone, late, updates: [...updates] }
    })
    const offered = ofKind(result.updates, "available_commands_update")[0]!
    expect(offered.availableCommands.map((c) => c.name)).toEqual(["undo", "redo"])
    expect(result.changed).toBe("changed\n")
    expect(result.undo.stopReason).toBe("end_turn")
    expect(result.undone).toEqual({ notes: "original\n", made: false })
    expect(result.redone).toBe("changed\n")
    const said = chunkText(result.updates, "agent_message_chunk")
    expect(said).toContain("Undid 1 message and 2 files (made.txt, notes.txt).")
    expect(said).toContain("Redid 1 message and 2 files")
    expect(result.late.stopReason).toBe("end_turn")
    expect(said).toContain("Could not redo: Nothing to redo")
    // the last prompt went to the model without the undone turn; the commands never did
    expect(p.server.requests).toHaveLength(3)
    const sent = JSON.stringify(p.server.requests.at(-1)!.body.messages)
    expect(sent).not.toContain("change the notes")
    expect(sent).not.toContain("/undo")
    expect(sent).toContain("go on")
  })

  test("a message over the size limit is refused with an error naming its size, and the agent stays up; a missing cwd is named", async () => {
    const p = await setup([{ text: "still here" }])
    const { result } = await withAcp(p, [], {}, async ({ ctx }) => {
      const { sessionId } = await ctx.request("session/new", { cwd: p.cwd, mcpServers: [] })
      const huge = await ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "x".repeat(30 * 1024 * 1024) }] }).then(
        () => "answered",
        (e: unknown) => (e instanceof Error ? e.message : JSON.stringify(e))
      )
      const after = await ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "small" }] })
      const missing = path.join(p.cwd, "no-such-dir")
      const gone = await ctx.request("session/new", { cwd: missing, mcpServers: [] }).then(
        () => "made",
        (e: unknown) => (e instanceof Error ? e.message : JSON.stringify(e))
      )
      return { huge, after, gone, missing }
    })
    expect(result.huge).toContain("is 30.0 MiB, over the 24.0 MiB reins acp takes")
    expect(result.after.stopReason).toBe("end_turn")
    // the refused prompt never reached the model
    expect(p.server.requests).toHaveLength(1)
    expect(result.gone).toContain(`cwd ${result.missing} does not exist`)
    expect(result.gone).not.toContain("No model configured")
  })

  test("session/cancel while a permission question waits: the question is withdrawn from the client and the stop reason is cancelled", async () => {
    const p = await setup([{ toolCalls: [{ name: "bash", arguments: { command: "echo waiting-for-answer" } }] }, { text: "never asked" }], {
      permission: { bash: "ask" }
    })
    let withdrawn = false
    const { result } = await withAcp(
      p,
      [],
      {
        // never answered by the user: the question ends when reins withdraws it ($/cancel_request)
        permission: (_request, signal) =>
          new Promise((resolve) =>
            signal.addEventListener("abort", () => {
              withdrawn = true
              resolve({ outcome: { outcome: "cancelled" } })
            })
          )
      },
      async ({ ctx, permissions, updates }) => {
        const { sessionId } = await ctx.request("session/new", { cwd: p.cwd, mcpServers: [] })
        const prompt = ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "ask me" }] })
        await waitFor(() => permissions.length === 1, "the permission question")
        await ctx.notify("session/cancel", { sessionId })
        const response = await prompt
        // withdrawn by reins itself, while the connection is still open
        await waitFor(() => withdrawn, "the question withdrawn")
        return { response, asked: permissions.length, withdrawn, updates: [...updates] }
      }
    )
    expect(result.asked).toBe(1)
    expect(result.response.stopReason).toBe("cancelled")
    // the model was never asked again, and the command never ran
    expect(p.server.requests).toHaveLength(1)
    expect(JSON.stringify(result.updates)).not.toContain("waiting-for-answer\\n")
    expect(result.withdrawn).toBe(true)
  })

  test("modes are reins's primary agents: in plan mode an edit is denied, and a loaded session goes on in the mode it ran", async () => {
    const p = await setup([
      { toolCalls: [{ name: "edit", arguments: { filePath: "plan.txt", oldString: "keep", newString: "changed" } }] },
      { text: "I only plan." }
    ])
    const file = path.join(p.cwd, "plan.txt")
    fs.writeFileSync(file, "keep\n")
    const first = await withAcp(p, [], {}, async ({ ctx, updates }) => {
      const created = await ctx.request("session/new", { cwd: p.cwd, mcpServers: [] })
      const unknown = await ctx.request("session/set_mode", { sessionId: created.sessionId, modeId: "nonesuch" }).then(
        () => "set",
        (e: { message?: string }) => e.message
      )
      await ctx.request("session/set_mode", { sessionId: created.sessionId, modeId: "plan" })
      const response = await ctx.request("session/prompt", { sessionId: created.sessionId, prompt: [{ type: "text", text: "change it" }] })
      return { created, unknown, response, updates: [...updates] }
    })
    const { created, unknown, response, updates } = first.result
    expect(created.modes?.currentModeId).toBe("build")
    expect(created.modes?.availableModes.map((m) => m.id)).toEqual(expect.arrayContaining(["build", "plan"]))
    expect(created.modes?.availableModes.map((m) => m.id)).not.toContain("explore")
    expect(unknown).toContain('No mode "nonesuch"')
    expect(response.stopReason).toBe("end_turn")
    expect(ofKind(updates, "tool_call_update").at(-1)!.status).toBe("failed")
    expect(fs.readFileSync(file, "utf8")).toBe("keep\n")
    const loaded = await withAcp(p, [], {}, async ({ ctx }) => ctx.request("session/load", { sessionId: created.sessionId, cwd: p.cwd, mcpServers: [] }))
    expect(loaded.result.modes?.currentModeId).toBe("plan")
  })

  test("the todowrite tool's list is the client's plan, updated as it changes; todoread reads it back", async () => {
    const todos = [
      { id: "1", content: "read the code", status: "completed", priority: "high" },
      { id: "2", content: "write the fix", status: "in_progress", priority: "medium" },
      { id: "3", content: "old idea", status: "cancelled", priority: "low" }
    ]
    const p = await setup([
      { toolCalls: [{ name: "todowrite", arguments: { todos } }] },
      { toolCalls: [{ name: "todoread", arguments: {} }] },
      { text: "planned" }
    ])
    const { result } = await withAcp(p, [], {}, async ({ ctx, updates }) => {
      const { sessionId } = await ctx.request("session/new", { cwd: p.cwd, mcpServers: [] })
      const response = await ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "plan it" }] })
      return { response, updates: [...updates] }
    })
    expect(result.response.stopReason).toBe("end_turn")
    expect(ofKind(result.updates, "tool_call")[0]!.kind).toBe("think")
    // a cancelled item is no longer part of the plan
    expect(ofKind(result.updates, "plan")).toEqual([
      {
        sessionUpdate: "plan",
        entries: [
          { content: "read the code", status: "completed", priority: "high" },
          { content: "write the fix", status: "in_progress", priority: "medium" }
        ]
      }
    ])
    expect(lastToolResult(p.server.requests)).toContain("[~] write the fix")
  })

  test("session/load in a new process replays the history: the user's prompt, the answer and each call with its final status", async () => {
    const p = await setup([{ toolCalls: [{ name: "bash", arguments: { command: "echo from-history" } }] }, { text: "History answer." }])
    const first = await withAcp(p, ["--yolo"], {}, async ({ ctx }) => {
      const { sessionId } = await ctx.request("session/new", { cwd: p.cwd, mcpServers: [] })
      await ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "remember this prompt" }] })
      return sessionId
    })
    const sessionId = first.result
    const { result } = await withAcp(p, [], {}, async ({ ctx, updates }) => {
      const response = await ctx.request("session/load", { sessionId, cwd: p.cwd, mcpServers: [] })
      // the replay is sent before the load answers; notifications may still be in the client's queue
      await waitFor(() => chunkText(updates, "agent_message_chunk") === "History answer.", "the replayed answer")
      return { response, updates: [...updates] }
    })
    expect(result.response.modes?.currentModeId).toBe("build")
    expect(chunkText(result.updates, "user_message_chunk")).toBe("remember this prompt")
    expect(chunkText(result.updates, "agent_message_chunk")).toBe("History answer.")
    // the replay in order; the commands the session offers are announced beside it, whenever they are ready
    const kinds = result.updates.map((u) => u.update.sessionUpdate).filter((k) => k !== "available_commands_update")
    expect(kinds).toEqual(["user_message_chunk", "tool_call", "tool_call_update", "agent_message_chunk"])
    const done = ofKind(result.updates, "tool_call_update")[0]!
    expect(done.status).toBe("completed")
    expect(JSON.stringify(done.content)).toContain("from-history")
  })

  test("session/load of an unknown session is a not-found error", async () => {
    const p = await setup([])
    const { result } = await withAcp(p, [], {}, async ({ ctx }) =>
      ctx.request("session/load", { sessionId: "ses_missing", cwd: p.cwd, mcpServers: [] }).then(
        () => "loaded",
        (e: { code?: number }) => e.code
      )
    )
    expect(result).toBe(-32002)
  })

  test("with the fs capability an edit reads the editor's unsaved buffer, not the disk, and writes through the client", async () => {
    const p = await setup([
      { toolCalls: [{ name: "read", arguments: { filePath: "buffer.txt" } }] },
      { toolCalls: [{ name: "edit", arguments: { filePath: "buffer.txt", oldString: "unsaved line", newString: "edited line" } }] },
      { text: "edited the buffer" }
    ])
    const file = path.join(p.cwd, "buffer.txt")
    fs.writeFileSync(file, "saved on disk\n")
    const buffers = new Map([[file, "header\nunsaved line\n"]])
    const { result } = await withAcp(p, ["--yolo"], { buffers }, async ({ ctx, updates, fsCalls }) => {
      const { sessionId } = await ctx.request("session/new", { cwd: p.cwd, mcpServers: [] })
      const response = await ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "edit the open file" }] })
      return { response, fsCalls: [...fsCalls], updates: [...updates] }
    })
    expect(result.response.stopReason).toBe("end_turn")
    // the model read the buffer's text
    expect(JSON.stringify(p.server.requests[1]!.body.messages)).toContain("unsaved line")
    expect(JSON.stringify(p.server.requests[1]!.body.messages)).not.toContain("saved on disk")
    expect(result.fsCalls).toEqual([
      { method: "read", path: file },
      { method: "read", path: file },
      { method: "write", path: file, content: "header\nedited line\n" }
    ])
    expect(buffers.get(file)).toBe("header\nedited line\n")
    // the disk is the editor's to save
    expect(fs.readFileSync(file, "utf8")).toBe("saved on disk\n")
    const finals = ofKind(result.updates, "tool_call_update").filter((u) => u.status === "completed")
    expect(finals).toHaveLength(2)
  })

  test("a second prompt while one runs is queued into its turn (as run and serve do), and session/load is refused until it ends", async () => {
    const held = gate("acp-go")
    const p = await setup([{ toolCalls: [{ name: "bash", arguments: { command: held.command } }] }, { text: "both answered" }])
    const { result } = await withAcp(p, ["--yolo"], {}, async ({ ctx }) => {
      const { sessionId } = await ctx.request("session/new", { cwd: p.cwd, mcpServers: [] })
      const first = ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "wait" }] })
      // the first prompt's turn holds the session (its command waits for the gate)
      await waitFor(() => p.server.requests.length === 1, "the first model call")
      const refusal = (e: { message?: string; data?: unknown }) => `${e.message} ${JSON.stringify(e.data ?? "")}`
      const second = await ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "QUEUED-BY-ACP" }] })
      const load = await ctx.request("session/load", { sessionId, cwd: p.cwd, mcpServers: [] }).then(() => "loaded", refusal)
      held.open(p)
      const done = await first
      const loaded = await ctx.request("session/load", { sessionId, cwd: p.cwd, mcpServers: [] })
      return { second, load, done, loaded }
    })
    expect(result.second.stopReason).toBe("end_turn")
    expect(result.load).toContain("cancel it")
    expect(result.done.stopReason).toBe("end_turn")
    expect(result.loaded.modes?.currentModeId).toBe("build")
    // one turn: its second model call read the queued prompt
    expect(p.server.requests).toHaveLength(2)
    expect(JSON.stringify(p.server.requests[1]!.body.messages)).toContain("QUEUED-BY-ACP")
  })

  test("a prompt to a session another reins process is running is queued into that process's turn (as run and serve do)", async () => {
    const held = gate("acp-elsewhere")
    const p = await setup([{ toolCalls: [{ name: "bash", arguments: { command: held.command } }] }, { text: "read it elsewhere" }])
    const other = spawn(BIN, ["run", "--yolo", "--format", "json", "start over there"], { cwd: p.cwd, env: p.env, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    other.stdout!.on("data", (b) => (stdout += b))
    const exited = new Promise<number | null>((resolve) => other.on("close", (code) => resolve(code)))
    // the run holds the session once it asks the model
    const sessionId = await waitFor(() => p.server.requests.length === 1 && /"id":"(ses_\w+)"/.exec(stdout)?.[1], "the other process's turn")
    const { result } = await withAcp(p, ["--yolo"], {}, async ({ ctx, updates }) => {
      await ctx.request("session/load", { sessionId, cwd: p.cwd, mcpServers: [] })
      const response = await ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "A-NOTE-FROM-ACP" }] })
      return { response, updates: [...updates] }
    })
    held.open(p)
    expect(await exited).toBe(0)
    expect(result.response.stopReason).toBe("end_turn")
    expect(chunkText(result.updates, "agent_message_chunk")).toContain("your message was queued")
    expect(stdout).toContain("read it elsewhere")
    expect(p.server.requests).toHaveLength(2)
    expect(JSON.stringify(p.server.requests[1]!.body.messages)).toContain("A-NOTE-FROM-ACP")
  })

  test("session/cancel of a session another reins process is running asks that process to stop its turn (as serve's abort does)", async () => {
    const held = gate("acp-cancel-elsewhere")
    const p = await setup([{ toolCalls: [{ name: "bash", arguments: { command: held.command } }] }, { text: "never" }])
    const other = spawn(BIN, ["run", "--yolo", "--format", "json", "start over there"], { cwd: p.cwd, env: p.env, stdio: ["ignore", "pipe", "ignore"] })
    let stdout = ""
    other.stdout!.on("data", (b) => (stdout += b))
    const exited = new Promise<number | null>((resolve) => other.on("close", (code) => resolve(code)))
    const sessionId = await waitFor(() => p.server.requests.length === 1 && /"id":"(ses_\w+)"/.exec(stdout)?.[1], "the other process's turn")
    await withAcp(p, ["--yolo"], {}, async ({ ctx }) => {
      await ctx.request("session/load", { sessionId, cwd: p.cwd, mcpServers: [] })
      await ctx.notify("session/cancel", { sessionId })
      // the other process stops its turn within a second of the request
      expect(await exited).toBe(130)
    })
    expect(p.server.requests).toHaveLength(1)
  })

  test("a file outside the session's directory read through the editor is still permission-checked: rejected, the editor is never asked for it", async () => {
    const outside = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-outside-")))
    const secret = path.join(outside, "secret.txt")
    fs.writeFileSync(secret, "on disk\n")
    for (const answer of ["reject", "once"] as const) {
      const p = await setup([{ toolCalls: [{ name: "read", arguments: { filePath: secret } }] }, { text: "read or not" }], {
        permission: { external_directory: "ask" }
      })
      const buffers = new Map([[secret, "OUTSIDE-BUFFER\n"]])
      const { result } = await withAcp(
        p,
        [],
        { buffers, permission: () => ({ outcome: { outcome: "selected", optionId: answer } }) },
        async ({ ctx, permissions, fsCalls }) => {
          const { sessionId } = await ctx.request("session/new", { cwd: p.cwd, mcpServers: [] })
          const response = await ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "read the outside file" }] })
          return { response, permissions: [...permissions], fsCalls: [...fsCalls] }
        }
      )
      expect(result.response.stopReason).toBe("end_turn")
      expect(result.permissions.map((q) => q.toolCall.title)).toEqual([expect.stringContaining(outside)])
      const sent = JSON.stringify(p.server.requests[1]!.body.messages)
      if (answer === "reject") {
        expect(result.fsCalls).toEqual([])
        expect(sent).not.toContain("OUTSIDE-BUFFER")
      } else {
        expect(result.fsCalls).toEqual([{ method: "read", path: secret }])
        expect(sent).toContain("OUTSIDE-BUFFER")
      }
    }
  })

  test("stdout carries only JSON-RPC messages, one per line, through a whole turn", async () => {
    const p = await setup([{ toolCalls: [{ name: "bash", arguments: { command: "echo to-stdout-of-bash" } }] }, { text: "plain answer" }])
    const { child, exited, out: output, send, answered } = rawAcp(p, ["--yolo"])
    send(1, "initialize", { protocolVersion: 1, clientCapabilities: {} })
    await answered(1)
    send(2, "session/new", { cwd: p.cwd, mcpServers: [] })
    const { sessionId } = await answered(2)
    send(3, "session/prompt", { sessionId, prompt: [{ type: "text", text: "hi" }] })
    expect((await answered(3)).stopReason).toBe("end_turn")
    child.stdin.end()
    expect((await exited).code).toBe(0)
    const lines = output()
      .split("\n")
      .filter((l) => l !== "")
    expect(lines.length).toBeGreaterThan(4)
    for (const line of lines) expect(JSON.parse(line).jsonrpc).toBe("2.0")
    // the command's own output reached the client only inside a tool call update
    expect(lines.filter((l) => l.includes("to-stdout-of-bash")).every((l) => l.includes("tool_call"))).toBe(true)
  })

  for (const how of ["the editor closes the connection", "SIGTERM"] as const) {
    test(`${how} mid-command: reins acp stops the command's processes, marks the call interrupted and exits`, async () => {
      const n = marker()
      const p = await setup([{ toolCalls: [{ name: "bash", arguments: { command: `sleep ${n} & sleep ${n}` } }] }, { text: "never asked" }])
      const { child, exited, send, answered } = rawAcp(p, ["--yolo"])
      send(1, "initialize", { protocolVersion: 1, clientCapabilities: {} })
      await answered(1)
      send(2, "session/new", { cwd: p.cwd, mcpServers: [] })
      const { sessionId } = await answered(2)
      send(3, "session/prompt", { sessionId, prompt: [{ type: "text", text: "sleep" }] })
      await waitFor(() => sleeping(n) === 2, "both sleeps to run")
      expect(sleeping(n)).toBe(2)
      if (how === "SIGTERM") child.kill("SIGTERM")
      else child.stdin.end()
      // a hang guard: a reins that never exits is killed, and the test fails on its signal
      const timer = setTimeout(() => child.kill("SIGKILL"), HANG_MS)
      const exit = await exited
      clearTimeout(timer)
      expect(exit.signal).toBeNull()
      await waitFor(() => sleeping(n) === 0, "both sleeps to be gone")
      expect(sleeping(n)).toBe(0)
      const exported = JSON.parse((await reins(["sessions", "export", sessionId], p)).stdout)
      const tool = exported.messages.flatMap((m: any) => m.parts).find((x: any) => x.type === "tool")
      expect(tool.state.status).toBe("error")
      expect(tool.state.interrupted).toBe(true)
    })
  }

  test("a project without a model: session/new fails with the message that says what to set", async () => {
    const p = await setup([])
    fs.writeFileSync(p.configFile, "{}")
    const { result } = await withAcp(p, [], {}, async ({ ctx }) =>
      ctx.request("session/new", { cwd: p.cwd, mcpServers: [] }).then(
        () => "created",
        (e: { message?: string }) => e.message
      )
    )
    expect(result).toContain("No model configured")
  })
})
