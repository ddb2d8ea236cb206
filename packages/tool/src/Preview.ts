import type { ChangePreview } from "@reins/domain"

/** How much diff text a permission question carries in all: enough to judge an edit, never a whole large file. */
export const MAX_PREVIEW_CHARS = 32_000

/**
 * Previews within MAX_PREVIEW_CHARS: a diff past the budget is cut at a line and ends with a `\` note
 * saying how many lines were left out; a file past it keeps its name with an empty diff.
 */
export const capPreview = (previews: ReadonlyArray<ChangePreview>): ReadonlyArray<ChangePreview> => {
  let left = MAX_PREVIEW_CHARS
  return previews.map((preview) => {
    if (preview.diff.length <= left) {
      left -= preview.diff.length
      return preview
    }
    const lines = preview.diff.split("\n")
    const kept: Array<string> = []
    for (const line of lines) {
      if (line.length + 1 > left) break
      kept.push(line)
      left -= line.length + 1
    }
    left = 0
    const hidden = lines.length - kept.length
    return { ...preview, diff: kept.length === 0 ? "" : `${kept.join("\n")}\n\\ ${hidden} more line${hidden === 1 ? "" : "s"} of this diff not shown` }
  })
}
