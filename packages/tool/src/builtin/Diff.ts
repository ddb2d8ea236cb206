/** One line of a diff: kept, removed or added. */
interface Op {
  readonly kind: " " | "-" | "+"
  readonly text: string
}

// Above this many cells the middle of the change is shown as remove-all then add-all.
const MAX_LCS_CELLS = 1_000_000
const CONTEXT = 3

/** Line-level edit script for two line arrays (longest common subsequence). */
const lcsOps = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): Array<Op> => {
  const n = a.length
  const m = b.length
  if (n * m > MAX_LCS_CELLS) {
    return [...a.map((text) => ({ kind: "-" as const, text })), ...b.map((text) => ({ kind: "+" as const, text }))]
  }
  // table[i][j] = LCS length of a[i..] and b[j..]
  const width = m + 1
  const table = new Uint32Array((n + 1) * width)
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      table[i * width + j] = a[i] === b[j] ? table[(i + 1) * width + j + 1]! + 1 : Math.max(table[(i + 1) * width + j]!, table[i * width + j + 1]!)
    }
  }
  const ops: Array<Op> = []
  let i = 0
  let j = 0
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      ops.push({ kind: " ", text: a[i]! })
      i++
      j++
    } else if (table[(i + 1) * width + j]! >= table[i * width + j + 1]!) {
      ops.push({ kind: "-", text: a[i++]! })
    } else {
      ops.push({ kind: "+", text: b[j++]! })
    }
  }
  while (i < n) ops.push({ kind: "-", text: a[i++]! })
  while (j < m) ops.push({ kind: "+", text: b[j++]! })
  return ops
}

/** The whole-file edit script: shared head and tail kept, the middle diffed. */
const diffOps = (before: ReadonlyArray<string>, after: ReadonlyArray<string>): Array<Op> => {
  let head = 0
  while (head < before.length && head < after.length && before[head] === after[head]) head++
  let tail = 0
  while (tail < before.length - head && tail < after.length - head && before[before.length - 1 - tail] === after[after.length - 1 - tail]) tail++
  const keep = (lines: ReadonlyArray<string>) => lines.map((text) => ({ kind: " " as const, text }))
  return [
    ...keep(before.slice(0, head)),
    ...lcsOps(before.slice(head, before.length - tail), after.slice(head, after.length - tail)),
    ...keep(before.slice(before.length - tail))
  ]
}

/** The lines of a text; a final newline ends the last line rather than starting an empty one. */
const linesOf = (text: string) => (text === "" ? [] : text.replace(/\r?\n$/, "").split(/\r?\n/))

/**
 * A unified diff of two texts (line endings ignored), with 3 lines of context per hunk.
 * Empty when nothing changed.
 */
export const lineDiff = (name: string, before: string, after: string): string => {
  const ops = diffOps(linesOf(before), linesOf(after))
  const changed = ops.flatMap((op, index) => (op.kind === " " ? [] : [index]))
  if (changed.length === 0) return ""
  // Group changes whose gap of kept lines is small enough to share context.
  const groups: Array<[number, number]> = []
  for (const index of changed) {
    const last = groups[groups.length - 1]
    if (last && index - last[1] <= CONTEXT * 2 + 1) last[1] = index
    else groups.push([index, index])
  }
  // Line numbers (1-based) of each op in the old and new text.
  const oldLine: Array<number> = []
  const newLine: Array<number> = []
  let o = 1
  let n = 1
  for (const op of ops) {
    oldLine.push(o)
    newLine.push(n)
    if (op.kind !== "+") o++
    if (op.kind !== "-") n++
  }
  const out = [`--- ${name}`, `+++ ${name}`]
  for (const [first, last] of groups) {
    const start = Math.max(0, first - CONTEXT)
    const end = Math.min(ops.length - 1, last + CONTEXT)
    const slice = ops.slice(start, end + 1)
    const oldCount = slice.filter((op) => op.kind !== "+").length
    const newCount = slice.filter((op) => op.kind !== "-").length
    const oldStart = oldCount === 0 ? oldLine[start]! - 1 : oldLine[start]!
    const newStart = newCount === 0 ? newLine[start]! - 1 : newLine[start]!
    out.push(`@@ -${oldStart},${oldCount} +${newStart},${newCount} @@`)
    for (const op of slice) out.push(`${op.kind}${op.text}`)
  }
  return out.join("\n")
}
