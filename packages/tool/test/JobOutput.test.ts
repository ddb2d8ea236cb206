// A job's output read back in pieces: a character split across pipe chunks waits for its last bytes, bytes that can
// never be a character are returned at once, the end of the job returns everything, the cap never cuts a character.
import { describe, expect, test } from "bun:test"
import { completeEnd, JobOutput } from "../src/builtin/JobOutput.ts"

const bytes = (...b: Array<number>) => Buffer.from(b)

describe("JobOutput", () => {
  test("a multi-byte character split across chunks is returned whole, once its last byte came", () => {
    const out = new JobOutput(1024)
    out.write(Buffer.concat([Buffer.from("ab"), bytes(0xe2, 0x82)]))
    // nothing to return but "ab": not unread once that is read, so a reader waits instead of spinning
    expect(out.unread).toBe(true)
    expect(out.read().text).toBe("ab")
    expect(out.unread).toBe(false)
    expect(out.read()).toMatchObject({ text: "", from: 2, to: 2 })
    out.write(bytes(0xac))
    expect(out.unread).toBe(true)
    expect(out.read()).toMatchObject({ text: "€", from: 2, to: 5 })
    expect(out.unread).toBe(false)
  })

  test("an invalid byte at the end is returned at once, not waited on", () => {
    for (const bad of [0xff, 0xf8, 0x80, 0xbf]) {
      const out = new JobOutput(1024)
      out.write(bytes(0x61, bad))
      expect(out.unread).toBe(true)
      const piece = out.read()
      expect(piece.to).toBe(2)
      expect(piece.text).toBe("a\ufffd")
      expect(out.unread).toBe(false)
    }
    // four continuation bytes are no character's
    expect(completeEnd(bytes(0x80, 0x80, 0x80, 0x80))).toBe(4)
    expect(completeEnd(bytes(0x61, 0xf0, 0x9f, 0x98))).toBe(1)
    expect(completeEnd(bytes(0x61, 0xf0, 0x9f, 0x98, 0x80))).toBe(5)
    expect(completeEnd(Buffer.alloc(0))).toBe(0)
  })

  test("once the job ended, a trailing incomplete character is returned as it is", () => {
    const out = new JobOutput(1024)
    out.write(Buffer.concat([Buffer.from("ab"), bytes(0xc3)]))
    expect(out.read().text).toBe("ab")
    expect(out.unread).toBe(false)
    out.end()
    expect(out.unread).toBe(true)
    expect(out.read()).toMatchObject({ text: "\ufffd", to: 3 })
    expect(out.unread).toBe(false)
  })

  test("the cap cutting mid-character starts at the next whole character", () => {
    const out = new JobOutput(4)
    // "é" is 2 bytes, "€" 3: the last 4 bytes of "xé€é" start at the second byte of "€"
    out.write(Buffer.from("xé€é"))
    const piece = out.read()
    // kept: the last two bytes of "€" and "é": the stray continuation bytes are skipped and counted as dropped
    expect(piece.text).toBe("é")
    expect(piece.dropped).toBe(Buffer.byteLength("xé€"))
    expect(piece.to).toBe(Buffer.byteLength("xé€é"))
    expect(out.tail(3)).toBe("é")
  })
})
