import { describe, expect, test } from "bun:test"
import { Effect } from "effect"
import type { Event, Part, ToolPart } from "@reins/domain"
import { plain } from "../src/present/Style.ts"
import { textPrinter } from "../src/TextPrinter.ts"

const base = { sessionID: "ses_1", messageID: "msg_1" }
const bash = (state: ToolPart["state"]): Part => ({ ...base, id: "prt_t", type: "tool", callID: "call_1", tool: "bash", state })
const stepFinish = (id: string, input: number, output: number, cacheRead: number, cost: number): Part => ({
  ...base,
  id,
  type: "step-finish",
  reason: "stop",
  usage: { input, output, reasoning: 0, cacheRead, cacheWrite: 0 },
  cost
})
const updated = (part: Part): Event => ({ type: "part.updated", part })
const delta = (text: string): Event => ({ type: "part.delta", sessionID: "ses_x", partID: "prt_x", partType: "text", delta: text })

const printer = () => {
  const out: Array<string> = []
  const err: Array<string> = []
  let now = 1_000
  const p = textPrinter(
    (s) => void out.push(s),
    (s) => void err.push(s),
    { style: plain, live: false, outIsTTY: false, cwd: "/p", now: () => now }
  )
  const feed = (...events: Array<Event>) => Effect.runSync(Effect.forEach(events, p.handler, { discard: true }))
  return { p, out, err, feed, advance: (ms: number) => void (now += ms) }
}

const turn = (steps: number) => ({ sessionID: "ses_1", steps })

describe("textPrinter", () => {
  test("the answer alone on stdout, ended before a tool line; one line per finished call however often it repeats", () => {
    const { p, out, err, feed } = printer()
    const running = bash({ status: "running", input: { command: "make" }, time: { start: 0 } })
    const done = bash({ status: "completed", input: { command: "make" }, output: "", title: "make", metadata: { exitCode: 0 }, time: { start: 0, end: 2500 } })
    feed(delta("Let me "), delta("build."), updated(running), updated(running), updated(done), updated(done), delta("Built."))
    p.finish()
    p.finish()
    expect(out.join("")).toBe("Let me build.\nBuilt.\n")
    expect(err.join("")).toBe("✓ bash make · exit 0 · 2.5s\n")
  })

  test("the closing line sums each step once; cache rate from the cache reads", () => {
    const { p, feed, advance } = printer()
    const first = stepFinish("prt_s1", 1_000, 100, 3_000, 0.01)
    feed(updated(first), updated(first), updated(stepFinish("prt_s2", 500, 50, 4_500, 0.002)))
    advance(4_200)
    expect(p.closing(turn(2))).toBe("session ses_1 · 2 steps · 9k in / 150 out · $0.01 · cache 83% · 4.2s")
    expect(p.spent().cost).toBeCloseTo(0.012)
  })

  test("interrupted: the calls cut off, the time, how to continue", () => {
    const { p, feed, advance } = printer()
    feed(updated(bash({ status: "running", input: { command: "sleep 60" }, time: { start: 1_000 } })))
    advance(3_000)
    expect(p.interrupted("ses_1").split("\n")).toEqual([
      "✗ bash sleep 60 · interrupted after 3.0s",
      "✗ interrupted after 3.0s",
      'Continue with: reins run --session ses_1 "…"',
      '           or: reins run -c "…" (the latest session here)'
    ])
    expect(p.interrupted(undefined)).not.toContain("Continue")
  })
})
