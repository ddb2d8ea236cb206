/** The environment variables that decide colour and glyphs (a subset of `process.env`). */
export type StyleEnv = Readonly<Record<string, string | undefined>>

/**
 * Whether to colour a stream: `FORCE_COLOR` (any value but `0`/`false`) turns it on even on a pipe and
 * wins over the rest, as in Node's own `getColorDepth`; `NO_COLOR` (any non-empty value, no-color.org)
 * and `TERM=dumb` turn it off; otherwise colour when the stream is a terminal.
 */
export const colorEnabled = (isTTY: boolean, env: StyleEnv): boolean => {
  const force = env.FORCE_COLOR
  if (force !== undefined) return force !== "0" && force !== "false"
  if ((env.NO_COLOR ?? "") !== "") return false
  if (env.TERM === "dumb") return false
  return isTTY
}

/** Whether the locale can show Unicode glyphs (✓, braille spinner, −); a `C`/POSIX or non-UTF-8 locale gets ASCII. */
export const unicodeEnabled = (env: StyleEnv): boolean => {
  const locale = env.LC_ALL || env.LC_CTYPE || env.LANG || ""
  // no locale at all (a bare container, CI): assume UTF-8, as every modern terminal is
  if (locale === "") return true
  return /utf-?8/i.test(locale)
}

/** Whether a live line (a spinner redrawn with `\r`) may be drawn: a terminal that understands cursor control. */
export const liveEnabled = (isTTY: boolean, env: StyleEnv): boolean => isTTY && env.TERM !== "dumb"

/** The glyphs a line uses, in Unicode or ASCII. */
export interface Glyphs {
  readonly ok: string
  readonly fail: string
  readonly arrow: string
  readonly running: string
  readonly minus: string
  readonly dot: string
  readonly ellipsis: string
  readonly spinner: ReadonlyArray<string>
}

const unicodeGlyphs: Glyphs = {
  ok: "✓",
  fail: "✗",
  arrow: "→",
  running: "•",
  minus: "−",
  dot: "·",
  ellipsis: "…",
  spinner: ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]
}

const asciiGlyphs: Glyphs = {
  ok: "+",
  fail: "x",
  arrow: "->",
  running: "*",
  minus: "-",
  dot: "|",
  ellipsis: "...",
  spinner: ["|", "/", "-", "\\"]
}

type Paint = (s: string) => string

/** A small palette: each function wraps a string in an SGR colour, or returns it unchanged when colour is off. */
export interface Style {
  readonly color: boolean
  readonly glyphs: Glyphs
  readonly bold: Paint
  readonly dim: Paint
  readonly italic: Paint
  readonly red: Paint
  readonly green: Paint
  readonly yellow: Paint
  readonly blue: Paint
  readonly magenta: Paint
  readonly cyan: Paint
  readonly gray: Paint
}

const sgr =
  (on: boolean, open: number, close: number): Paint =>
  (s) =>
    on && s !== "" ? `\x1b[${open}m${s}\x1b[${close}m` : s

/** A style with colour on or off and Unicode or ASCII glyphs. */
export const makeStyle = (options: { readonly color: boolean; readonly unicode?: boolean }): Style => {
  const on = options.color
  return {
    color: on,
    glyphs: options.unicode === false ? asciiGlyphs : unicodeGlyphs,
    bold: sgr(on, 1, 22),
    dim: sgr(on, 2, 22),
    italic: sgr(on, 3, 23),
    red: sgr(on, 31, 39),
    green: sgr(on, 32, 39),
    yellow: sgr(on, 33, 39),
    blue: sgr(on, 34, 39),
    magenta: sgr(on, 35, 39),
    cyan: sgr(on, 36, 39),
    gray: sgr(on, 90, 39)
  }
}

/** The style for a stream: colour by `colorEnabled`, glyphs by the locale. */
export const styleFor = (stream: { readonly isTTY?: boolean | undefined }, env: StyleEnv): Style =>
  makeStyle({ color: colorEnabled(stream.isTTY === true, env), unicode: unicodeEnabled(env) })

/** No colour, Unicode glyphs: for tests and plain text. */
export const plain: Style = makeStyle({ color: false })

// CSI/OSC escapes, for measuring and testing what a person sees
const ANSI = /\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)/g

/** The text without terminal escapes. */
export const stripAnsi = (s: string): string => s.replace(ANSI, "")
