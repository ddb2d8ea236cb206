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

/** The parser's memory at start (2 MiB, 64 KiB pages); it grows as a long command needs. The grammar asks for 18 pages. */
const INITIAL_PAGES = 32

/**
 * The runtime's wasm asking for INITIAL_PAGES of memory at start instead of 32 MiB: JavaScriptCore counts a wasm
 * memory (twice its size) as memory its collector answers for, so 32 MiB of it let the heap's garbage grow by some 64
 * MiB more before a collection, and a long session's RSS grew with it. The memory import's initial size is rewritten
 * in place (the same number of bytes); a file laid out otherwise is used as it is.
 */
export const smallMemory = (wasm: Uint8Array): { readonly wasm: Uint8Array; readonly bytes?: number } => {
  const at = memoryImportInitial(wasm)
  if (at === undefined || at.length !== 2 || at.initial <= INITIAL_PAGES) return { wasm }
  const patched = new Uint8Array(wasm)
  patched[at.offset] = 0x80 | (INITIAL_PAGES & 0x7f)
  patched[at.offset + 1] = INITIAL_PAGES >> 7
  return { wasm: patched, bytes: INITIAL_PAGES * 65536 }
}

/** Where the initial size (in pages, LEB128) of the `env.memory` import is in a wasm binary, and its value. */
export const memoryImportInitial = (wasm: Uint8Array): { readonly offset: number; readonly length: number; readonly initial: number } | undefined => {
  let p = 8
  const leb = () => {
    let value = 0
    let shift = 0
    let byte: number
    do {
      byte = wasm[p++] ?? 0
      value += (byte & 0x7f) * 2 ** shift
      shift += 7
    } while (byte & 0x80 && p < wasm.length)
    return value
  }
  const name = () => {
    const length = leb()
    p += length
    return new TextDecoder().decode(wasm.subarray(p - length, p))
  }
  while (p < wasm.length) {
    const id = wasm[p++]
    const size = leb()
    const end = p + size
    if (id !== 2) {
      p = end
      continue
    }
    const count = leb()
    for (let i = 0; i < count; i++) {
      const module = name()
      const field = name()
      const kind = wasm[p++]
      if (kind === 0) leb()
      else if (kind === 1) {
        p++
        if ((wasm[p++]! & 1) === 1) leb()
        leb()
      } else if (kind === 2) {
        p++
        const offset = p
        const initial = leb()
        if (module === "env" && field === "memory") return { offset, length: p - offset, initial }
        if ((wasm[offset - 1]! & 1) === 1) leb()
      } else if (kind === 3) p += 2
      else return undefined
    }
    return undefined
  }
  return undefined
}

/**
 * The bash parser, loaded on first use: web-tree-sitter is imported dynamically so that start-up
 * (`reins --version`, a session without bash calls) never pays for the wasm.
 */
export const loadParser = (): Promise<Parser> => {
  loading ??= (async () => {
    const ts = await import("web-tree-sitter")
    // bytes read up front: cheaper than letting emscripten fetch the files itself
    const small = smallMemory(fs.readFileSync(locate(runtimeWasm)))
    await ts.Parser.init({ wasmBinary: small.wasm, ...(small.bytes === undefined ? {} : { INITIAL_MEMORY: small.bytes }) })
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
