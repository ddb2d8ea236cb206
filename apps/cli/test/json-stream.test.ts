import { beforeAll, describe, expect, test } from "bun:test"
import { ensureBuilt, events, projects, reins } from "./support.ts"

beforeAll(() => ensureBuilt())

const setup = projects()

/** A 50 KB answer the scripted model streams in 5,000 pieces of 10 characters. */
const answer = Array.from({ length: 5000 }, (_, i) => `w${String(i).padStart(8, "0")} `).join("")

describe("streamed text in --format json", () => {
  test("a 50 KB answer in 5,000 deltas is under 200 KB of JSON, and the deltas and the final part are the answer", async () => {
    const p = await setup([{ text: answer, textChunks: 5000 }])
    const r = await reins(["run", "--format", "json", "answer at length"], p)
    expect(r.code).toBe(0)
    // each event carrying the text so far was ~125 MB here
    expect(Buffer.byteLength(r.stdout)).toBeLessThan(200 * 1024)
    const evs = events(r.stdout)
    const deltas = evs.filter((e) => e.type === "part.delta")
    expect(answer.length).toBe(50_000)
    expect(deltas.length).toBeGreaterThan(0)
    expect(deltas.every((e) => e.partType === "text" && e.partID === deltas[0]!.partID)).toBe(true)
    const text = evs.filter((e) => e.type === "part.updated" && e.part.id === deltas[0]!.partID)
    expect(deltas.map((e) => e.delta).join("")).toBe(answer)
    // the part whole twice: empty when it starts, all of it when it ends
    expect(text.map((e) => e.part.text)).toEqual(["", answer])
    // every delta comes between the two
    const first = evs.indexOf(text[0]!)
    const last = evs.indexOf(text[1]!)
    expect(deltas.every((e) => evs.indexOf(e) > first && evs.indexOf(e) < last)).toBe(true)
  })

  test("a stream that breaks after some text fails the run, and every delta streamed before is printed", async () => {
    const p = await setup([{ text: answer, textChunks: 5000, closeAfterChunks: 40 }])
    const r = await reins(["run", "--format", "json", "answer at length"], p)
    expect(r.code).toBe(1)
    const evs = events(r.stdout)
    const streamed = evs
      .filter((e) => e.type === "part.delta")
      .map((e) => e.delta)
      .join("")
    expect(streamed.length).toBeGreaterThan(0)
    expect(answer.startsWith(streamed)).toBe(true)
    // the stored part ends with the same text the deltas carried
    const last = evs.filter((e) => e.type === "part.updated" && e.part.type === "text").at(-1)
    expect(last?.part.text).toBe(streamed)
  })

  test("text mode prints the answer once, exactly", async () => {
    const p = await setup([{ text: answer, textChunks: 5000 }])
    const r = await reins(["run", "answer at length"], p)
    expect(r.code).toBe(0)
    expect(r.stdout).toBe(`${answer}\n`)
  })

  test("reasoning streams as its own deltas, and text mode leaves it out", async () => {
    const reasoning = "first I think, then I answer. ".repeat(40)
    const p = await setup([{ reasoning, text: "the answer", textChunks: 3 }])
    const json = await reins(["run", "--format", "json", "think"], p)
    expect(json.code).toBe(0)
    const evs = events(json.stdout)
    const joined = (type: string) =>
      evs
        .filter((e) => e.type === "part.delta" && e.partType === type)
        .map((e) => e.delta)
        .join("")
    expect(joined("reasoning")).toBe(reasoning)
    expect(joined("text")).toBe("the answer")
    const q = await setup([{ reasoning, text: "the answer", textChunks: 3 }])
    const text = await reins(["run", "think"], q)
    expect(text.stdout).toBe("the answer\n")
  })
})
