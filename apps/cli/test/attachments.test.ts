// Files and images as input: `reins run -f PATH` and `@path` mentions. Images reach models that take
// them as file parts (asserted on the request bodies the scripted servers recorded), and are refused
// before any request for models that do not; text files are inlined under their path; a file
// outside the project asks external_directory; `read` of a PNG gives the model the image.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { startAnthropicServer, type AnthropicServer } from "@reins/testkit"
import { ensureBuilt, projects, reins, writeUserConfig } from "./support.ts"

beforeAll(ensureBuilt)
const project = projects()

// a real 1×1 PNG
const PNG_B64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
const png = Buffer.from(PNG_B64, "base64")

const withImages = (server: { url: string }) => ({
  provider: { local: { type: "openai-compatible", baseURL: server.url, models: { scripted: { context: 32000, output: 4000, images: true } } } }
})

/** The user messages' content parts of a recorded chat-completions request. */
const userParts = (body: any): Array<any> =>
  (body.messages as Array<{ role: string; content: unknown }>)
    .filter((m) => m.role === "user")
    .flatMap((m) => (Array.isArray(m.content) ? m.content : [{ type: "text", text: m.content }]))

describe("reins run -f and @path", () => {
  test("an image reaches an image-capable model as a file part, and replays on the next turn", async () => {
    const p = await project([{ text: "A green pixel." }, { text: "Still green." }])
    fs.writeFileSync(p.configFile, JSON.stringify({ model: "local/scripted", ...withImages(p.server) }))
    fs.writeFileSync(path.join(p.cwd, "shot.png"), png)
    const r = await reins(["run", "-f", "shot.png", "what is in this picture?"], p)
    expect(r.stderr).not.toContain("rror")
    expect(r.code).toBe(0)
    const parts = userParts(p.server.requests[0]!.body)
    expect(parts).toContainEqual({ type: "text", text: "what is in this picture?" })
    expect(parts).toContainEqual({ type: "image_url", image_url: { url: `data:image/png;base64,${PNG_B64}` } })
    // stored with the session: the next turn sends it again
    const again = await reins(["run", "--continue", "and now?"], p)
    expect(again.code).toBe(0)
    expect(userParts(p.server.requests[1]!.body)).toContainEqual({ type: "image_url", image_url: { url: `data:image/png;base64,${PNG_B64}` } })
    // sessions show names it
    const sessionID = (await reins(["sessions", "list", "--format", "json"], p)).stdout.match(/ses_\w+/)![0]
    const shown = await reins(["sessions", "show", sessionID], p)
    expect(shown.stdout).toContain("what is in this picture?\n[file] shot.png (image/png)")
  }, 60_000)

  test("images are recognised by their bytes: a PNG named .dat is an image, a .png that is text is inlined as text", async () => {
    const p = await project([{ text: "ok" }])
    fs.writeFileSync(p.configFile, JSON.stringify({ model: "local/scripted", ...withImages(p.server) }))
    fs.writeFileSync(path.join(p.cwd, "pixel.dat"), png)
    fs.writeFileSync(path.join(p.cwd, "fake.png"), "not really an image\n")
    const r = await reins(["run", "compare @pixel.dat with @fake.png"], p)
    expect(r.code).toBe(0)
    const parts = userParts(p.server.requests[0]!.body)
    expect(parts).toContainEqual({ type: "image_url", image_url: { url: `data:image/png;base64,${PNG_B64}` } })
    expect(parts).toContainEqual({ type: "text", text: '<file path="fake.png">\nnot really an image\n</file>' })
  }, 60_000)

  test("a model that takes no images gets a clear error before any request (-f and @path), exit 2", async () => {
    const p = await project([{ text: "never" }])
    fs.writeFileSync(path.join(p.cwd, "shot.png"), png)
    for (const args of [
      ["run", "-f", "shot.png", "describe it"],
      ["run", "describe @shot.png"]
    ]) {
      const r = await reins(args, p)
      expect(r.code).toBe(2)
      expect(r.stderr).toContain("local/scripted does not accept images, so shot.png cannot be sent")
      expect(r.stderr).toContain('provider.local.models["scripted"].images')
    }
    expect(p.server.requests).toHaveLength(0)
    // and nothing was stored
    const list = await reins(["sessions", "list"], p)
    expect(list.code).toBe(0)
    expect(list.stdout).not.toContain("describe")
  }, 60_000)

  test("text files are inlined with their path; -f is repeatable; an @mention that is no file stays text", async () => {
    const p = await project([{ text: "reviewed" }])
    fs.mkdirSync(path.join(p.cwd, "src"))
    fs.writeFileSync(path.join(p.cwd, "src", "a.ts"), "export const a = 1\n")
    fs.writeFileSync(path.join(p.cwd, "NOTES.md"), "# Notes\nkeep it small\n")
    const r = await reins(["run", "-f", "NOTES.md", "-f", "src/a.ts", "review @src/a.ts and bump @types/node, ping @alice"], p)
    expect(r.stderr).not.toContain("rror")
    expect(r.code).toBe(0)
    const parts = userParts(p.server.requests[0]!.body)
    expect(parts[0]).toEqual({ type: "text", text: "review @src/a.ts and bump @types/node, ping @alice" })
    // once each, in order: -f files, then mentions
    expect(parts.slice(1)).toEqual([
      { type: "text", text: '<file path="NOTES.md">\n# Notes\nkeep it small\n</file>' },
      { type: "text", text: '<file path="src/a.ts">\nexport const a = 1\n</file>' }
    ])
  }, 60_000)

  test("a missing file, a directory, a binary file: one clear line, exit 2, no request", async () => {
    const p = await project([{ text: "never" }])
    fs.writeFileSync(path.join(p.cwd, "blob.bin"), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2, 0]))
    fs.mkdirSync(path.join(p.cwd, "dir"))
    const cases: Array<[ReadonlyArray<string>, string]> = [
      [["run", "-f", "nope.txt", "x"], "Cannot attach nope.txt: no such file"],
      [["run", "look at @./missing.md"], "Cannot attach ./missing.md: no such file"],
      [["run", "-f", "dir", "x"], "Cannot attach dir: it is a directory"],
      [["run", "-f", "blob.bin", "x"], "Cannot attach blob.bin: it is a binary file, and only images (PNG, JPEG, GIF, WebP) and text files can be attached"]
    ]
    for (const [args, message] of cases) {
      const r = await reins(args, p)
      expect(r.code).toBe(2)
      expect(r.stderr).toContain(message)
      expect(r.stderr.trim().split("\n")).toHaveLength(1)
    }
    expect(p.server.requests).toHaveLength(0)
  }, 60_000)

  test("@path outside the project asks external_directory: denied without a terminal, a clear message and no request; allowed, it is inlined", async () => {
    const p = await project([{ text: "read it" }])
    const outside = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-outside-")))
    fs.writeFileSync(path.join(outside, "notes.txt"), "outside notes\n")
    const denied = await reins(["run", `summarise @${outside}/notes.txt`], p)
    expect(denied.code).toBe(1)
    expect(denied.stderr).toContain(`Cannot attach ${outside}/notes.txt: it is outside the project`)
    expect(denied.stderr).toContain("external_directory")
    expect(p.server.requests).toHaveLength(0)
    // a rule in reins.json allows it (as for the read tool)
    const config = JSON.parse(fs.readFileSync(p.configFile, "utf8"))
    fs.writeFileSync(p.configFile, JSON.stringify({ ...config, permission: { external_directory: { [`${outside}/*`]: "allow" } } }))
    const allowed = await reins(["run", `summarise @${outside}/notes.txt`], p)
    expect(allowed.stderr).not.toContain("rror")
    expect(allowed.code).toBe(0)
    expect(userParts(p.server.requests[0]!.body)).toContainEqual({ type: "text", text: `<file path="${outside}/notes.txt">\noutside notes\n</file>` })
  }, 60_000)
})

describe("the read tool and images", () => {
  let anthropic: AnthropicServer
  afterAll(async () => {
    await anthropic?.stop()
  })

  test("read of a PNG gives the image to an image-capable model (Anthropic: an image block in the tool result)", async () => {
    anthropic = await startAnthropicServer([{ toolCalls: [{ name: "read", arguments: { filePath: "shot.png" } }] }, { text: "A green pixel." }])
    const cwd = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-read-img-")))
    const dataDir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-read-img-data-")))
    execFileSync("git", ["init", "-q"], { cwd })
    fs.writeFileSync(path.join(cwd, "shot.png"), png)
    writeUserConfig(
      dataDir,
      JSON.stringify({ model: "anthropic/claude-sonnet-4-5", provider: { anthropic: { type: "anthropic", baseURL: anthropic.url, apiKey: "test-key" } } })
    )
    const r = await reins(["run", "--yolo", "what is in shot.png?"], {
      cwd,
      dataDir,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dataDir, REINS_DATA_DIR: dataDir, NO_COLOR: "1" }
    })
    expect(r.stderr).not.toContain("rror")
    expect(r.code).toBe(0)
    const messages = anthropic.requests[1]!.body.messages as Array<{ role: string; content: Array<any> }>
    const result = messages.flatMap((m) => m.content).find((c) => c.type === "tool_result")
    expect(result.content).toContainEqual({ type: "image", source: { type: "base64", media_type: "image/png", data: PNG_B64 } })
    expect(JSON.stringify(result.content)).toContain("Image shot.png (image/png, 69 B), attached below.")
  }, 60_000)

  test("an attached image reaches Claude as an image block in the user message", async () => {
    const server = await startAnthropicServer([{ text: "A pixel." }])
    const cwd = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-claude-img-")))
    const dataDir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-claude-img-data-")))
    execFileSync("git", ["init", "-q"], { cwd })
    fs.writeFileSync(path.join(cwd, "shot.png"), png)
    writeUserConfig(
      dataDir,
      JSON.stringify({ model: "anthropic/claude-sonnet-4-5", provider: { anthropic: { type: "anthropic", baseURL: server.url, apiKey: "test-key" } } })
    )
    const r = await reins(["run", "-f", "shot.png", "what is it?"], {
      cwd,
      dataDir,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dataDir, REINS_DATA_DIR: dataDir, NO_COLOR: "1" }
    })
    await server.stop()
    expect(r.code).toBe(0)
    const content = (server.requests[0]!.body.messages as Array<{ role: string; content: Array<any> }>)
      .filter((m) => m.role === "user")
      .flatMap((m) => m.content)
    // (the last block carries the cache marker)
    expect(content.find((c) => c.type === "image")?.source).toEqual({ type: "base64", media_type: "image/png", data: PNG_B64 })
  }, 60_000)

  test("for an openai-compatible image model the image follows the tool result in a user message; a text-only model gets a note and no image", async () => {
    const images = await project([{ toolCalls: [{ name: "read", arguments: { filePath: "shot.png" } }] }, { text: "seen" }])
    writeUserConfig(images.dataDir, JSON.stringify({ model: "local/scripted", ...withImages(images.server) }))
    fs.writeFileSync(path.join(images.cwd, "shot.png"), png)
    const seen = await reins(["run", "--yolo", "look at shot.png"], images)
    expect(seen.code).toBe(0)
    const second = images.server.requests[1]!.body.messages as Array<{ role: string; content: any }>
    const toolAt = second.findIndex((m) => m.role === "tool")
    expect(second[toolAt]!.content).toContain("Image shot.png (image/png")
    expect(second[toolAt + 1]!.role).toBe("user")
    expect(second[toolAt + 1]!.content).toContainEqual({ type: "image_url", image_url: { url: `data:image/png;base64,${PNG_B64}` } })

    const text = await project([{ toolCalls: [{ name: "read", arguments: { filePath: "shot.png" } }] }, { text: "cannot see" }])
    fs.writeFileSync(path.join(text.cwd, "shot.png"), png)
    const blind = await reins(["run", "--yolo", "look at shot.png"], text)
    expect(blind.code).toBe(0)
    const body = JSON.stringify(text.server.requests[1]!.body)
    expect(body).not.toContain(PNG_B64)
    expect(body).toContain("The image is not shown: this model does not accept images.")
  }, 60_000)
})
