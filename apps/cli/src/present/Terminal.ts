// Text from elsewhere (the model, a command's output, a repository's config) on the user's terminal:
// control sequences could clear the screen, rewrite a permission question, set the clipboard (OSC 52) or
// reorder what is read (bidi overrides). On a terminal they are shown escaped; in plain output (a pipe,
// a file) they are removed. Tabs and newlines stay.

// C0 controls but tab and newline, DEL, C1 controls, and the bidirectional marks, embeddings and overrides
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g
// whole escape sequences: CSI, OSC (ended by BEL or ST), DCS/SOS/PM/APC strings, two-byte escapes, 8-bit CSI
const SEQUENCE = /\u001b(?:\[[0-?]*[ -/]*[@-~]|\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|[PX^_][^\u001b]*(?:\u001b\\)?|[ -/]*[0-~])|\u009b[0-?]*[ -/]*[@-~]/g

const hex = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`

/** For a terminal: every control character shown as `\u001b`, so nothing in it acts on the terminal. */
export const visible = (text: string) => text.replace(CONTROL, hex)

/** For plain output: escape sequences and other control characters removed. */
export const plain = (text: string) => text.replace(SEQUENCE, "").replace(CONTROL, "")

/**
 * `plain` for text that arrives in pieces (the model's answer, streamed): an escape sequence cut between
 * two pieces is held until it ends (at most 4 KiB of it), so its middle never gets through; `end` drops
 * one that never ended.
 */
export const plainStream = () => {
  let held = ""
  const OPEN = /(?:\u001b(?:\][^\u0007\u001b]*|[PX^_][^\u001b]*|\[[0-?]*[ -/]*|[ -/]*)?|\u001b\][^\u0007]*\u001b|\u009b[0-?]*[ -/]*)$/
  return {
    write: (piece: string) => {
      const text = held + piece
      const open = OPEN.exec(text)
      const cut = open && open[0].length > 0 && open[0].length <= 4096 ? open.index : text.length
      held = text.slice(cut)
      return plain(text.slice(0, cut))
    },
    end: () => {
      held = ""
      return ""
    }
  }
}
