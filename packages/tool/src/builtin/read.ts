import { Effect, Schema } from "effect"
import * as path from "node:path"
import { FileAccess } from "../FileAccess.ts"
import { define, render } from "../Tool.ts"
import { displayPath, fail, isBinary, notRegular, pathNeeds, readDirectory, resolvePath, specialKind, statPath } from "./Files.ts"
import { MAX_IMAGE_BYTES, byteSize, dataUrl, sniffImage } from "../Media.ts"
import template from "./read.txt" with { type: "text" }

export const DEFAULT_LIMIT = 2000
export const MAX_LINE_LENGTH = 2000
export const MAX_BYTES = 51_200

const Parameters = Schema.Struct({
  filePath: Schema.String.annotate({ description: "The path of the file to read (absolute, or relative to the project directory)" }),
  offset: Schema.optionalKey(
    Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)).annotate({ description: "The 1-based line number to start reading from (default 1)" })
  ),
  limit: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThan(0)).annotate({ description: `The number of lines to read (default ${DEFAULT_LIMIT})` }))
})

/** Edit distance, for suggesting the file the model probably meant. */
const distance = (a: string, b: string) => {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    previous = current
  }
  return previous[b.length]!
}

/** Up to three names in the same directory that look like the missing one. */
const suggestions = Effect.fnUntraced(function* (target: string) {
  const entries = yield* readDirectory(path.dirname(target))
  if (entries === undefined) return undefined
  const wanted = path.basename(target).toLowerCase()
  const stem = wanted.replace(/\.[^.]*$/, "")
  return entries
    .map((e) => {
      const name = e.name.toLowerCase()
      const contains = name.includes(wanted) || wanted.includes(name) || (stem.length > 1 && name.startsWith(stem))
      return { entry: e, score: contains ? 0 : distance(wanted, name) }
    })
    .filter((s) => s.score <= Math.max(2, Math.floor(wanted.length / 3)))
    .sort((a, b) => a.score - b.score || a.entry.name.localeCompare(b.entry.name))
    .slice(0, 3)
    .map((s) => path.join(path.dirname(target), s.entry.name) + (s.entry.isDirectory ? "/" : ""))
})

const notFound = Effect.fnUntraced(function* (target: string) {
  const similar = yield* suggestions(target)
  if (similar === undefined) {
    return yield* fail(`File not found: ${target}. Its directory does not exist either; use the glob tool to find the file.`)
  }
  if (similar.length === 0) {
    return yield* fail(`File not found: ${target}. Use the glob or list tool to find the right path.`)
  }
  return yield* fail(`File not found: ${target}. Did you mean one of these?\n${similar.join("\n")}`)
})

/** The `read` tool: numbered lines of a text file, bounded by lines and bytes. */
export const read = define("read", {
  description: render(template, { defaultLimit: DEFAULT_LIMIT, maxLineLength: MAX_LINE_LENGTH, maxBytes: MAX_BYTES }),
  parameters: Parameters,
  truncate: false,
  permissions: (args, ctx) => {
    const target = resolvePath(ctx, args.filePath)
    return pathNeeds(ctx, "read", target, { kind: "file", always: [path.join(path.dirname(target), "*")], title: `Read ${target}` })
  },
  execute: (args, ctx) =>
    Effect.gen(function* () {
      const target = resolvePath(ctx, args.filePath)
      const stat = yield* statPath(target)
      if (stat === undefined) return yield* notFound(target)
      if (stat.isDirectory()) {
        return yield* fail(`${target} is a directory, not a file. Use the list tool to see what it contains.`)
      }
      // a FIFO, socket or device is refused before it is opened: reading one can block forever
      const kind = specialKind(stat)
      if (kind !== undefined) return yield* notRegular(target, kind)
      // through the editor when one is connected (ACP): its unsaved buffer is what the user sees
      const bytes = yield* (yield* FileAccess).read(target)
      // an image (by its bytes) is given to the model as an image; a model that takes none gets the note alone
      const image = sniffImage(bytes)
      if (image !== undefined) {
        if (bytes.length > MAX_IMAGE_BYTES) {
          return yield* fail(
            `${target} is an image of ${byteSize(bytes.length)}, over the ${byteSize(MAX_IMAGE_BYTES)} reins sends. Use bash to make a smaller copy if you need to see it.`
          )
        }
        const shown = displayPath(ctx, target)
        return {
          title: shown,
          output: `Image ${shown} (${image}, ${byteSize(bytes.length)}), attached below.`,
          metadata: { filePath: target, image, bytes: bytes.length },
          attachments: [{ mime: image, filename: shown, url: dataUrl(image, bytes) }]
        }
      }
      if (isBinary(target, bytes)) {
        return yield* fail(`${target} is a binary file and cannot be read as text. Use bash with a suitable tool if you need to inspect it.`)
      }
      const text = new TextDecoder().decode(bytes)
      const lines = text.split(/\r?\n/)
      if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop()
      const total = lines.length
      const start = Math.max(1, args.offset ?? 1)
      if (start > total && !(total === 0 && start === 1)) {
        return yield* fail(`Offset ${start} is past the end of ${target}, which has ${total} lines. Use an offset between 1 and ${total}.`)
      }
      const limit = args.limit ?? DEFAULT_LIMIT
      const out: Array<string> = []
      let bytesUsed = 0
      let cutByBytes = false
      for (let n = start; n <= Math.min(total, start + limit - 1); n++) {
        const raw = lines[n - 1]!
        const line = raw.length > MAX_LINE_LENGTH ? `${raw.slice(0, MAX_LINE_LENGTH)}…` : raw
        const numbered = `${String(n).padStart(5, "0")}| ${line}`
        const size = Buffer.byteLength(numbered) + 1
        if (bytesUsed + size > MAX_BYTES && out.length > 0) {
          cutByBytes = true
          break
        }
        out.push(numbered)
        bytesUsed += size
      }
      const last = start + out.length - 1
      const note = cutByBytes
        ? `(Output capped at ${MAX_BYTES} bytes. Use 'offset' to read beyond line ${last})`
        : last < total
          ? `(File has more lines. Use 'offset' to read beyond line ${last})`
          : `(End of file - total ${total} lines)`
      const body = out.length > 0 ? `${out.join("\n")}\n\n${note}` : note
      return {
        title: displayPath(ctx, target),
        output: `<file>\n${body}\n</file>`,
        metadata: { filePath: target, offset: start, lines: out.length, totalLines: total, truncated: last < total }
      }
    })
})
