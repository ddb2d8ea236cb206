import { Schema } from "effect"

/** The longest wait `lsp` may set: a project's config must not hold an edit for long. */
export const MAX_LSP_TIMEOUT_MS = 120_000

const Millis = Schema.Int.check(
  Schema.isGreaterThan(0, { message: "Expected milliseconds greater than 0" }),
  Schema.isLessThanOrEqualTo(MAX_LSP_TIMEOUT_MS, { message: `Expected at most ${MAX_LSP_TIMEOUT_MS} milliseconds (2 minutes)` })
)

/** The languages reins knows a server for; any other key of `lsp` names a server of your own. */
export const BUILTIN_LANGUAGE_SERVERS = ["typescript", "python", "go", "rust", "clangd"] as const

/** One entry of `lsp`: a built-in server changed or switched off, or a server of your own. */
export const LspServerConfig = Schema.Struct({
  command: Schema.optional(
    Schema.Array(Schema.String).check(
      Schema.isMinLength(1, { message: 'Expected "command" to name the program, e.g. ["typescript-language-server", "--stdio"]' })
    )
  ).annotate({ description: 'The program and its arguments, speaking LSP over stdio, e.g. ["typescript-language-server", "--stdio"].' }),
  extensions: Schema.optional(
    Schema.Array(Schema.String.check(Schema.isPattern(/^\.[^./\\]+$/u, { message: 'Expected an extension with its dot, e.g. ".ts"' })))
  ).annotate({ description: 'The file extensions it serves, with the dot, e.g. [".vue"].' }),
  disabled: Schema.optional(Schema.Boolean).annotate({ description: "true keeps this server off." }),
  timeout: Schema.optional(Millis).annotate({ description: "Milliseconds an edit waits for the server's diagnostics (default 5000, at most 120000)." }),
  startup_timeout: Schema.optional(Millis).annotate({
    description: "Milliseconds the first edit waits, while the server starts and loads the project (default 20000, at most 120000)."
  })
})
export type LspServerConfig = typeof LspServerConfig.Type

const isBuiltin = (id: string) => (BUILTIN_LANGUAGE_SERVERS as ReadonlyArray<string>).includes(id)

/** A server of your own needs both its command and its extensions (a built-in one has both). */
const incomplete = (servers: Readonly<Record<string, LspServerConfig>>) =>
  Object.entries(servers).find(
    ([id, server]) => !isBuiltin(id) && server.disabled !== true && (server.command === undefined || server.extensions === undefined)
  )

/** `lsp` in `reins.json`: `false` switches language servers off; otherwise servers by language. */
export const LspConfig = Schema.Union([
  Schema.Literal(false),
  Schema.Record(Schema.String, LspServerConfig).check(
    Schema.makeFilter((servers) => {
      const found = incomplete(servers)
      return found === undefined
        ? undefined
        : `"lsp.${found[0]}" is not a built-in language server (${BUILTIN_LANGUAGE_SERVERS.join(", ")}): give it both "command" and "extensions"`
    })
  )
]).annotate({ message: 'Expected "lsp" to be false or servers by language, e.g. { "typescript": { "disabled": true } }' })
export type LspConfig = typeof LspConfig.Type
