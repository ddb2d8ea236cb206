/** Python tracebacks, shared by the pytest and unittest reducers. */
import type { FrameSpan } from "./common.ts"

/** Where library code lives: site-packages, the standard library, frozen modules. */
export const PYTHON_LIBRARY = /(?:site-packages|dist-packages|[\\/]lib[\\/]python\d(?:\.\d+)?[\\/]|<frozen )/

/** The `^^^^` / `~~~^^^` line Python 3.11+ prints under a frame's source line. */
const FRAME_CARET = /^\s+[~^]+\s*$/

/**
 * Library frames: a native `File "…/site-packages/x.py", line 3, in f` line (with its source
 * line and caret line), or a long-format traceback entry (between `_ _ _` separators, as pytest
 * prints them) whose location is in a library and that does not hold the `E` lines of the error.
 */
export const pythonLibraryFrame: FrameSpan = (lines, i) => {
  const line = lines[i]!
  if (/^\s*File ".*", line \d+/.test(line)) {
    if (!PYTHON_LIBRARY.test(line)) return 0
    let end = i + 1
    const next = lines[end]
    if (next !== undefined && !/^\s*File "/.test(next) && /^\s{4,}\S/.test(next)) end++
    while (end < lines.length && FRAME_CARET.test(lines[end]!)) end++
    return end - i
  }
  // --tb=short and collection tracebacks: `path.py:126: in import_module` + indented source
  const short = /^(\S.*?):\d+: in \S+$/.exec(line)
  if (short) {
    if (!PYTHON_LIBRARY.test(short[1]!)) return 0
    let end = i + 1
    while (end < lines.length && /^\s+\S/.test(lines[end]!) && !/^E\s/.test(lines[end]!)) end++
    return end - i
  }
  if (!/^(?:_ ){5,}_?$/.test(line)) return 0
  let end = i + 1
  while (end < lines.length && !/^(?:_ ){5,}_?$/.test(lines[end]!)) end++
  if (end >= lines.length) return 0
  const entry = lines.slice(i + 1, end)
  const where = entry.filter((l) => /^\S.*:\d+: /.test(l) || /^\S.*:\d+:?$/.test(l))
  if (where.length === 0 || !where.every((l) => PYTHON_LIBRARY.test(l))) return 0
  if (entry.some((l) => /^E\s/.test(l))) return 0
  return end - i
}
