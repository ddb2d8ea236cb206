// Named keys → the bytes a terminal (xterm, in its default modes) sends for them.

const fixed: Record<string, string> = {
  enter: "\r",
  return: "\r",
  // Meta+Enter: what most terminals send for Alt/Option+Enter, and what Ink reads as `key.return` with `key.meta`.
  // Ink has no Shift+Enter of its own in legacy keyboard mode; TUIs take Meta+Enter (or a trailing `\`) for a newline.
  "shift-enter": "\x1b\r",
  "alt-enter": "\x1b\r",
  "ctrl-j": "\n",
  tab: "\t",
  "shift-tab": "\x1b[Z",
  esc: "\x1b",
  escape: "\x1b",
  backspace: "\x7f",
  delete: "\x1b[3~",
  space: " ",
  up: "\x1b[A",
  down: "\x1b[B",
  right: "\x1b[C",
  left: "\x1b[D",
  home: "\x1b[H",
  end: "\x1b[F",
  pageup: "\x1b[5~",
  pagedown: "\x1b[6~"
}

/** The names `keyBytes` knows, besides `ctrl-<letter>` and `alt-<char>`. */
export const keyNames: ReadonlyArray<string> = Object.keys(fixed)

/**
 * The bytes for one named key: `enter`, `ctrl-c`, `ctrl-d`, `esc`, `up`, `down`, `tab`, `shift-enter`, …, any
 * `ctrl-<letter>` and `alt-<char>`. An unknown name throws, so a typo is not typed into the program as text.
 */
export const keyBytes = (name: string): string => {
  const key = name.toLowerCase()
  const known = fixed[key]
  if (known !== undefined) return known
  const ctrl = /^ctrl-([a-z])$/.exec(key)
  if (ctrl) return String.fromCharCode(ctrl[1]!.charCodeAt(0) - 96)
  const alt = /^alt-(.)$/.exec(name)
  if (alt) return `\x1b${alt[1]}`
  throw new Error(`unknown key "${name}": use one of ${keyNames.join(", ")}, ctrl-<letter> or alt-<char> (type text with .type())`)
}
