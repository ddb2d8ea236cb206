import { describe, expect, test } from "bun:test"
import { byteLength, countLines, cut, joinEnds, MAX_BYTES, MAX_LINES } from "../src/index.ts"

const lines = (n: number, width = 5) => Array.from({ length: n }, (_, i) => `${i + 1}`.padStart(width, "0")).join("\n")
const limits = { maxLines: MAX_LINES, maxBytes: MAX_BYTES }

describe("cut at the limits", () => {
  test("exactly 2,000 lines is not cut; 2,001 is", () => {
    expect(cut(lines(2000), { direction: "head", ...limits }).truncated).toBe(false)
    const r = cut(lines(2001), { direction: "head", ...limits })
    expect(r.truncated).toBe(true)
    expect(countLines(r.text)).toBeLessThanOrEqual(MAX_LINES)
    expect(r.text).toContain(`…${r.droppedLines} lines truncated…`)
    expect(r.text.startsWith("00001\n00002\n")).toBe(true)
  })
  test("exactly 51,200 bytes is not cut; 51,201 is", () => {
    // 512 lines of 99 characters + newline = 51,200 bytes (the last newline included)
    const text = Array.from({ length: 512 }, () => `${"x".repeat(99)}\n`).join("")
    expect(byteLength(text)).toBe(51_200)
    expect(cut(text, { direction: "tail", ...limits }).truncated).toBe(false)
    const r = cut(`${text}y`, { direction: "tail", ...limits })
    expect(r.truncated).toBe(true)
    expect(byteLength(r.text)).toBeLessThanOrEqual(MAX_BYTES)
    expect(r.text.endsWith("\ny")).toBe(true)
  })
  test("a trailing newline does not count as another line", () => {
    expect(countLines("a\nb\n")).toBe(2)
    expect(countLines("a\nb")).toBe(2)
    expect(countLines("")).toBe(0)
    expect(cut(`${lines(2000)}\n`, { direction: "head", ...limits }).truncated).toBe(false)
  })
})

describe("cut on boundaries", () => {
  test("tail keeps the last whole lines, head the first", () => {
    const r = cut(lines(100), { direction: "tail", maxLines: 11, maxBytes: 10_000 })
    expect(r.text).toBe(`…90 lines truncated…\n${lines(100).split("\n").slice(90).join("\n")}`)
    const h = cut(lines(100), { direction: "head", maxLines: 4, maxBytes: 10_000 })
    expect(h.text).toBe("00001\n00002\n00003\n…97 lines truncated…")
  })
  test("head_tail keeps both ends and counts the middle", () => {
    const r = cut(lines(1000), { direction: "head_tail", maxLines: 41, maxBytes: 100_000 })
    const out = r.text.split("\n")
    expect(out[0]).toBe("00001")
    expect(out.at(-1)).toBe("01000")
    expect(out).toContain(`…${r.droppedLines} lines truncated…`)
    expect(out.length).toBeLessThanOrEqual(41)
    expect(r.droppedLines).toBe(1000 - (out.length - 1))
  })
  test("a single line longer than the byte limit is cut inside, at a character boundary", () => {
    const line = "é".repeat(40_000) // 80,000 bytes
    for (const direction of ["head", "tail", "head_tail"] as const) {
      const r = cut(line, { direction, maxLines: 10, maxBytes: 1_000 })
      expect(r.truncated).toBe(true)
      expect(byteLength(r.text)).toBeLessThanOrEqual(1_000)
      expect(r.text).not.toContain("\uFFFD")
      expect(r.text).toContain("é".repeat(100))
      expect(r.text).toContain("80000 bytes cut")
    }
  })
  test("multibyte text at the cut stays whole", () => {
    // lines of 4-byte emoji; the byte budget falls in the middle of a line
    const text = Array.from({ length: 300 }, (_, i) => `${i} ${"😀".repeat(20)}`).join("\n")
    const r = cut(text, { direction: "head", maxLines: 1000, maxBytes: 5_003 })
    expect(r.truncated).toBe(true)
    expect(r.text).not.toContain("\uFFFD")
    for (const l of r.text.split("\n").slice(0, -1)) expect(l.endsWith("😀".repeat(20))).toBe(true)
    expect(byteLength(r.text)).toBeLessThanOrEqual(5_003)
  })
  test("CRLF output keeps its line endings and is counted by lines", () => {
    const text = `${Array.from({ length: 3000 }, (_, i) => `row ${i}`).join("\r\n")}\r\n`
    expect(countLines(text)).toBe(3000)
    const r = cut(text, { direction: "tail", ...limits })
    expect(r.truncated).toBe(true)
    expect(r.text.endsWith("row 2999\r")).toBe(true)
    expect(r.text).toContain("row 2998\r\nrow 2999")
    expect(r.totalLines).toBe(3000)
  })
  test("no trailing newline: the last line is kept whole", () => {
    const r = cut(`${lines(5000)}\nlast line without newline`, { direction: "tail", ...limits })
    expect(r.text.endsWith("\nlast line without newline")).toBe(true)
  })
})

describe("joinEnds", () => {
  test("a view of a huge output from its kept head and tail", () => {
    const head = `${lines(5000).split("\n").slice(0, 3000).join("\n")}\n`
    const tail = "99000\n99001\n99002\n"
    const view = joinEnds(head, tail, 99_002, 100, 10_000)
    const out = view.split("\n")
    expect(out[0]).toBe("00001")
    expect(out.at(-1)).toBe("99002")
    expect(out.length).toBeLessThanOrEqual(100)
    const headKept = out.findIndex((l) => l.startsWith("…"))
    expect(out[headKept]).toBe(`…${99_002 - headKept - 3} lines truncated…`)
  })
})
