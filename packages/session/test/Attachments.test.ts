import { describe, expect, test } from "bun:test"
import { Effect, Exit, Layer } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { Bus, Ids } from "@reins/domain"
import { Permission, PermissionSettings, defaultRules } from "@reins/permission"
import { attachTarget, authorizeAttachments, collectAttachments, imagesRefused, mentionedPaths } from "../src/Attachments.ts"
import { tmp } from "./support.ts"

const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC", "base64")

const failure = <A, E extends { message: string }>(exit: Exit.Exit<A, E>) =>
  Exit.isFailure(exit) ? exit.cause.reasons.map((r) => (r._tag === "Fail" ? r.error.message : "")).join("") : ""

describe("@path mentions", () => {
  test("a mention of an existing file counts; one that is no file stays text unless written as a path", () => {
    const cwd = tmp("reins-mention-")
    fs.mkdirSync(path.join(cwd, "src"))
    fs.writeFileSync(path.join(cwd, "src", "a.ts"), "x")
    fs.writeFileSync(path.join(cwd, "README"), "x")
    const text = "see @src/a.ts, @README. and (@src/a.ts) but not a@b.com, @types/node, @alice or @./gone.md"
    expect(mentionedPaths(text, cwd)).toEqual([
      { given: "src/a.ts", explicit: false },
      { given: "README", explicit: false },
      { given: "./gone.md", explicit: true }
    ])
  })

  test("~ expands to the home directory; the shown name is relative inside the project, absolute outside", () => {
    const cwd = tmp("reins-target-")
    expect(attachTarget(cwd, "src/a.ts")).toEqual({ given: "src/a.ts", path: path.join(cwd, "src/a.ts"), shown: "src/a.ts" })
    expect(attachTarget(cwd, "~/notes.txt", "/home/me")).toEqual({ given: "~/notes.txt", path: "/home/me/notes.txt", shown: "/home/me/notes.txt" })
  })
})

describe("collectAttachments", () => {
  test("images by their bytes, text inlined, each file once; binary and oversized text refused", async () => {
    const cwd = tmp("reins-collect-")
    fs.writeFileSync(path.join(cwd, "shot.jpg"), PNG)
    fs.writeFileSync(path.join(cwd, "a.txt"), "hello\n")
    fs.writeFileSync(path.join(cwd, "big.txt"), "x".repeat(200 * 1024))
    fs.writeFileSync(path.join(cwd, "bad.txt"), Buffer.from([0xc3, 0x28, 0x41]))
    const got = await Effect.runPromise(collectAttachments({ cwd, text: "look at @a.txt and @shot.jpg", files: ["a.txt"] }))
    expect(got.attachments.map((a) => [a.mime, a.filename])).toEqual([
      ["text/plain", "a.txt"],
      ["image/png", "shot.jpg"]
    ])
    expect(failure(await Effect.runPromiseExit(collectAttachments({ cwd, text: "x", files: ["big.txt"] })))).toContain("over the 100.0 KB reins inlines")
    expect(failure(await Effect.runPromiseExit(collectAttachments({ cwd, text: "x", files: ["bad.txt"] })))).toContain("it is a binary file")
  })

  test("a model that takes no images: one message naming the model, the files and the config key", () => {
    const model = { providerID: "local", modelID: "m" }
    const files = [
      { mime: "image/png", filename: "a.png", url: "data:," },
      { mime: "text/plain", filename: "b.txt", url: "data:," }
    ]
    expect(imagesRefused(model, true, files)).toBeUndefined()
    expect(imagesRefused(model, false, files.slice(1))).toBeUndefined()
    expect(imagesRefused(model, undefined, files)).toBe(
      'local/m does not accept images, so a.png cannot be sent. Use a model that does (--model), or if this one does, set provider.local.models["m"].images to true in reins.json.'
    )
  })
})

describe("authorizeAttachments", () => {
  const permission = (rules = defaultRules) =>
    Permission.layer.pipe(Layer.provide(Layer.mergeAll(Bus.layer, Ids.layer, Layer.succeed(PermissionSettings, { rules, nonInteractive: "deny" as const }))))

  test("outside the project asks external_directory (denied without a person); inside asks nothing, .env included", async () => {
    const cwd = tmp("reins-authz-")
    const outside = tmp("reins-authz-out-")
    fs.writeFileSync(path.join(outside, "n.txt"), "x")
    fs.writeFileSync(path.join(cwd, ".env"), "SECRET=1")
    const run = (given: string, rules = defaultRules) =>
      Effect.runPromiseExit(
        Effect.gen(function* () {
          const p = yield* Permission
          yield* authorizeAttachments(p, "ses_1", cwd, [attachTarget(cwd, given)])
        }).pipe(Effect.provide(permission(rules)))
      )
    const denied = await run(path.join(outside, "n.txt"))
    expect(failure(denied)).toContain(
      `Cannot attach ${path.join(outside, "n.txt")}: it is outside the project (${cwd}), and external_directory was not allowed for ${outside}`
    )
    expect(Exit.isSuccess(await run(".env"))).toBe(true)
    expect(
      Exit.isSuccess(await run(path.join(outside, "n.txt"), [...defaultRules, { permission: "external_directory", pattern: `${outside}/*`, action: "allow" }]))
    ).toBe(true)
  })
})
