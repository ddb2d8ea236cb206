/**
 * Builtins that evaluate a string they are given: `mapfile -C callback`, `compgen -W '$(…)'`,
 * `compgen -C cmd`, `complete -F func`, `bind -x 'key: cmd'`. What they run is scanned as shell
 * code when it is literal; computed, it is opaque. Words are literal values (`undefined` when
 * computed), the name first.
 */

type Words = ReadonlyArray<string | undefined>

/** The values of short options whose letter is in `letters` (attached or the next word), in order. */
const shortValues = (w: Words, valued: string, letters: string): Array<{ letter: string; value: string | undefined }> => {
  const out: Array<{ letter: string; value: string | undefined }> = []
  for (let i = 1; i < w.length; i++) {
    const x = w[i]
    if (x === "--") break
    if (x === undefined || !x.startsWith("-") || x === "-") continue
    for (let j = 1; j < x.length; j++) {
      if (!valued.includes(x[j]!)) continue
      const value = j + 1 < x.length ? x.slice(j + 1) : w[++i]
      if (letters.includes(x[j]!)) out.push({ letter: x[j]!, value })
      break
    }
  }
  return out
}

/** `bind -x '"\C-x": cmd'`: the command after the key sequence. */
const bindCommand = (binding: string | undefined) => {
  if (binding === undefined) return undefined
  const m = /^\s*("(?:[^"\\]|\\.)*"|[^:]*?)\s*:\s*(.*)$/s.exec(binding)
  if (m === null) return undefined
  const command = m[2]!
  return /^"(.*)"$/s.test(command) ? command.slice(1, -1) : command
}

// compgen/complete options that take a value
const COMPLETION_VALUED = "oAGWFCXPS"

/** Shell code a builtin evaluates from its words; undefined entries are computed. */
export const builtinCode = (name: string, w: Words): ReadonlyArray<string | undefined> => {
  switch (name) {
    case "mapfile":
    case "readarray":
      // the callback runs as `callback index line`
      return shortValues(w, "dnOsuCc", "C").map((o) => o.value)
    case "compgen":
    case "complete":
      return shortValues(w, COMPLETION_VALUED, "WCF").flatMap(({ letter, value }) => {
        // the word list is expanded (substitutions run); -C runs a command, -F a function
        if (letter !== "W") return [value]
        if (value === undefined) return [undefined]
        return /[$`]/.test(value) ? [`: ${value}`] : []
      })
    case "bind":
      return shortValues(w, "mqufrxf", "x").map((o) => bindCommand(o.value))
    default:
      return []
  }
}
