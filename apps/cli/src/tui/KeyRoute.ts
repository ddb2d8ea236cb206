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

export interface KeyRoute {
  /** A picker is being opened: the keys from now on are held for it. */
  readonly hold: () => void
  /**
   * The picker did not open (nothing to pick, an error): the keys held for it are dropped, as they were typed for the
   * picker (Down and Enter in the prompt would walk its history and send what they found), but for Esc and Ctrl+C:
   * the prompt's, which stop a turn that started meanwhile.
   */
  readonly drop: () => void
  /** Keys are held for a picker still to attach. */
  readonly holding: () => boolean
  /** The picker takes the keys: those held first, then each as it comes; it detaches as it closes (what follows is the prompt's). */
  readonly attach: (handler: KeyHandler) => void
  readonly detach: (handler: KeyHandler) => void
  /** The prompt's own handling: where keys go when no picker has them (those held and left over when a picker closed). */
  readonly fallback: (handler: KeyHandler) => void
  /** A key: true when a picker (or the hold for one) took it; false when it is the prompt's. */
  readonly take: (input: string, key: Key) => boolean
}

export const makeKeyRoute = (): KeyRoute => {
  let held: Array<readonly [string, Key]> | undefined
  let picker: KeyHandler | undefined
  let prompt: KeyHandler | undefined
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
    },
    drop: () => {
      const keys = held ?? []
      held = undefined
      replay(keys.filter(([input, key]) => key.escape || (key.ctrl && input === "c")))
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
      else if (held !== undefined) held.push([input, key])
      else return false
      return true
    }
  }
}
