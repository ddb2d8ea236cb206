import { formatPatch, parsePatch, type StructuredPatch, structuredPatch } from "diff"
import { Result } from "effect"

// The one place reins computes and reads diffs: tools write them into their metadata, the CLI counts
// and shows them, ACP turns them into before/after texts. All through the `diff` package.

const CONTEXT = 3

/** A file bigger than this gets no diff shown (reading and diffing it costs more than it shows): a write's, a question's. */
export const MAX_PREVIEW_BYTES = 1024 * 1024
// Past this many changed lines Myers' search is slow (O(N·D)); such a change is shown as remove-all
// then add-all, which is what it nearly is anyway.
const MAX_EDIT_LENGTH = 4_000

/** The lines of a text; a final newline ends the last line rather than starting an empty one. */
const linesOf = (text: string) => (text === "" ? [] : text.replace(/\r?\n$/, "").split(/\r?\n/))

/** One hunk replacing every line: the answer when the change is too large to search. */
const wholeFile = (name: string, before: string, after: string): StructuredPatch => {
  const removed = linesOf(before)
  const added = linesOf(after)
  return {
    oldFileName: name,
    newFileName: name,
    oldHeader: undefined,
    newHeader: undefined,
    hunks: [
      {
        oldStart: removed.length === 0 ? 0 : 1,
        oldLines: removed.length,
        newStart: added.length === 0 ? 0 : 1,
        newLines: added.length,
        lines: [...removed.map((line) => `-${line}`), ...added.map((line) => `+${line}`)]
      }
    ]
  }
}

/**
 * A unified diff of two texts with 3 lines of context per hunk, headed `--- name` / `+++ name`.
 * Carriage returns are ignored (a CRLF file edited keeps a small diff); a missing final newline is
 * marked as `diff` does. Empty when nothing changed.
 */
export const lineDiff = (name: string, before: string, after: string): string => {
  const patch =
    structuredPatch(name, name, before, after, undefined, undefined, { context: CONTEXT, stripTrailingCr: true, maxEditLength: MAX_EDIT_LENGTH }) ??
    wholeFile(name, before, after)
  if (patch.hunks.length === 0) return ""
  return formatPatch(patch, { includeIndex: false, includeUnderline: false, includeFileHeaders: true }).replace(/\n$/, "")
}

/** The file patches of a unified diff (one file or several joined); none when it does not parse. */
const patchesOf = (diff: string): ReadonlyArray<StructuredPatch> =>
  diff === ""
    ? []
    : Result.getOrElse(
        Result.try(() => parsePatch(diff)),
        () => []
      )

/** Lines added and removed by a unified diff. */
export interface DiffStat {
  readonly added: number
  readonly removed: number
}

/** Lines added and removed by a unified diff (one file or several joined, as apply_patch's metadata has them). */
export const diffStat = (diff: string): DiffStat => {
  let added = 0
  let removed = 0
  for (const patch of patchesOf(diff)) {
    for (const hunk of patch.hunks) {
      for (const line of hunk.lines) {
        if (line.startsWith("+")) added++
        else if (line.startsWith("-")) removed++
      }
    }
  }
  return { added, removed }
}

/**
 * A unified diff's hunks as the text before and after: context and removed lines, context and
 * added lines, hunks apart by a blank line. Undefined when it has no hunk.
 */
export const diffTexts = (diff: string): { readonly oldText: string; readonly newText: string } | undefined => {
  const hunks = patchesOf(diff).flatMap((patch) => patch.hunks)
  if (hunks.length === 0) return undefined
  const side = (keep: "-" | "+") =>
    hunks.map((hunk) => hunk.lines.flatMap((line) => (line[0] === " " || line[0] === keep ? [line.slice(1)] : [])).join("\n")).join("\n\n")
  return { oldText: side("-"), newText: side("+") }
}
