import { Effect, Schema } from "effect"
import { isUtf8 } from "node:buffer"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { Attachment, ModelRef } from "@reins/domain"
import { isInside, pathRequests, type Permission } from "@reins/permission"
import { MAX_IMAGE_BYTES, byteSize, dataUrl, sniffImage } from "@reins/tool"

/** The largest text file inlined into a message (about 25k tokens); the agent can still read a bigger one. */
export const MAX_TEXT_BYTES = 100 * 1024

/** A file that cannot be attached: which, and what to do. */
export class AttachmentError extends Schema.TaggedError<AttachmentError>()("AttachmentError", {
  reason: Schema.Literals(["missing", "not-a-file", "binary", "too-large", "unreadable", "permission", "images"]),
  message: Schema.String
}) {}

/** A file to attach: the path as given, where it is, and how it is shown. */
export interface AttachTarget {
  readonly given: string
  readonly path: string
  /** Relative to the project when inside it, else absolute. */
  readonly shown: string
}

const expand = (given: string, home: string) => (given === "~" ? home : given.startsWith("~/") ? path.join(home, given.slice(2)) : given)

/** Where a path given by the user points, and how it is named in the message. */
export const attachTarget = (cwd: string, given: string, home = os.homedir()): AttachTarget => {
  const abs = path.resolve(cwd, expand(given, home))
  return { given, path: abs, shown: isInside(cwd, abs) ? path.relative(cwd, abs) || "." : abs }
}

// `@` at the start or after a space or bracket (not inside an address like a@b.com), then the path
const MENTION = /(?<=^|[\s([{"'])@([^\s"'`<>|]+)/g
const EXPLICIT = /^(\.{1,2}\/|\/|~\/)/

/**
 * The files `@path` mentions in a message name. A mention of a file that exists is attached; one
 * that does not is left as text (`@types/node`, `@alice`), unless it is written as a path
 * (`@./x`, `@../x`, `@/x`, `@~/x`): then it is an error, as for `-f`.
 */
export const mentionedPaths = (text: string, cwd: string, home = os.homedir()): ReadonlyArray<{ readonly given: string; readonly explicit: boolean }> => {
  const found: Array<{ given: string; explicit: boolean }> = []
  for (const match of text.matchAll(MENTION)) {
    const given = match[1]!.replace(/[.,;:!?)\]}]+$/, "")
    if (given === "" || found.some((f) => f.given === given)) continue
    const explicit = EXPLICIT.test(given)
    if (explicit || fs.existsSync(attachTarget(cwd, given, home).path)) found.push({ given, explicit })
  }
  return found
}

const fail = (reason: AttachmentError["reason"], message: string) => new AttachmentError({ reason, message })

/** Text, by content: no NUL byte and valid UTF-8. */
const isText = (bytes: Uint8Array) => !bytes.subarray(0, 8192).includes(0) && isUtf8(bytes)

/**
 * Reads one file to attach: an image (PNG, JPEG, GIF, WebP, by its bytes) as itself; a text file
 * (up to `MAX_TEXT_BYTES`) to be inlined under its path; anything else refused with what to do.
 */
export const readAttachment = Effect.fn("Attachments.read")(function* (target: AttachTarget) {
  const stat = fs.statSync(target.path, { throwIfNoEntry: false })
  if (stat === undefined) return yield* fail("missing", `Cannot attach ${target.given}: no such file (${target.path}). Check the path.`)
  if (!stat.isFile())
    return yield* fail(
      "not-a-file",
      `Cannot attach ${target.given}: it is ${stat.isDirectory() ? "a directory" : "not a regular file"}. Attach files one by one, or ask the agent to look at the directory.`
    )
  const limit = Math.max(MAX_IMAGE_BYTES, MAX_TEXT_BYTES)
  if (stat.size > limit)
    return yield* fail(
      "too-large",
      `Cannot attach ${target.given}: ${byteSize(stat.size)} is over the ${byteSize(limit)} reins attaches. Ask the agent to read the part you need instead.`
    )
  const bytes = yield* Effect.tryPromise({
    try: () => fs.promises.readFile(target.path),
    catch: (e) => fail("unreadable", `Cannot attach ${target.given}: ${(e as Error).message}.`)
  })
  const image = sniffImage(bytes)
  if (image !== undefined) {
    if (bytes.length > MAX_IMAGE_BYTES)
      return yield* fail(
        "too-large",
        `Cannot attach ${target.given}: the image is ${byteSize(bytes.length)}, over the ${byteSize(MAX_IMAGE_BYTES)} providers take. Make a smaller copy.`
      )
    return { mime: image, filename: target.shown, url: dataUrl(image, bytes) } satisfies Attachment
  }
  if (!isText(bytes)) {
    return yield* fail("binary", `Cannot attach ${target.given}: it is a binary file, and only images (PNG, JPEG, GIF, WebP) and text files can be attached.`)
  }
  if (bytes.length > MAX_TEXT_BYTES) {
    return yield* fail(
      "too-large",
      `Cannot attach ${target.given}: ${byteSize(bytes.length)} of text is over the ${byteSize(MAX_TEXT_BYTES)} reins inlines. Ask the agent to read the part you need instead.`
    )
  }
  return { mime: "text/plain", filename: target.shown, url: dataUrl("text/plain", bytes) } satisfies Attachment
})

/**
 * The files a message attaches: `-f` paths, then `@path` mentions, once each, read. A missing `-f`
 * file or explicit `@./path` fails; the targets outside the project are returned for `authorize`.
 */
export const collectAttachments = Effect.fn("Attachments.collect")(function* (input: {
  readonly cwd: string
  readonly text: string
  readonly files?: ReadonlyArray<string>
  readonly home?: string
  /** Leave files outside the project unattached (returned as `skipped`) instead of reading them. */
  readonly insideOnly?: boolean
}) {
  const home = input.home ?? os.homedir()
  const given = [...(input.files ?? []), ...mentionedPaths(input.text, input.cwd, home).map((m) => m.given)]
  const targets: Array<AttachTarget> = []
  const skipped: Array<AttachTarget> = []
  for (const g of given) {
    const target = attachTarget(input.cwd, g, home)
    if (targets.some((t) => t.path === target.path) || skipped.some((t) => t.path === target.path)) continue
    if (input.insideOnly === true && !isInside(input.cwd, target.path)) skipped.push(target)
    else targets.push(target)
  }
  const attachments = yield* Effect.forEach(targets, readAttachment)
  return { targets, attachments, skipped }
})

/**
 * Asks `external_directory` for each attached file outside the project, as the read tool does
 * (rules, then a person, then the non-interactive policy). Only that: the user named the file, so
 * the read rules that guard what the model opens (`*.env`) do not apply.
 */
export const authorizeAttachments = Effect.fn("Attachments.authorize")(function* (
  permission: Permission["Service"],
  sessionID: string,
  cwd: string,
  targets: ReadonlyArray<AttachTarget>
) {
  for (const target of targets) {
    const external = pathRequests(cwd, "read", target.path, { kind: "file", always: [] }).filter((r) => r.permission === "external_directory")
    yield* permission
      .authorize(external.map((r) => ({ ...r, sessionID, title: `Attach ${target.path}, outside ${cwd}` })))
      .pipe(
        Effect.mapError(() =>
          fail(
            "permission",
            `Cannot attach ${target.given}: it is outside the project (${cwd}), and external_directory was not allowed for ${path.dirname(target.path)}. ` +
              'Answer the question in a terminal, run with --permission allow, or allow it in reins.json ("permission": { "external_directory": { "<dir>/*": "allow" } }).'
          )
        )
      )
  }
})

/** Why a model cannot take these attachments (it takes no images), or undefined when it can. */
export const imagesRefused = (model: ModelRef, acceptsImages: boolean | undefined, attachments: ReadonlyArray<Attachment>): string | undefined => {
  const images = attachments.filter((a) => a.mime.startsWith("image/"))
  if (images.length === 0 || acceptsImages === true) return undefined
  const names = images.map((a) => a.filename ?? "an image").join(", ")
  return (
    `${model.providerID}/${model.modelID} does not accept images, so ${names} cannot be sent. ` +
    `Use a model that does (--model), or if this one does, set provider.${model.providerID}.models["${model.modelID}"].images to true in reins.json.`
  )
}
