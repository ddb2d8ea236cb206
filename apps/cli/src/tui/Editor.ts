// The prompt's text and cursor, edited by keys: pure, so the input component only maps keys to these.

/** The text being typed and where the cursor is (an index into `text`). */
export interface EditorState {
  readonly text: string
  readonly cursor: number
}

export const emptyEditor: EditorState = { text: "", cursor: 0 }

/** The editor holding `text`, cursor at its end (a history entry, a completion). */
export const withText = (text: string): EditorState => ({ text, cursor: text.length })

export const insert = (s: EditorState, chunk: string): EditorState => ({
  text: s.text.slice(0, s.cursor) + chunk + s.text.slice(s.cursor),
  cursor: s.cursor + chunk.length
})

export const backspace = (s: EditorState): EditorState =>
  s.cursor === 0 ? s : { text: s.text.slice(0, s.cursor - 1) + s.text.slice(s.cursor), cursor: s.cursor - 1 }

export const deleteForward = (s: EditorState): EditorState =>
  s.cursor >= s.text.length ? s : { text: s.text.slice(0, s.cursor) + s.text.slice(s.cursor + 1), cursor: s.cursor }

export const left = (s: EditorState): EditorState => ({ ...s, cursor: Math.max(0, s.cursor - 1) })
export const right = (s: EditorState): EditorState => ({ ...s, cursor: Math.min(s.text.length, s.cursor + 1) })

const lineStart = (s: EditorState) => s.text.lastIndexOf("\n", s.cursor - 1) + 1
const lineEnd = (s: EditorState) => {
  const at = s.text.indexOf("\n", s.cursor)
  return at < 0 ? s.text.length : at
}

/** Ctrl+A / Home: the start of the cursor's line. */
export const home = (s: EditorState): EditorState => ({ ...s, cursor: lineStart(s) })
/** Ctrl+E / End: the end of the cursor's line. */
export const end = (s: EditorState): EditorState => ({ ...s, cursor: lineEnd(s) })
/** Ctrl+U: deletes from the line's start to the cursor. */
export const killToStart = (s: EditorState): EditorState => {
  const from = lineStart(s)
  return { text: s.text.slice(0, from) + s.text.slice(s.cursor), cursor: from }
}
/** Ctrl+K: deletes from the cursor to the line's end. */
export const killToEnd = (s: EditorState): EditorState => ({ text: s.text.slice(0, s.cursor) + s.text.slice(lineEnd(s)), cursor: s.cursor })
/** Ctrl+W: deletes the word before the cursor (and the spaces after it). */
export const killWord = (s: EditorState): EditorState => {
  const before = s.text.slice(0, s.cursor)
  const from = before.replace(/\S*\s*$/, "").length
  return { text: s.text.slice(0, from) + s.text.slice(s.cursor), cursor: from }
}

/** Whether the cursor is on the first / last line (Up / Down then walk the history instead). */
export const onFirstLine = (s: EditorState) => !s.text.slice(0, s.cursor).includes("\n")
export const onLastLine = (s: EditorState) => !s.text.slice(s.cursor).includes("\n")

/** Up / Down inside a multi-line prompt: the same column on the line above / below. */
export const vertical = (s: EditorState, direction: -1 | 1): EditorState => {
  const start = lineStart(s)
  const column = s.cursor - start
  if (direction < 0) {
    if (start === 0) return s
    const prevStart = s.text.lastIndexOf("\n", start - 2) + 1
    return { ...s, cursor: Math.min(prevStart + column, start - 1) }
  }
  const stop = lineEnd(s)
  if (stop >= s.text.length) return s
  const nextStart = stop + 1
  const nextEnd = s.text.indexOf("\n", nextStart)
  return { ...s, cursor: Math.min(nextStart + column, nextEnd < 0 ? s.text.length : nextEnd) }
}

/**
 * Enter: either the text is sent, or (a trailing backslash, the shells' line continuation) the
 * backslash becomes a newline and editing goes on.
 */
export const enter = (s: EditorState): { readonly send: string } | { readonly edit: EditorState } => {
  if (s.cursor === s.text.length && s.text.endsWith("\\")) return { edit: { text: `${s.text.slice(0, -1)}\n`, cursor: s.text.length } }
  return { send: s.text }
}
