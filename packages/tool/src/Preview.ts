import type { ChangePreview } from "@reins/domain"

/** How much diff text a permission question carries in all: enough to judge an edit, never a whole large file. */
export const MAX_PREVIEW_CHARS = 32_000

/** The least each file's diff keeps of the budget, however many files the call changes. */
const MIN_SHARE = 2_000

/**
 * Previews within MAX_PREVIEW_CHARS, shared between the files (a large first file never hides the others): a diff past
 * its share is cut at a line and ends with a `\` note saying how many lines were left out.
 */
export const capPreview = (previews: ReadonlyArray<ChangePreview>): ReadonlyArray<ChangePreview> => {
  const share = Math.max(MIN_SHARE, Math.floor(MAX_PREVIEW_CHARS / Math.max(1, previews.length)))
  // what the small diffs leave unused goes to the large ones, in order
  let spare = previews.reduce((left, p) => left - Math.min(p.diff.length, share), MAX_PREVIEW_CHARS)
  return previews.map((preview) => {
    if (preview.diff.length <= share) return preview
    const budget = share + Math.max(0, spare)
    if (preview.diff.length <= budget) {
      spare -= preview.diff.length - share
      return preview
    }
    spare = Math.max(0, spare - (budget - share))
    const lines = preview.diff.split("\n")
    const kept: Array<string> = []
    let left = budget
    for (const line of lines) {
      if (line.length + 1 > left) break
      kept.push(line)
      left -= line.length + 1
    }
    const hidden = lines.length - kept.length
    return { ...preview, diff: `${kept.join("\n")}\n\\ ${hidden} more line${hidden === 1 ? "" : "s"} of this diff not shown` }
  })
}
