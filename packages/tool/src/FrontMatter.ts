import { Effect, Schema } from "effect"

/** A Markdown file split into its YAML front matter and its body. */
export interface FrontMatter {
  /** The parsed front matter (empty when the file has none). */
  readonly data: Record<string, unknown>
  /** The text after the front matter. */
  readonly body: string
}

/** Front matter that does not parse; the message names what is wrong. */
export class FrontMatterError extends Schema.TaggedError<FrontMatterError>()("FrontMatterError", {
  message: Schema.String
}) {}

const FENCE = /^---[ \t]*\r?\n([\s\S]*?)\r?\n?---[ \t]*(?:\r?\n|$)/

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)

/**
 * Splits `---\n<yaml>\n---\n<body>`, parsing the YAML with Bun's built-in parser. A file without
 * a leading `---` has no front matter: all of it is the body. Front matter that is not a mapping fails.
 */
export const parseFrontMatter = (text: string): Effect.Effect<FrontMatter, FrontMatterError> => {
  const source = text.replace(/^\uFEFF/, "")
  const match = FENCE.exec(source)
  if (!match) {
    return source.startsWith("---")
      ? Effect.fail(new FrontMatterError({ message: "the front matter opened with --- is never closed by a line with ---" }))
      : Effect.succeed({ data: {}, body: source })
  }
  const body = source.slice(match[0].length)
  return Effect.try({
    try: () => Bun.YAML.parse(match[1] ?? "") as unknown,
    catch: (e) => new FrontMatterError({ message: `invalid YAML in the front matter: ${e instanceof Error ? e.message : String(e)}` })
  }).pipe(
    Effect.flatMap((data) =>
      data === null || data === undefined
        ? Effect.succeed({ data: {}, body })
        : isRecord(data)
          ? Effect.succeed({ data, body })
          : Effect.fail(new FrontMatterError({ message: "the front matter must be a YAML mapping (key: value lines)" }))
    )
  )
}
