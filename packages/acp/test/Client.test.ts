// The prompter and the file access over a real ACP connection (the SDK's agent and client apps, connected in process).
import { agent, client, type RequestPermissionResponse } from "@agentclientprotocol/sdk"
import { describe, expect, test } from "bun:test"
import { Effect, Fiber } from "effect"
import type { Pending } from "@reins/permission"
import { waitFor } from "@reins/testkit"
import { FileAccess, applyPatchText } from "@reins/tool"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { acpPrompter, clientRef, replyOf } from "../src/AcpPrompter.ts"
import { clientFiles } from "../src/ClientFiles.ts"
import { promptInput } from "../src/PromptContent.ts"

const pending: Pending = {
  id: "per_1",
  sessionID: "ses_1",
  permission: "bash",
  patterns: ["rm -rf build"],
  always: ["rm *"],
  callID: "call_9",
  command: "rm -rf build"
}

/** An agent connected to a client whose handlers are given; the agent side's context. */
const connected = (setup: (app: ReturnType<typeof client>) => ReturnType<typeof client>) => {
  const connection = agent({ name: "reins" }).connect(setup(client({ name: "editor" })))
  return connection.client
}

describe("acpPrompter", () => {
  test("asks the session's client with allow once / always / reject, naming the call, and maps the answer", async () => {
    const asked: Array<unknown> = []
    let answer: RequestPermissionResponse = { outcome: { outcome: "selected", optionId: "always" } }
    const ref = clientRef()
    ref.current = connected((app) =>
      app.onRequest("session/request_permission", ({ params }) => {
        asked.push(params)
        return answer
      })
    )
    const prompter = acpPrompter(ref)
    expect(await Effect.runPromise(prompter.ask(pending))).toEqual({ reply: "always" })
    expect(asked[0]).toMatchObject({
      sessionId: "ses_1",
      toolCall: { toolCallId: "call_9", title: "bash: rm -rf build" },
      options: [
        { optionId: "once", kind: "allow_once" },
        { optionId: "always", kind: "allow_always", name: "Always allow bash rm *" },
        { optionId: "reject", kind: "reject_once" }
      ]
    })
    answer = { outcome: { outcome: "selected", optionId: "reject" } }
    expect(await Effect.runPromise(prompter.ask(pending))).toEqual({ reply: "reject" })
  })

  test("a question whose turn is interrupted is withdrawn from the client", async () => {
    let withdrawn = false
    let received = false
    const ref = clientRef()
    ref.current = connected((app) =>
      app.onRequest("session/request_permission", ({ signal }) => {
        received = true
        return new Promise<RequestPermissionResponse>((resolve) =>
          signal.addEventListener("abort", () => {
            withdrawn = true
            resolve({ outcome: { outcome: "cancelled" } })
          })
        )
      })
    )
    const fiber = Effect.runFork(acpPrompter(ref).ask(pending))
    await waitFor(() => received, "the client to receive the question")
    await Effect.runPromise(Fiber.interrupt(fiber))
    expect(await waitFor(() => withdrawn, "the client to see the question withdrawn")).toBe(true)
  })

  test("no client, a client that fails, a cancelled or unknown outcome: the call is rejected", async () => {
    expect((await Effect.runPromise(acpPrompter(clientRef()).ask(pending))).reply).toBe("reject")
    const ref = clientRef()
    ref.current = connected((app) =>
      app.onRequest("session/request_permission", () => {
        throw new Error("editor crashed")
      })
    )
    expect((await Effect.runPromise(acpPrompter(ref).ask(pending))).reply).toBe("reject")
    expect(replyOf({ outcome: { outcome: "cancelled" } })).toEqual({ reply: "reject", message: "The user cancelled the turn." })
    expect(replyOf({ outcome: { outcome: "selected", optionId: "whatever" } })).toEqual({ reply: "reject" })
    expect(replyOf({ outcome: { outcome: "selected", optionId: "once" } })).toEqual({ reply: "once" })
  })
})

describe("clientFiles", () => {
  const project = () => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-acp-files-")))

  const editor = (buffers: Map<string, string>, calls: Array<string>) =>
    connected((app) =>
      app
        .onRequest("fs/read_text_file", ({ params }) => {
          calls.push(`read ${path.basename(params.path)}`)
          return { content: buffers.get(params.path) ?? fs.readFileSync(params.path, "utf8") }
        })
        .onRequest("fs/write_text_file", ({ params }) => {
          calls.push(`write ${path.basename(params.path)}`)
          buffers.set(params.path, params.content)
          return {}
        })
    )

  test("apply_patch patches the editor's buffer and writes it back through the editor; an added file goes to disk", async () => {
    const cwd = project()
    const file = path.join(cwd, "a.txt")
    fs.writeFileSync(file, "on disk\n")
    const buffers = new Map([[file, "one\nunsaved\nthree\n"]])
    const calls: Array<string> = []
    const files = clientFiles(editor(buffers, calls), "ses_1", { readTextFile: true, writeTextFile: true })
    const patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-unsaved\n+patched\n three\n*** Add File: b.txt\n+new file\n*** End Patch"
    await Effect.runPromise(applyPatchText(cwd, patch).pipe(Effect.provideService(FileAccess, files)))
    expect(buffers.get(file)).toBe("one\npatched\nthree\n")
    expect(fs.readFileSync(file, "utf8")).toBe("on disk\n")
    expect(fs.readFileSync(path.join(cwd, "b.txt"), "utf8")).toBe("new file\n")
    expect(calls).toEqual(["read a.txt", "write a.txt"])
  })

  test("a binary file is read from disk, never asked of the editor; without the capability everything stays on disk", async () => {
    const cwd = project()
    const binary = path.join(cwd, "blob.bin")
    fs.writeFileSync(binary, new Uint8Array([0, 1, 2, 0]))
    const text = path.join(cwd, "t.txt")
    fs.writeFileSync(text, "disk text\n")
    const calls: Array<string> = []
    const ctx = editor(new Map([[text, "buffer text\n"]]), calls)
    const withFs = clientFiles(ctx, "ses_1", { readTextFile: true, writeTextFile: true })
    expect(await Effect.runPromise(withFs.read(binary))).toEqual(new Uint8Array([0, 1, 2, 0]))
    expect(calls).toEqual([])
    const without = clientFiles(ctx, "ses_1", undefined)
    expect(new TextDecoder().decode(await Effect.runPromise(without.read(text)))).toBe("disk text\n")
    await Effect.runPromise(without.write(text, "written\n"))
    expect(fs.readFileSync(text, "utf8")).toBe("written\n")
    expect(calls).toEqual([])
  })

  test("an editor that fails a write fails the tool with a message saying nothing was written", async () => {
    const cwd = project()
    const file = path.join(cwd, "a.txt")
    fs.writeFileSync(file, "x\n")
    const ctx = connected((app) =>
      app.onRequest("fs/write_text_file", () => {
        throw new Error("read-only buffer")
      })
    )
    const error = await Effect.runPromise(Effect.flip(clientFiles(ctx, "ses_1", { writeTextFile: true }).write(file, "y\n")))
    expect(error.message).toContain(`Could not write ${file} through the editor`)
    expect(fs.readFileSync(file, "utf8")).toBe("x\n")
  })
})

describe("promptInput", () => {
  test("text is the message; a linked file is named; an embedded file and an image are attached", () => {
    const input = promptInput([
      { type: "text", text: "look at" },
      { type: "resource_link", uri: "file:///p/src/a.ts", name: "a.ts" },
      { type: "resource", resource: { uri: "file:///p/b.md", text: "# B\n", mimeType: "text/markdown" } },
      { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" }
    ])
    expect(input.text).toBe("look at\n@/p/src/a.ts")
    expect(input.files).toEqual([
      { mime: "text/markdown", filename: "/p/b.md", url: `data:text/markdown;base64,${Buffer.from("# B\n").toString("base64")}` },
      { mime: "image/png", url: "data:image/png;base64,iVBORw0KGgo=" }
    ])
  })
})
