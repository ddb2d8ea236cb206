import { Effect, Schema } from "effect"
import * as path from "node:path"
import { define, render } from "../Tool.ts"
import { dirGlob, displayPath, pathNeeds, readDirectory, resolvePath, searchRoot } from "./Files.ts"
import template from "./list.txt" with { type: "text" }

export const LIMIT = 100

/** Generated, vendored and cache directories a listing skips. */
export const LIST_SKIP = new Set([
  ".git",
  "node_modules",
  "dist",
  "build",
  "out",
  "target",
  "coverage",
  ".next",
  ".nuxt",
  ".turbo",
  ".cache",
  ".parcel-cache",
  "__pycache__",
  ".pytest_cache",
  ".mypy_cache",
  ".venv",
  "venv",
  ".gradle",
  ".idea",
  ".vscode",
  ".zig-cache",
  "zig-out",
  ".svelte-kit",
  ".output",
  "vendor",
  "bower_components",
  ".terraform",
  "obj"
])

const Parameters = Schema.Struct({
  path: Schema.optionalKey(Schema.String.annotate({ description: "The directory to list (default: the project directory)" })),
  ignore: Schema.optionalKey(Schema.Array(Schema.String).annotate({ description: "Glob patterns of entries to skip, e.g. *.log" }))
})

interface Node {
  readonly name: string
  readonly rel: string
  readonly isDirectory: boolean
}

/** The `list` tool: a breadth-first tree of a directory, bounded to LIMIT entries. */
export const list = define("list", {
  description: render(template, { limit: LIMIT }),
  parameters: Parameters,
  truncate: false,
  permissions: (args, ctx) => {
    const dir = resolvePath(ctx, args.path)
    return pathNeeds(ctx, "list", dir, { kind: "directory", always: [dirGlob(dir, "directory")], title: `List ${dir}` })
  },
  execute: (args, ctx) =>
    Effect.gen(function* () {
      const dir = yield* searchRoot(resolvePath(ctx, args.path))
      // "docs/" and "docs/**" mean the directory itself.
      const ignores = (args.ignore ?? []).map((g) => new Bun.Glob(g.replace(/\/(\*\*)?$/, "")))
      const ignored = (node: Node) => (node.isDirectory && LIST_SKIP.has(node.name)) || ignores.some((g) => g.match(node.name) || g.match(node.rel))
      const children = new Map<string, Array<Node>>()
      const queue: Array<string> = [""]
      let count = 0
      let truncated = false
      let unreadable = 0
      while (queue.length > 0 && !truncated) {
        const rel = queue.shift()!
        const entries = yield* readDirectory(rel === "" ? dir : path.join(dir, rel))
        if (entries === undefined) {
          unreadable++
          continue
        }
        const nodes = entries
          .map((e) => ({ name: e.name, rel: rel === "" ? e.name : `${rel}/${e.name}`, isDirectory: e.isDirectory }))
          .filter((node) => !ignored(node))
          .sort((a, b) => Number(b.isDirectory) - Number(a.isDirectory) || a.name.localeCompare(b.name))
        const kept: Array<Node> = []
        for (const node of nodes) {
          if (count >= LIMIT) {
            truncated = true
            break
          }
          kept.push(node)
          count++
          if (node.isDirectory) queue.push(node.rel)
        }
        children.set(rel, kept)
      }
      const lines: Array<string> = [`${dir}/`]
      const renderDir = (rel: string, depth: number) => {
        for (const node of children.get(rel) ?? []) {
          lines.push(`${"  ".repeat(depth)}${node.name}${node.isDirectory ? "/" : ""}`)
          if (node.isDirectory) renderDir(node.rel, depth + 1)
        }
      }
      renderDir("", 1)
      const notes: Array<string> = []
      if (truncated) notes.push(`(Showing the first ${LIMIT} entries. List a subdirectory, or use glob, to see more.)`)
      if (unreadable > 0) notes.push(`(${unreadable} directories could not be read.)`)
      if (count === 0) notes.push("(The directory is empty, or everything in it is ignored.)")
      return {
        title: displayPath(ctx, dir),
        output: `${lines.join("\n")}${notes.length > 0 ? `\n\n${notes.join("\n")}` : ""}`,
        metadata: { count, truncated }
      }
    })
})
