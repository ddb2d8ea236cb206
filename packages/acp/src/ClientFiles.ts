import type { AgentContext, FileSystemCapabilities } from "@agentclientprotocol/sdk"
import { Effect } from "effect"
import { ToolError, diskFiles, isTextContent, type FileAccessService } from "@reins/tool"

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error))

const failed = (message: string) => new ToolError({ reason: "failed", message })

/**
 * The file access of one ACP session: text files read and written through the client when it
 * offers `fs.readTextFile` / `fs.writeTextFile`, so the agent sees the editor's unsaved buffers and
 * its edits land in them. The file is read from disk first: an image or a binary file is kept as
 * its bytes (the client only deals in text).
 */
export const clientFiles = (client: AgentContext, sessionId: string, fs: FileSystemCapabilities | undefined): FileAccessService => ({
  read: (path) =>
    Effect.gen(function* () {
      const bytes = yield* diskFiles.read(path)
      if (fs?.readTextFile !== true || !isTextContent(path, bytes)) return bytes
      const { content } = yield* Effect.tryPromise({
        try: (signal) => client.request("fs/read_text_file", { sessionId, path }, { cancellationSignal: signal, stopWaitingOnCancel: true }),
        catch: (e) => failed(`Could not read ${path} through the editor: ${describe(e)}.`)
      })
      return new TextEncoder().encode(content)
    }),
  write: (path, content) =>
    fs?.writeTextFile !== true
      ? diskFiles.write(path, content)
      : Effect.tryPromise({
          try: (signal) =>
            client.request(
              "fs/write_text_file",
              { sessionId, path, content: typeof content === "string" ? content : new TextDecoder().decode(content) },
              { cancellationSignal: signal, stopWaitingOnCancel: true }
            ),
          catch: (e) => failed(`Could not write ${path} through the editor: ${describe(e)}. Nothing was written.`)
        }).pipe(Effect.asVoid)
})
