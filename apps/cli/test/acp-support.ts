// An ACP client (the SDK's client side) driving the built `reins acp` over its stdio.
import {
  client,
  ndJsonStream,
  type ClientContext,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionNotification,
  type SessionUpdate
} from "@agentclientprotocol/sdk"
import { spawn } from "node:child_process"
import { Readable, Writable } from "node:stream"
import { BIN, HANG_MS, type Project } from "./support.ts"

export interface AcpClientOptions {
  /** The editor's open buffers by absolute path: offered as the fs capability when given. */
  readonly buffers?: Map<string, string>
  /** Answers a permission question (default: allow once). */
  readonly permission?: (request: RequestPermissionRequest, signal: AbortSignal) => RequestPermissionResponse | Promise<RequestPermissionResponse>
}

export interface AcpSession {
  readonly ctx: ClientContext
  readonly updates: Array<SessionNotification>
  readonly permissions: Array<RequestPermissionRequest>
  /** fs/read_text_file and fs/write_text_file calls, in order. */
  readonly fsCalls: Array<{ readonly method: "read" | "write"; readonly path: string; readonly content?: string }>
  /** Everything `reins acp` wrote to stdout that was not a protocol message, and its stderr. */
  readonly stderr: () => string
}

/** Spawns `reins acp` in the project, connects the SDK client to it, runs `op`, then closes stdin and waits for the exit. */
export const withAcp = async <T>(p: Project, args: ReadonlyArray<string>, options: AcpClientOptions, op: (session: AcpSession) => Promise<T>) => {
  const child = spawn("bun", [BIN, "acp", ...args], { cwd: p.cwd, env: p.env, stdio: ["pipe", "pipe", "pipe"] })
  let stderr = ""
  child.stderr.on("data", (b) => (stderr += b))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("close", (code, signal) => resolve({ code, signal }))
  )
  const updates: Array<SessionNotification> = []
  const permissions: Array<RequestPermissionRequest> = []
  const fsCalls: Array<{ method: "read" | "write"; path: string; content?: string }> = []
  const buffers = options.buffers
  let app = client({ name: "reins-test" })
    .onNotification("session/update", ({ params }) => void updates.push(params))
    .onRequest("session/request_permission", async ({ params, signal }) => {
      permissions.push(params)
      return options.permission ? await options.permission(params, signal) : { outcome: { outcome: "selected", optionId: "once" } }
    })
  if (buffers !== undefined) {
    app = app
      .onRequest("fs/read_text_file", ({ params }) => {
        fsCalls.push({ method: "read", path: params.path })
        const content = buffers.get(params.path)
        if (content === undefined) throw new Error(`no buffer for ${params.path}`)
        return { content }
      })
      .onRequest("fs/write_text_file", ({ params }) => {
        fsCalls.push({ method: "write", path: params.path, content: params.content })
        buffers.set(params.path, params.content)
        return {}
      })
  }
  const stream = ndJsonStream(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>)
  try {
    const result = await app.connectWith(stream, async (ctx) => {
      await ctx.request("initialize", {
        protocolVersion: 1,
        clientCapabilities: buffers !== undefined ? { fs: { readTextFile: true, writeTextFile: true } } : {}
      })
      return op({ ctx, updates, permissions, fsCalls, stderr: () => stderr })
    })
    child.stdin.end()
    return { result, exit: await exited, stderr }
  } finally {
    child.stdin.end()
    // a hang guard: a reins that does not exit once its stdin is closed is killed
    const timer = setTimeout(() => child.kill("SIGKILL"), HANG_MS)
    await exited
    clearTimeout(timer)
  }
}

/** The updates of one kind. */
export const ofKind = <K extends SessionUpdate["sessionUpdate"]>(updates: ReadonlyArray<SessionNotification>, kind: K) =>
  updates.map((n) => n.update).filter((u): u is Extract<SessionUpdate, { sessionUpdate: K }> => u.sessionUpdate === kind)

/** The text of the chunks of one kind, joined. */
export const chunkText = (updates: ReadonlyArray<SessionNotification>, kind: "agent_message_chunk" | "agent_thought_chunk" | "user_message_chunk") =>
  ofKind(updates, kind)
    .map((u) => (u.content.type === "text" ? u.content.text : ""))
    .join("")
