// The TUI's transcript fold, fed the events a real `reins run --format json` printed against the scripted model server.
import { beforeAll, describe, expect, test } from "bun:test"
import * as fs from "node:fs"
import * as path from "node:path"
import type { Message, Part, SessionEvent } from "@reins/domain"
import { fromHistory, initialTranscript, lastAnswer, reduceTranscript } from "../src/tui/view/index.ts"
import { allItems, type TranscriptItem, type TranscriptState } from "../src/tui/view/State.ts"
import { ensureBuilt, events, projects, reins } from "./support.ts"

beforeAll(() => ensureBuilt())

const setup = projects()

const answer = [
  "## Done",
  "",
  "I created **notes.txt** and changed one line. The file now reads as follows, and the command printed three lines.",
  "",
  "- `alpha` stays",
  "- `beta` became `BETA`",
  "",
  "```ts",
  'const notes = read("notes.txt")',
  "",
  "console.log(notes)",
  "```",
  "",
  "That is all for this change; run the tests to be sure nothing else moved. ".repeat(4).trim(),
  "",
  "Last paragraph."
].join("\n")

/** The recorded deltas (joined per 100 ms by --format json) cut into 8-character pieces, as a model streams them. */
const fine = (evs: ReadonlyArray<SessionEvent>): ReadonlyArray<SessionEvent> =>
  evs.flatMap((e): ReadonlyArray<SessionEvent> => (e.type === "part.delta" ? (e.delta.match(/[\s\S]{1,8}/g) ?? []).map((delta) => ({ ...e, delta })) : [e]))

const fold = (evs: ReadonlyArray<SessionEvent>, from: TranscriptState = initialTranscript) => evs.reduce(reduceTranscript, from)

/** The stored shape of the session: the last version of every message and part the events carried. */
const history = (evs: ReadonlyArray<SessionEvent>) => {
  const messages = new Map<string, { info: Message; parts: Map<string, Part> }>()
  for (const e of evs) {
    if (e.type === "message.updated") {
      const m = messages.get(e.message.id)
      messages.set(e.message.id, { info: e.message, parts: m?.parts ?? new Map() })
    }
    if (e.type === "part.updated") messages.get(e.part.messageID)?.parts.set(e.part.id, e.part)
  }
  return [...messages.values()].map((m) => ({ info: m.info, parts: [...m.parts.values()] }))
}

/** Items with the chunks of one answer joined, as (kind, content) pairs. */
const shape = (items: ReadonlyArray<TranscriptItem>) => {
  const out: Array<[string, string]> = []
  for (const item of items) {
    if (item.kind === "text" && item.chunk > 0 && out.at(-1)?.[0] === "text") out.at(-1)![1] += item.text
    else if (item.kind === "tool") out.push(["tool", `${item.part.tool}:${item.part.state.status}`])
    else if (item.kind === "file") out.push(["file", item.name])
    else out.push([item.kind, item.text])
  }
  return out
}

describe("the transcript of a real turn", () => {
  let evs: ReadonlyArray<SessionEvent>
  let cwd: string

  beforeAll(async () => {
    const p = await setup([
      {
        reasoning: "The user wants notes. I will write them, then check.",
        text: "Let me write the notes.",
        toolCalls: [{ name: "write", arguments: { filePath: "notes.txt", content: "alpha\nbeta\n" } }]
      },
      { toolCalls: [{ name: "edit", arguments: { filePath: "notes.txt", oldString: "beta", newString: "BETA" } }] },
      { toolCalls: [{ name: "bash", arguments: { command: "printf 'one\\ntwo\\nthree\\n'; exit 3", description: "print three lines" } }] },
      { toolCalls: [{ name: "grep", arguments: { pattern: "alpha" } }] },
      { text: answer, textChunks: 60, usage: { prompt_tokens: 1200, completion_tokens: 90, cached_tokens: 1000 } }
    ])
    cwd = p.cwd
    const r = await reins(["run", "--format", "json", "--yolo", "write notes"], p)
    expect(r.code).toBe(0)
    evs = events(r.stdout) as unknown as ReadonlyArray<SessionEvent>
  })

  test("every item in order: the prompt, reasoning, text, each tool with its outcome, the answer", () => {
    const state = fold(evs)
    expect(state.live).toEqual([])
    expect(state.status).toBe("idle")
    expect(shape(state.items)).toEqual([
      ["user", "write notes"],
      ["reasoning", "The user wants notes. I will write them, then check."],
      ["text", "Let me write the notes."],
      ["tool", "write:completed"],
      ["tool", "edit:completed"],
      ["tool", "bash:completed"],
      ["tool", "grep:completed"],
      ["text", answer]
    ])
    const bash = state.items.find((i) => i.kind === "tool" && i.part.tool === "bash")
    expect(bash?.kind === "tool" && bash.part.state.status === "completed" && bash.part.state.metadata.exitCode).toBe(3)
    expect(fs.readFileSync(path.join(cwd, "notes.txt"), "utf8")).toBe("alpha\nBETA\n")
  })

  test("the streamed answer is cut at paragraph ends into finished chunks while it streams, never inside the code fence", () => {
    const items = fold(evs).items
    const last = items.at(-1)
    const chunks = items.filter((i) => i.kind === "text" && last?.kind === "text" && i.partID === last.partID)
    expect(chunks.length).toBeGreaterThan(1)
    for (const c of chunks) {
      if (c.kind !== "text") continue
      expect((c.text.match(/```/g) ?? []).length % 2).toBe(0)
    }
    // while streaming, printed chunks are a prefix of the answer and the live piece is the rest
    let state = initialTranscript
    let sawSplit = false
    for (const e of fine(evs)) {
      state = reduceTranscript(state, e)
      const live = state.live.find((i) => i.kind === "text")
      if (e.type === "part.delta" && live?.kind === "text" && live.consumed > 0) {
        sawSplit = true
        const printed = state.items.filter((i) => i.kind === "text" && i.id.startsWith(`${live.partID}#`)).map((i) => (i.kind === "text" ? i.text : ""))
        expect(printed.join("").length).toBe(live.consumed)
        expect(answer.startsWith(printed.join("") + live.text)).toBe(true)
      }
    }
    expect(sawSplit).toBe(true)
  })

  test("a delta changes only the live item: the finished list is the same array, other live items the same objects", () => {
    let state = initialTranscript
    let deltas = 0
    let kept = 0
    for (const e of fine(evs)) {
      const next = reduceTranscript(state, e)
      if (e.type === "part.delta") {
        deltas++
        const settled = next.items.length !== state.items.length
        if (!settled) {
          expect(next.items).toBe(state.items)
          kept++
        }
        // every live item the delta is not about is the very same object as before
        for (const item of state.live)
          if (item.id !== e.partID && !item.id.startsWith(`${e.partID}#`)) expect(next.live.includes(item) || next.items.includes(item)).toBe(true)
      }
      state = next
    }
    expect(deltas).toBeGreaterThan(20)
    expect(kept).toBeGreaterThan(deltas / 2)
  })

  test("session usage is the sum over assistant messages; context tokens are the last step's", () => {
    const state = fold(evs)
    const finals = history(evs).flatMap((m) => (m.info.role === "assistant" ? [m.info] : []))
    expect(finals.length).toBe(5)
    const sum = (f: (m: (typeof finals)[number]) => number) => finals.reduce((n, m) => n + f(m), 0)
    expect(state.usage.input).toBe(sum((m) => m.usage.input))
    expect(state.usage.output).toBe(sum((m) => m.usage.output))
    expect(state.usage.cacheRead).toBe(sum((m) => m.usage.cacheRead))
    expect(state.usage.cacheRead).toBe(1000)
    const last = finals.at(-1)!.usage
    expect(state.usage.contextTokens).toBe(last.input + last.output + last.cacheRead + last.cacheWrite)
  })

  test("lastAnswer is the turn's answer; fromHistory of the stored messages shows the same transcript", () => {
    const state = fold(evs)
    expect(lastAnswer(state)).toBe(answer)
    const resumed = fromHistory(history(evs))
    expect(shape(resumed.items)).toEqual(shape(state.items))
    expect(resumed.usage).toEqual(state.usage)
    expect(lastAnswer(resumed)).toBe(answer)
    // the same messages seen again (a resumed session's running turn) are not counted twice
    expect(fold(evs, resumed).usage).toEqual(state.usage)
  })

  test("a read the non-interactive policy denies: the question opens and closes, and a notice says why", async () => {
    const p = await setup([{ toolCalls: [{ name: "read", arguments: { filePath: ".env" } }] }, { text: "I could not read it." }])
    fs.writeFileSync(path.join(p.cwd, ".env"), "SECRET=1\n")
    const r = await reins(["run", "--format", "json", "read the env"], p)
    const run = events(r.stdout) as unknown as ReadonlyArray<SessionEvent>
    let state = initialTranscript
    let asked = false
    for (const e of run) {
      state = reduceTranscript(state, e)
      if (e.type === "permission.asked") {
        asked = true
        expect(state.permission?.permission).toBe("read")
        expect(state.permission?.patterns[0]).toContain(".env")
      }
      if (e.type === "permission.replied") expect(state.permission).toBeUndefined()
    }
    expect(asked).toBe(true)
    const shown = shape(allItems(state))
    expect(shown).toContainEqual(["notice", "permission denied by the non-interactive policy"])
    expect(shown).toContainEqual(["tool", "read:error"])
    expect(lastAnswer(state)).toBe("I could not read it.")
  })
})

describe("fromHistory of a session with an undone turn", () => {
  test("every message an undo marked is left out: the prompt, the loop's message after a compaction in it, a message queued into it", () => {
    const user = (id: string, text: string, metadata?: Record<string, unknown>) => ({
      info: { id, sessionID: "ses_x", role: "user", time: { created: 1 }, ...(metadata ? { metadata } : {}) } as Message,
      parts: [{ id: `prt_${id}`, sessionID: "ses_x", messageID: id, type: "text", text } as Part]
    })
    const shown = (items: ReadonlyArray<TranscriptItem>) => items.flatMap((i) => (i.kind === "user" ? [i.text] : []))
    const state = fromHistory([
      user("msg_1", "KEPT"),
      user("msg_2", "UNDONE", { reverted: true }),
      user("msg_3", "Continue with the task", { compaction_continue: true, reverted: true }),
      user("msg_4", "QUEUED INTO IT", { queued: true, reverted: "final" }),
      user("msg_5", "AFTER")
    ])
    expect(shown(allItems(state))).toEqual(["KEPT", "AFTER"])
  })
})
