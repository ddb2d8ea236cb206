// `/export`: a session as Markdown (for people) or JSON (the same document as `reins sessions export`).
import * as path from "node:path"
import type { MessageWithParts, Session } from "@reins/domain"

export type ExportFormat = "md" | "json"

const fence = (text: string, lang = "") => {
  const ticks = "`".repeat(Math.max(3, ...Array.from(text.matchAll(/`{3,}/g), (m) => m[0].length + 1)))
  return `${ticks}${lang}\n${text.replace(/\n$/, "")}\n${ticks}`
}

/** The session as Markdown: the title, then each message's text, reasoning (quoted) and tool calls (input and result fenced). */
export const toMarkdown = (session: Session, messages: ReadonlyArray<MessageWithParts>): string => {
  const out = [`# ${session.title}`, "", `session ${session.id} · ${session.directory} · ${new Date(session.time.created).toISOString()}`, ""]
  for (const m of messages) {
    out.push(m.info.role === "user" ? "## User" : `## Assistant (${m.info.model.providerID}/${m.info.model.modelID})`, "")
    for (const part of m.parts) {
      if (part.type === "text" && part.text.trim() !== "") out.push(part.text, "")
      else if (part.type === "reasoning" && part.text.trim() !== "")
        out.push(
          part.text
            .split("\n")
            .map((l) => `> ${l}`)
            .join("\n"),
          ""
        )
      else if (part.type === "tool") {
        const state = part.state
        out.push(
          `**${part.tool}** ${"title" in state && state.title ? state.title : ""}`.trimEnd(),
          "",
          fence(JSON.stringify(state.input, null, 2), "json"),
          ""
        )
        if (state.status === "completed") out.push(fence(state.output), "")
        else if (state.status === "error") out.push(`Error: ${state.error}`, "")
      }
    }
  }
  return `${out.join("\n").trimEnd()}\n`
}

/** The session as JSON, as `reins sessions export` writes it. */
export const toJson = (session: Session, messages: ReadonlyArray<MessageWithParts>) => `${JSON.stringify({ version: 1, session, messages }, null, 2)}\n`

/**
 * Where `/export [md|json] [file]` writes: the file given (relative to the project), else
 * `reins-<session id>.<format>` in the project directory.
 */
export const exportTarget = (args: ReadonlyArray<string>, cwd: string, sessionID: string): { readonly format: ExportFormat; readonly file: string } => {
  let format: ExportFormat | undefined
  let file: string | undefined
  for (const a of args) {
    if (a === "md" || a === "markdown") format = "md"
    else if (a === "json") format = "json"
    else file = a
  }
  const chosen: ExportFormat = format ?? (file?.endsWith(".json") ? "json" : "md")
  return { format: chosen, file: path.resolve(cwd, file ?? `reins-${sessionID}.${chosen}`) }
}
