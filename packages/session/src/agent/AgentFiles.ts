import { Effect, Schema, SchemaIssue } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { AgentConfig } from "@reins/domain"
import { parseFrontMatter } from "@reins/tool"

/** An agent read from a Markdown file: its front matter, and its body as the prompt. */
export interface AgentFile {
  readonly name: string
  readonly file: string
  readonly config: AgentConfig
}

/** A file that was not used, and why (shown by `reins debug config`). */
export interface Skipped {
  readonly source: string
  readonly reason: string
}

const decode = Schema.decodeUnknownExit(AgentConfig, { onExcessProperty: "error" })
const formatIssue = SchemaIssue.makeFormatterStandardSchemaV1()

/** One agent file's text: YAML front matter (`parseFrontMatter`), then the prompt. */
export const parseAgentFile = (text: string): Effect.Effect<AgentConfig, string> =>
  parseFrontMatter(text).pipe(
    Effect.mapError((e) => e.message),
    Effect.flatMap(({ data, body }) => {
      const exit = decode({ ...data, ...(body.trim() !== "" ? { prompt: body.trim() } : {}) })
      if (exit._tag === "Success") return Effect.succeed(exit.value)
      const reason = exit.cause.reasons.find((r) => r._tag === "Fail")
      const issue = reason && reason._tag === "Fail" ? formatIssue(reason.error.issue).issues[0] : undefined
      const field = issue?.path?.map(String).join(".") ?? ""
      return Effect.fail(`${field ? `${field}: ` : ""}${issue?.message ?? "invalid agent"}`)
    })
  )

/** The `*.md` agents of one folder (none when it does not exist), and the files skipped with their reasons. */
export const readAgentDir = Effect.fnUntraced(function* (dir: string) {
  const agents: Array<AgentFile> = []
  const skipped: Array<Skipped> = []
  const names = yield* Effect.promise(() => fs.promises.readdir(dir).catch(() => [] as Array<string>))
  for (const entry of names.filter((n) => n.endsWith(".md")).sort()) {
    const file = path.join(dir, entry)
    const read = yield* Effect.promise(() =>
      fs.promises.readFile(file, "utf8").then(
        (text) => ({ text }),
        (e: Error) => ({ error: `cannot read the file (${e.message})` })
      )
    )
    const parsed = "text" in read ? yield* Effect.result(parseAgentFile(read.text)) : undefined
    if (parsed === undefined || parsed._tag === "Failure") skipped.push({ source: file, reason: parsed ? parsed.failure : "error" in read ? read.error : "" })
    else agents.push({ name: entry.slice(0, -3), file, config: parsed.success })
  }
  return { agents, skipped }
})
