// The keys typed while a picker opens (KeyRoute): held for it, given to it first when it attaches, dropped when it
// does not open; those after a key that closed it go back to the prompt, in order.
import { describe, expect, test } from "bun:test"
import type { Key } from "ink"
import { makeKeyRoute, TEXT_KEY, type KeyHandler } from "../src/tui/KeyRoute.ts"

const down: Key = { ...TEXT_KEY, downArrow: true }
const enter: Key = { ...TEXT_KEY, return: true }
const name = (input: string, key: Key) => (key.downArrow ? "Down" : key.return ? "Enter" : input)

const recorder = () => {
  const seen: Array<string> = []
  const handler: KeyHandler = (input, key) => void seen.push(name(input, key))
  return { seen, handler }
}

describe("KeyRoute", () => {
  test("with no picker open or opening, every key is the prompt's", () => {
    const route = makeKeyRoute()
    expect(route.take("a", TEXT_KEY)).toBe(false)
    expect(route.holding()).toBe(false)
  })

  test("keys typed while a picker opens are held, then given to it first and in order; the next ones as they come", () => {
    const route = makeKeyRoute()
    route.hold()
    expect(route.take("", down)).toBe(true)
    expect(route.take("ap", TEXT_KEY)).toBe(true)
    expect(route.holding()).toBe(true)
    const picker = recorder()
    route.attach(picker.handler)
    expect(picker.seen).toEqual(["Down", "ap"])
    expect(route.holding()).toBe(false)
    expect(route.take("", enter)).toBe(true)
    expect(picker.seen).toEqual(["Down", "ap", "Enter"])
    route.detach(picker.handler)
    expect(route.take("x", TEXT_KEY)).toBe(false)
  })

  for (const stops of [false, true])
    test(`a picker that does not open: its navigation keys and Enter are dropped, plain text and pastes go to the prompt, Esc ${stops ? "too (a turn runs: it stops it)" : "not (no turn to stop)"}`, () => {
      const route = makeKeyRoute()
      const seen: Array<string> = []
      route.fallback(
        (input, key) => seen.push(key.escape ? "Esc" : name(input, key)),
        (text) => seen.push(`paste ${JSON.stringify(text)}`)
      )
      const hold = route.hold()
      route.take("", down)
      route.take("", { ...TEXT_KEY, escape: true })
      route.take("hello", TEXT_KEY)
      route.takePaste("line one\nline\ttwo")
      route.take("", enter)
      route.take("sent\r", TEXT_KEY)
      route.drop(hold, stops)
      expect(route.holding()).toBe(false)
      // in the prompt, Down and Enter would bring back the last message and send it; "sent\r" would send too. A paste
      // reaches the prompt as pasted
      expect(seen).toEqual([...(stops ? ["Esc"] : []), "hello", 'paste "line one\\nline\\ttwo"'])
      expect(route.take("next", TEXT_KEY)).toBe(false)
    })

  test("a paste held for a picker, or pasted into one, is one line of its filter", () => {
    const route = makeKeyRoute()
    route.hold()
    route.takePaste("a\nb")
    const picker = recorder()
    route.attach(picker.handler)
    route.takePaste("c\td")
    expect(picker.seen).toEqual(["a b", "c d"])
  })

  test("a picker given up on (Ctrl+C) that finishes loading late drops nothing of the keys held for the next one", () => {
    const route = makeKeyRoute()
    const prompt = recorder()
    route.fallback(prompt.handler, (text) => prompt.seen.push(`paste ${text}`))
    const first = route.hold()
    expect(route.take("c", { ...TEXT_KEY, ctrl: true })).toBe(false)
    const second = route.hold()
    route.take("pears", TEXT_KEY)
    route.take("", down)
    // the first load ends: it did not open (given up on)
    route.drop(first, false)
    expect(route.holding()).toBe(true)
    expect(prompt.seen).toEqual([])
    expect(route.cancelled(second)).toBe(false)
    const picker = recorder()
    route.attach(picker.handler)
    expect(picker.seen).toEqual(["pears", "Down"])
  })

  test("keys typed while what a pick does runs are held, then given to the prompt as typed (Enter included); their count", () => {
    const route = makeKeyRoute()
    const prompt = recorder()
    route.fallback(prompt.handler, (text) => prompt.seen.push(`paste ${text}`))
    const hold = route.hold()
    route.take("second message", TEXT_KEY)
    route.take("", enter)
    expect(prompt.seen).toEqual([])
    expect(route.release(hold)).toBe(2)
    expect(prompt.seen).toEqual(["second message", "Enter"])
    expect(route.release(hold)).toBe(0)
  })

  test("Ctrl+D is never held either", () => {
    const route = makeKeyRoute()
    const hold = route.hold()
    expect(route.take("d", { ...TEXT_KEY, ctrl: true })).toBe(false)
    expect(route.cancelled(hold)).toBe(true)
  })

  test("Ctrl+C while a picker opens is never held: it gives up on that picker and is the prompt's", () => {
    const route = makeKeyRoute()
    const first = route.hold()
    route.take("", down)
    expect(route.take("c", { ...TEXT_KEY, ctrl: true })).toBe(false)
    expect(route.holding()).toBe(false)
    expect(route.cancelled(first)).toBe(true)
    // a picker asked for afterwards is not given up on
    const second = route.hold()
    expect(route.cancelled(second)).toBe(false)
    const picker = recorder()
    route.attach(picker.handler)
    expect(picker.seen).toEqual([])
  })

  test("the rest of a burst passed on after the Enter that closed a picker reaches the prompt", () => {
    const route = makeKeyRoute()
    const prompt = recorder()
    route.fallback(prompt.handler, (text) => prompt.seen.push(`paste ${text}`))
    const picker: KeyHandler = () => route.detach(picker)
    route.attach(picker)
    route.take("", enter)
    route.pass("and green ones?", TEXT_KEY)
    expect(prompt.seen).toEqual(["and green ones?"])
  })

  test("a held Enter that closes the picker: the keys after it are the prompt's, in order", () => {
    const route = makeKeyRoute()
    const prompt = recorder()
    route.fallback(prompt.handler, (text) => prompt.seen.push(`paste ${text}`))
    route.hold()
    for (const [input, key] of [
      ["", down],
      ["", enter],
      ["hello", TEXT_KEY],
      ["", enter]
    ] as const)
      route.take(input, key)
    const seen: Array<string> = []
    const picker: KeyHandler = (input, key) => {
      seen.push(name(input, key))
      // as the Picker does: it lets go of the keys as it closes
      if (key.return) route.detach(picker)
    }
    route.attach(picker)
    expect(seen).toEqual(["Down", "Enter"])
    expect(prompt.seen).toEqual(["hello", "Enter"])
  })

  test("a held key that asks for another picker: the keys after it are held for that one", () => {
    const route = makeKeyRoute()
    const prompt = recorder()
    route.fallback(
      (input, key) => {
        prompt.handler(input, key)
        // Enter on a command that opens a picker
        if (key.return) route.hold()
      },
      () => undefined
    )
    route.hold()
    for (const [input, key] of [
      ["", enter],
      ["", enter],
      ["", down]
    ] as const)
      route.take(input, key)
    const first: KeyHandler = (_input, key) => {
      if (key.return) route.detach(first)
    }
    route.attach(first)
    // the first Enter closed the first picker, the second went to the prompt and asked for another: Down waits for it
    expect(prompt.seen).toEqual(["Enter"])
    expect(route.holding()).toBe(true)
    const second = recorder()
    route.attach(second.handler)
    expect(second.seen).toEqual(["Down"])
  })

  test("asked for while a picker has the keys: nothing is held, the keys stay the picker's", () => {
    const route = makeKeyRoute()
    const picker = recorder()
    route.attach(picker.handler)
    route.hold()
    expect(route.holding()).toBe(false)
    route.take("", down)
    expect(picker.seen).toEqual(["Down"])
  })
})
