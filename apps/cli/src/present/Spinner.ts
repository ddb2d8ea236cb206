import type { Style } from "./Style.ts"
import { elapsed } from "./Units.ts"

/** Milliseconds between spinner frames. */
export const SPINNER_INTERVAL_MS = 80

/** The spinner frame shown `ms` after it started. */
export const spinnerFrame = (style: Style, ms: number): string => {
  const frames = style.glyphs.spinner
  return frames[Math.floor(Math.max(0, ms) / SPINNER_INTERVAL_MS) % frames.length]!
}

/** A spinner line: `⠹ thinking · 4s` (the frame cyan, the time dim). */
export const spinnerLine = (style: Style, label: string, ms: number): string =>
  `${style.cyan(spinnerFrame(style, ms))} ${label} ${style.dim(`${style.glyphs.dot} ${elapsed(ms)}`)}`
