import { SPINNER_INTERVAL_MS, spinnerLine } from "./present/Spinner.ts"
import { stripAnsi, type Style } from "./present/Style.ts"
import { firstLine } from "./present/Units.ts"

/** Clears the terminal line the cursor is on and returns to its start. */
const CLEAR = "\r\x1b[2K"

export interface LiveLineOptions {
  readonly style: Style
  /** Whether to draw at all: off on a pipe and on a dumb terminal, where `\r` and erasing do not work. */
  readonly enabled: boolean
  /** The terminal's width, so the line never wraps (a wrapped line cannot be erased with `\r`). */
  readonly columns: () => number
  readonly now: () => number
}

/**
 * A spinner with a label and the time since the label was set (`⠹ bash npm test · 4s`), redrawn in
 * place on a terminal. Anything else written to the terminal calls `clear` first; the next tick
 * draws it again below. `hold` stops drawing (a permission question, the answer's open line) until
 * `release`.
 */
export const liveLine = (write: (s: string) => void, options: LiveLineOptions) => {
  let label: string | undefined
  let since = 0
  let drawn = false
  let holds = 0
  let timer: ReturnType<typeof setInterval> | undefined

  const clear = () => {
    if (!drawn) return
    write(CLEAR)
    drawn = false
  }
  const draw = () => {
    if (!options.enabled || label === undefined || holds > 0) return clear()
    const width = Math.max(20, options.columns() - 1)
    const ms = options.now() - since
    // the label is cut so the whole line fits: frame, space, label, " · 12s"
    const room = width - stripAnsi(spinnerLine(options.style, "", ms)).length - 1
    write(`${CLEAR}${spinnerLine(options.style, firstLine(label, Math.max(1, room), options.style.glyphs.ellipsis), ms)}`)
    drawn = true
  }
  const start = () => {
    if (!options.enabled || timer !== undefined) return
    timer = setInterval(draw, SPINNER_INTERVAL_MS)
    // the spinner never keeps reins alive
    timer.unref?.()
  }
  return {
    /** Shows `text` from now on, timed from now when it changed. */
    set: (text: string) => {
      if (text !== label) since = options.now()
      label = text
      start()
    },
    /** Stops showing anything until the next `set`. */
    unset: () => {
      label = undefined
      clear()
    },
    clear,
    hold: () => {
      holds++
      clear()
    },
    release: () => {
      holds = Math.max(0, holds - 1)
    },
    /** Erases the line and stops the timer for good. */
    stop: () => {
      if (timer !== undefined) clearInterval(timer)
      timer = undefined
      label = undefined
      clear()
    }
  }
}

export type LiveLine = ReturnType<typeof liveLine>
