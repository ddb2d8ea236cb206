/// <reference path="./wasm.d.ts" />
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { Parser } from "web-tree-sitter"
// `type: "file"` makes `bun build` copy both wasm files next to the bundle; nothing is fetched.
import runtimeWasm from "web-tree-sitter/web-tree-sitter.wasm" with { type: "file" }
import bashWasm from "tree-sitter-bash/tree-sitter-bash.wasm" with { type: "file" }

export type { Node, Parser } from "web-tree-sitter"

// From source the paths are absolute; in the bundle they are relative to the chunk that imports them.
const locate = (file: string) => (path.isAbsolute(file) ? file : fileURLToPath(new URL(file, import.meta.url)))

let loading: Promise<Parser> | undefined

/**
 * The bash parser, loaded on first use: web-tree-sitter is imported dynamically so that start-up
 * (`reins --version`, a session without bash calls) never pays for the wasm.
 */
export const loadParser = (): Promise<Parser> => {
  loading ??= (async () => {
    const ts = await import("web-tree-sitter")
    // bytes read up front: cheaper than letting emscripten fetch the files itself
    await ts.Parser.init({ wasmBinary: fs.readFileSync(locate(runtimeWasm)) })
    const language = await ts.Language.load(fs.readFileSync(locate(bashWasm)))
    const parser = new ts.Parser()
    parser.setLanguage(language)
    return parser
  })().catch((error: unknown) => {
    loading = undefined
    throw error
  })
  return loading
}

/** Why the parser could not be loaded (a broken install); callers then treat commands as opaque. */
export const bashParser: Effect.Effect<Parser, string> = Effect.tryPromise({
  try: loadParser,
  catch: (e) => `the bash parser could not be loaded (${e instanceof Error ? e.message : String(e)})`
})
