/**
 * Where streaming markdown can be cut so the part before renders the same on its own: just after
 * the last blank line that is outside a fenced code block. 0 when there is no such place.
 * A fence opens with ``` or ~~~ (up to three spaces in) and closes with the same marker.
 */
export const stableEnd = (text: string): number => {
  let fence: string | undefined
  let cut = 0
  let start = 0
  let previousBlank = false
  while (start < text.length) {
    const newline = text.indexOf("\n", start)
    // the last line has no newline yet: it may still grow, so nothing after it is stable
    if (newline === -1) break
    const line = text.slice(start, newline)
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1]
    if (marker !== undefined) {
      if (fence === undefined) fence = marker
      else if (marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker) fence = undefined
    }
    const blank = line.trim() === ""
    // a blank line after a line with text, outside a fence, ends a block
    if (blank && fence === undefined && !previousBlank && start > 0) cut = newline + 1
    previousBlank = blank
    start = newline + 1
  }
  return cut
}
