// The bash parser starts with a small wasm memory (Parser.ts `smallMemory`): web-tree-sitter's runtime asks for 32 MiB,
// which JavaScriptCore counts (twice over) toward the garbage it lets grow before a collection. The memory import's
// initial size is rewritten in place; the parser still reads a command far longer than that start.
import { describe, expect, test } from "bun:test"
import * as fs from "node:fs"
import * as path from "node:path"
import { createRequire } from "node:module"
import { loadParser, memoryImportInitial, smallMemory } from "../src/Parser.ts"

const runtimeWasm = () => new Uint8Array(fs.readFileSync(createRequire(import.meta.url).resolve("web-tree-sitter/web-tree-sitter.wasm")))

describe("the bash parser's memory", () => {
  test("the runtime's memory import is found and asks for 2 MiB once rewritten, in the same bytes", () => {
    const wasm = runtimeWasm()
    const before = memoryImportInitial(wasm)
    expect(before?.initial).toBeGreaterThan(32)
    const small = smallMemory(wasm)
    expect(small.bytes).toBe(32 * 65536)
    expect(small.wasm.length).toBe(wasm.length)
    expect(memoryImportInitial(small.wasm)).toEqual({ offset: before!.offset, length: before!.length, initial: 32 })
    // only those bytes differ, and the file it was read from is not changed
    const differing = [...small.wasm.keys()].filter((i) => small.wasm[i] !== wasm[i])
    expect(differing.every((i) => i >= before!.offset && i < before!.offset + before!.length)).toBe(true)
    expect(memoryImportInitial(wasm)?.initial).toBe(before!.initial)
    expect(() => new WebAssembly.Module(small.wasm)).not.toThrow()
  })

  test("a binary laid out otherwise is used as it is", () => {
    // no import section: the magic and version only
    const bare = new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00])
    expect(memoryImportInitial(bare)).toBeUndefined()
    expect(smallMemory(bare)).toEqual({ wasm: bare })
    // a memory import of 16 pages (one LEB byte): nothing to make smaller
    const name = (s: string) => [s.length, ...Buffer.from(s)]
    const entry = [1, ...name("env"), ...name("memory"), 0x02, 0x00, 16]
    const small = new Uint8Array([...bare, 0x02, entry.length, ...entry])
    expect(memoryImportInitial(small)).toEqual({ offset: small.length - 1, length: 1, initial: 16 })
    expect(smallMemory(small)).toEqual({ wasm: small })
    expect(() => new WebAssembly.Module(small)).not.toThrow()
  })

  test("in a fresh process, the loaded parser adds a few MiB to what the collector counts, not the 64 it did", () => {
    const script = `const { heapStats } = require("bun:jsc"); const { loadParser } = await import(${JSON.stringify(path.join(import.meta.dir, "..", "src", "Parser.ts"))});
      const before = heapStats().extraMemorySize; const parser = await loadParser(); parser.parse("echo hi")?.delete();
      console.log(heapStats().extraMemorySize - before)`
    const run = Bun.spawnSync(["bun", "-e", script], { stderr: "pipe" })
    expect(run.stderr.toString()).toBe("")
    const added = Number(run.stdout.toString().trim())
    expect(added).toBeGreaterThan(0)
    expect(added).toBeLessThan(16 * 2 ** 20)
  })

  test("the parser reads a short command, and one of 400 KiB (its memory grows past the 2 MiB it starts with)", async () => {
    const parser = await loadParser()
    const short = parser.parse("echo step 1 && ls -la | grep x > out.txt")!
    expect(short.rootNode.hasError).toBe(false)
    expect(short.rootNode.descendantsOfType("command").map((c) => c?.childForFieldName("name")?.text)).toEqual(["echo", "ls", "grep"])
    short.delete()
    const words = 50_000
    const long = parser.parse(`echo ${"word $(ls) ".repeat(words)}`)!
    expect(long.rootNode.hasError).toBe(false)
    expect(long.rootNode.descendantsOfType("command_substitution").length).toBe(words)
    long.delete()
  })
})
