/**
 * Similarity of two strings, `1 - levenshtein / longer length`, computed only as far as needed to
 * decide whether it reaches `threshold`: a length check and a character-count bound reject most
 * pairs in linear time, and the edit distance itself is a banded dynamic programme that stops as
 * soon as the band exceeds the allowed distance. Answers 0 when the threshold cannot be reached.
 */
export const similarityAtLeast = (a: string, b: string, threshold: number): number => {
  if (a === b) return 1
  const longer = Math.max(a.length, b.length)
  if (longer === 0) return 1
  // The epsilon keeps a similarity of exactly `threshold` from being lost to rounding (1 - 0.65 = 0.3499…).
  const allowed = Math.floor((1 - threshold) * longer + 1e-9)
  if (Math.abs(a.length - b.length) > allowed) return 0
  if (characterBound(a, b) > allowed) return 0
  const distance = boundedDistance(a, b, allowed)
  return distance > allowed ? 0 : 1 - distance / longer
}

const counts = new Int32Array(65536)

/** A lower bound on the edit distance: characters one string has more of than the other. */
const characterBound = (a: string, b: string) => {
  for (let i = 0; i < a.length; i++) counts[a.charCodeAt(i)]!++
  for (let i = 0; i < b.length; i++) counts[b.charCodeAt(i)]!--
  let surplus = 0
  let deficit = 0
  const settle = (code: number) => {
    const c = counts[code]!
    if (c > 0) surplus += c
    else if (c < 0) deficit -= c
    counts[code] = 0
  }
  for (let i = 0; i < a.length; i++) settle(a.charCodeAt(i))
  for (let i = 0; i < b.length; i++) settle(b.charCodeAt(i))
  return Math.max(surplus, deficit)
}

/** Levenshtein distance of `a` and `b` if it is at most `limit`, else some value above `limit`. */
export const boundedDistance = (a: string, b: string, limit: number): number => {
  const n = a.length
  const m = b.length
  if (Math.abs(n - m) > limit) return limit + 1
  if (n === 0 || m === 0) return Math.max(n, m)
  const over = limit + 1
  let previous = new Int32Array(m + 1)
  let current = new Int32Array(m + 1)
  for (let j = 0; j <= m; j++) previous[j] = j <= limit ? j : over
  for (let i = 1; i <= n; i++) {
    const from = Math.max(1, i - limit)
    const to = Math.min(m, i + limit)
    current[from - 1] = from === 1 && i <= limit ? i : over
    let best = current[from - 1]!
    const code = a.charCodeAt(i - 1)
    for (let j = from; j <= to; j++) {
      const substitute = previous[j - 1]! + (code === b.charCodeAt(j - 1) ? 0 : 1)
      const remove = previous[j]! + 1
      const insert = current[j - 1]! + 1
      let value = Math.min(substitute, remove)
      if (insert < value) value = insert
      if (value > over) value = over
      current[j] = value
      if (value < best) best = value
    }
    if (to < m) current[to + 1] = over
    if (best > limit) return over
    const swap = previous
    previous = current
    current = swap
  }
  return previous[m]!
}
