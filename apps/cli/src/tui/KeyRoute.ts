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

const isCtrlC = (input: string, key: Key) => key.ctrl && input === "c"

export interface KeyRoute {
  /**
   * A picker is being opened: the keys from now on are held for it. Its number: `cancelled` says whether Ctrl+C gave
   * up on it meanwhile (the load it waits for may be slow: Ctrl+C is never held, it goes to the prompt at once).
   */
  readonly hold: () => number
  readonly cancelled: (hold: number) => boolean
  /**
   * The picker did not open (nothing to pick, an error): the keys held for it were typed for it, so the navigation
   * keys and Enter are dropped (in the prompt, Down and Enter would bring back the last message and send it); plain
   * text goes to the prompt, and Esc only when `stops` (a turn runs: Esc stops it).
   */
  readonly drop: (stops: boolean) => void
  /** Keys are held for a picker still to attach. */
  readonly holding: () => boolean
  /** The picker takes the keys: those held first, then each as it comes; it detaches as it closes (what follows is the prompt's). */
  readonly attach: (handler: KeyHandler) => void
  readonly detach: (handler: KeyHandler) => void
  /** The prompt's own handling: where keys go when no picker has them (those held and left over when a picker closed). */
  readonly fallback: (handler: KeyHandler) => void
  /** A key: true when a picker (or the hold for one) took it; false when it is the prompt's. */
  readonly take: (input: string, key: Key) => boolean
  /** A key given on to whoever has the keys now (the rest of a burst after the Enter that closed a picker). */
  readonly pass: (input: string, key: Key) => void
}

export const makeKeyRoute = (): KeyRoute => {
  let held: Array<readonly [string, Key]> | undefined
  let picker: KeyHandler | undefined
  let prompt: KeyHandler | undefined
  // holds are numbered; those Ctrl+C gave up on are all up to `gaveUp`
  let holds = 0
  let gaveUp = 0
  /** Gives `keys` to whoever has the keys now (a picker, else the prompt), each after the one before took effect. */
  const replay = (keys: ReadonlyArray<readonly [string, Key]>) => {
    for (const [input, key] of keys) {
      // a key held may close the picker (Enter picks) or ask for another (held again): the rest follow it
      if (held !== undefined) held.push([input, key])
      else if (picker !== undefined) picker(input, key)
      else prompt?.(input, key)
    }
  }
  return {
    hold: () => {
      if (picker === undefined) held ??= []
      return ++holds
    },
    cancelled: (hold) => hold <= gaveUp,
    drop: (stops) => {
      const keys = held ?? []
      held = undefined
      replay(keys.filter(([input, key]) => plainText(input, key) || (stops && key.escape)))
    },
    holding: () => held !== undefined,
    attach: (handler) => {
      picker = handler
      const keys = held ?? []
      held = undefined
      replay(keys)
    },
    detach: (handler) => {
      if (picker === handler) picker = undefined
    },
    fallback: (handler) => {
      prompt = handler
    },
    take: (input, key) => {
      if (picker !== undefined) picker(input, key)
      else if (held !== undefined) {
        // Ctrl+C while a picker opens gives up on it (what was typed for it goes) and is the prompt's
        if (!isCtrlC(input, key)) held.push([input, key])
        else {
          held = undefined
          gaveUp = holds
          return false
        }
      } else return false
      return true
    },
    pass: (input, key) => replay([[input, key]])
  }
}
