import { describe, expect, test } from "bun:test"
import * as fs from "node:fs"
import * as path from "node:path"
import { read } from "../src/builtin/read.ts"
import { MAX_IMAGE_BYTES, dataUrl, dataUrlBytes, sniffImage } from "../src/Media.ts"
import { runTool, tempDir } from "./helpers.ts"

const PNG_B64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
const png = Buffer.from(PNG_B64, "base64")

describe("image sniffing", () => {
  test.each([
    ["png", png, "image/png"],
    ["jpeg", Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46]), "image/jpeg"],
    ["gif87a", Buffer.from("GIF87a\x01\x00\x01\x00", "latin1"), "image/gif"],
    ["gif89a", Buffer.from("GIF89a\x01\x00\x01\x00", "latin1"), "image/gif"],
    ["webp", Buffer.concat([Buffer.from("RIFF"), Buffer.from([0x24, 0, 0, 0]), Buffer.from("WEBPVP8 ")]), "image/webp"],
    ["riff that is not webp (wav)", Buffer.concat([Buffer.from("RIFF"), Buffer.from([0x24, 0, 0, 0]), Buffer.from("WAVEfmt ")]), undefined],
    ["text", Buffer.from("\x89PNG is how a png starts"), undefined],
    ["gif-like text", Buffer.from("GIF8 is not a gif"), undefined],
    ["empty", Buffer.alloc(0), undefined],
    ["elf", Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]), undefined]
  ] as const)("%s", (_, bytes, mime) => {
    expect(sniffImage(bytes)).toBe(mime)
  })

  test("data: URLs round-trip", () => {
    expect(dataUrl("image/png", png)).toBe(`data:image/png;base64,${PNG_B64}`)
    expect(Buffer.from(dataUrlBytes(dataUrl("image/png", png))).equals(png)).toBe(true)
  })
})

describe("read of an image", () => {
  test("an image (by its bytes, whatever its name) comes back as an attachment with a one-line note", async () => {
    const cwd = tempDir()
    fs.writeFileSync(path.join(cwd, "shot.png"), png)
    fs.writeFileSync(path.join(cwd, "pixel.bin"), png)
    for (const name of ["shot.png", "pixel.bin"]) {
      const r = await runTool(read, { filePath: name }, { cwd })
      expect(r._tag).toBe("Success")
      expect(r.success.output).toBe(`Image ${name} (image/png, 69 B), attached below.`)
      expect(r.success.attachments).toEqual([{ mime: "image/png", filename: name, url: `data:image/png;base64,${PNG_B64}` }])
    }
  })

  test("an image over the size providers take is refused with what to do", async () => {
    const cwd = tempDir()
    fs.writeFileSync(path.join(cwd, "huge.png"), Buffer.concat([png, Buffer.alloc(MAX_IMAGE_BYTES)]))
    const r = await runTool(read, { filePath: "huge.png" }, { cwd })
    expect(r._tag).toBe("Failure")
    expect(r.failure.message).toContain("over the 5.0 MB reins sends")
  })

  test("a text file gives no attachments", async () => {
    const cwd = tempDir()
    fs.writeFileSync(path.join(cwd, "a.txt"), "alpha\n")
    const r = await runTool(read, { filePath: "a.txt" }, { cwd })
    expect(r.success.attachments).toBeUndefined()
  })
})
