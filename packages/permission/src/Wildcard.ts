/**
 * Wildcard patterns: `*` any run (crosses `/` and newlines), `?` one character, the rest literal;
 * a trailing ` *` also matches the bare command (`ls *` matches `ls`); `\` and `/` are equal.
 */
const cache = new Map<string, RegExp>()

const normalise = (s: string) => s.replaceAll("\\", "/")

const compile = (pattern: string): RegExp => {
  const cached = cache.get(pattern)
  if (cached) return cached
  let source = normalise(pattern)
  let optionalTail = false
  if (source.endsWith(" *")) {
    source = source.slice(0, -2)
    optionalTail = true
  }
  const body = source
    .replace(/[.+^${}()|[\]\\]/g, "\\$&")
    .replaceAll("*", "[\\s\\S]*")
    .replaceAll("?", "[\\s\\S]")
  const regex = new RegExp(`^${body}${optionalTail ? "( [\\s\\S]*)?" : ""}$`)
  cache.set(pattern, regex)
  return regex
}

/** True when `text` matches the wildcard `pattern`. */
export const match = (text: string, pattern: string): boolean => compile(pattern).test(normalise(text))
