import { createContext, useContext } from "react"
import { makeStyle, styleFor, unicodeEnabled, type Style, type StyleEnv } from "../../present/Style.ts"

/** Glyphs the view draws beyond present's (collapse markers, rules, quote bars), in Unicode or ASCII. */
export interface ViewGlyphs {
  readonly user: string
  readonly bullet: string
  readonly collapsed: string
  readonly expanded: string
  readonly rule: string
  readonly quote: string
  readonly warn: string
  readonly think: string
}

const unicodeView: ViewGlyphs = { user: "›", bullet: "•", collapsed: "▸", expanded: "▾", rule: "─", quote: "│", warn: "!", think: "∴" }
const asciiView: ViewGlyphs = { user: ">", bullet: "*", collapsed: ">", expanded: "v", rule: "-", quote: "|", warn: "!", think: "~" }

/** How the view paints: present's Style (colour on or off, its glyphs) plus the view's own glyphs. */
export interface Theme {
  readonly style: Style
  readonly glyphs: ViewGlyphs
  readonly unicode: boolean
}

/** A theme with colour on or off and Unicode or ASCII glyphs. */
export const makeTheme = (options: { readonly color: boolean; readonly unicode: boolean }): Theme => ({
  style: makeStyle(options),
  glyphs: options.unicode ? unicodeView : asciiView,
  unicode: options.unicode
})

/** The theme for a terminal: colour by NO_COLOR/FORCE_COLOR and whether it is a TTY, glyphs by the locale. */
export const themeFor = (stream: { readonly isTTY?: boolean | undefined }, env: StyleEnv): Theme => {
  const unicode = unicodeEnabled(env)
  return { style: styleFor(stream, env), glyphs: unicode ? unicodeView : asciiView, unicode }
}

let ambient: Theme | undefined
/** The theme of this process's stdout, computed once. */
export const defaultTheme = (): Theme => (ambient ??= themeFor(process.stdout, process.env))

/** The theme components read; the app provides it once (`<ThemeContext value={theme}>`). */
export const ThemeContext = createContext<Theme | undefined>(undefined)

export const useTheme = (): Theme => useContext(ThemeContext) ?? defaultTheme()

/** Text written with Unicode punctuation (→ … −), as an ASCII terminal shows it. */
export const toAscii = (text: string): string => text.replace(/→/g, "->").replace(/…/g, "...").replace(/[−–—]/g, "-").replace(/·/g, "|")

/** A theme for a Style made elsewhere (the app's), Unicode when its glyphs are. */
export const themeOf = (style: Style): Theme => {
  const unicode = style.glyphs.ok !== "+"
  return { style, glyphs: unicode ? unicodeView : asciiView, unicode }
}
