// Where the keys go while a picker opens. A picker is opened by a key of the prompt's (Enter on /sessions, Esc Esc),
// often after reading the store, and takes keys only once it is drawn: keys typed in between (Down and Enter right
// after /sessions, as a fast typist or a macro sends them) would otherwise reach the prompt — Down walking its history,
// Enter sending it — or be lost. From the moment a picker is asked for, its keys are held; the picker takes them first
// when it attaches, then every key as it comes. The prompt is the one listener: it asks the route before it edits.
import type { Key } from "ink"

export type KeyHandler = (input: string, key: Key) => void

/** A key that is only text (what the prompt passes on when a picker is asked for in the middle of a typed burst). */
export const TEXT_KEY: Key = {
  upArrow: false,
  downArrow: false,
  leftArrow: false,
  rightArrow: false,
  pageDown: false,
  pageUp: false,
  home: false,
  end: false,
  return: false,
  escape: false,
  ctrl: false,
  shift: false,
  tab: false,
  backspace: false,
  delete: false,
  meta: false,
  super: false,
  hyper: false,
  capsLock: false,
  numLock: false
}

/** A plain key of text with no Enter or Tab in it: what the prompt may take of the keys held for a picker that did not open. */
const plainText = (input: string, key: Key) =>
  input !== "" &&
  !/[\r\n\t]/.test(input) &&
  !(key.ctrl || key.meta || key.escape || key.return || key.tab || key.backspace || key.delete) &&
  !(key.upArrow || key.downArrow || key.leftArrow || key.rightArrow || key.pageUp || key.pageDown || key.home || key.end)

/** Ctrl+C and Ctrl+D are never held: they give up on what the keys were held for and are the prompt's (stop, exit). */
const escapes = (input: string, key: Key) => key.ctrl && (input === "c" || input === "d")

/** A pasted text as a picker takes it: one line of filter. */
const asFilter = (text: string) => text.replace(/[\r\n\t]+/g, " ")

/** Something typed: a key, or a bracketed paste (kept as pasted: the prompt takes it whole). */
type Typed = { readonly input: string; readonly key: Key } | { readonly paste: string }

export type PasteHandler = (text: string) => void

export interface KeyRoute {
  /**
   * From now on keys are held (for a picker opening, or until what a pick does is done). Its number, for `cancelled`
   * (Ctrl+C or Ctrl+D gave up on it: they are never held) and to `drop` or `release` what it held.
   */
  readonly hold: () => number
  readonly cancelled: (hold: number) => boolean
  /**
   * The picker `hold` was for did not open (nothing to pick, an error): the keys held for it were typed for it, so the
   * navigation keys and Enter are dropped (in the prompt, Down and Enter would bring back the last message and send
   * it); plain text and pastes go to the prompt, and Esc only when `stops` (a turn runs: Esc stops it). Nothing when a
   * newer hold has the keys.
   */
  readonly drop: (hold: number, stops: boolean) => void
  /** What a pick does is done: every key held since `hold` goes where keys go now (the prompt), as typed. The number given on. */
  readonly release: (hold: number) => number
  /** Keys are being held. */
  readonly holding: () => boolean
  /** The picker takes the keys: those held first, then each as it comes; it detaches as it closes (what follows is the prompt's). */
  readonly attach: (handler: KeyHandler) => void
  readonly detach: (handler: KeyHandler) => void
  /** The prompt's own handling: where keys and pastes go when no picker has them and none are held. */
  readonly fallback: (key: KeyHandler, paste: PasteHandler) => void
  /** A key: true when a picker (or a hold) took it; false when it is the prompt's. */
  readonly take: (input: string, key: Key) => boolean
  /** A bracketed paste: true when a picker (as its filter) or a hold took it; false when it is the prompt's. */
  readonly takePaste: (text: string) => boolean
  /** A key given on to whoever has the keys now (the rest of a burst after the Enter that closed a picker). */
  readonly pass: (input: string, key: Key) => void
}

export const makeKeyRoute = (): KeyRoute => {
  let held: Array<Typed> | undefined
  let picker: KeyHandler | undefined
  let promptKey: KeyHandler | undefined
  let promptPaste: PasteHandler | undefined
  // holds are numbered; `current` is the one holding now; those given up on are all up to `gaveUp`
  let holds = 0
  let current = 0
  let gaveUp = 0
  /** Gives `typed` to whoever has the keys now (a hold, a picker, else the prompt), each after the one before took effect. */
  const replay = (typed: ReadonlyArray<Typed>) => {
    for (const t of typed) {
      // a key may close the picker (Enter picks) or ask for another (held again): the rest follow it
      if (held !== undefined) held.push(t)
      else if ("paste" in t) picker !== undefined ? picker(asFilter(t.paste), TEXT_KEY) : promptPaste?.(t.paste)
      else if (picker !== undefined) picker(t.input, t.key)
      else promptKey?.(t.input, t.key)
    }
  }
  /** What `hold` held, taken off (empty when another hold has the keys now). */
  const takeHeld = (hold: number) => {
    if (hold !== current || held === undefined) return []
    const typed = held
    held = undefined
    return typed
  }
  return {
    hold: () => {
      current = ++holds
      if (picker === undefined) held ??= []
      return current
    },
    cancelled: (hold) => hold <= gaveUp,
    drop: (hold, stops) => replay(takeHeld(hold).filter((t) => "paste" in t || plainText(t.input, t.key) || (stops && t.key.escape))),
    release: (hold) => {
      const typed = takeHeld(hold)
      replay(typed)
      return typed.length
    },
    holding: () => held !== undefined,
    attach: (handler) => {
      picker = handler
      const typed = held ?? []
      held = undefined
      replay(typed)
    },
    detach: (handler) => {
      if (picker === handler) picker = undefined
    },
    fallback: (key, paste) => {
      promptKey = key
      promptPaste = paste
    },
    take: (input, key) => {
      if (picker !== undefined) picker(input, key)
      else if (held === undefined) return false
      else if (escapes(input, key)) {
        held = undefined
        gaveUp = holds
        return false
      } else held.push({ input, key })
      return true
    },
    takePaste: (text) => {
      if (picker !== undefined) picker(asFilter(text), TEXT_KEY)
      else if (held !== undefined) held.push({ paste: text })
      else return false
      return true
    },
    pass: (input, key) => replay([{ input, key }])
  }
}
