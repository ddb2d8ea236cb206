/**
 * Small languages whose programs are passed as words (sed scripts, awk programs): read just enough
 * to see whether a program runs commands or writes files, which its command line does not show.
 */

const HARMLESS_FILES = new Set(["/dev/stdout", "/dev/stderr", "/dev/null"])

/**
 * Why a sed script runs code or writes files (`e` command, `s///e`, `w`/`W` file, `s///w file`);
 * undefined when it does neither. A script this reader cannot follow is reported too. The files
 * its `r`/`R` commands read are added to `reads`.
 */
export const sedRunsCode = (script: string, reads?: Array<string>): string | undefined => {
  let i = 0
  const n = script.length
  const at = (k: number) => script[k] ?? ""
  const skipBlanks = () => {
    while (i < n && /\s/.test(at(i))) i++
  }
  const toLineEnd = () => {
    const start = i
    while (i < n && at(i) !== "\n") i++
    return script.slice(start, i).trim()
  }
  // `/re/` or `\cREc`: up to the closing delimiter, backslash escapes skipped
  const delimited = (delimiter: string) => {
    while (i < n && at(i) !== delimiter) {
      if (at(i) === "\\") i++
      i++
    }
    if (i >= n) return false
    i++
    return true
  }
  const address = () => {
    if (/[0-9]/.test(at(i))) {
      while (/[0-9~]/.test(at(i))) i++
    } else if (at(i) === "$") i++
    else if (at(i) === "/") {
      i++
      if (!delimited("/")) return false
      while (at(i) === "I" || at(i) === "M") i++
    } else if (at(i) === "\\" && i + 1 < n) {
      const d = at(i + 1)
      i += 2
      if (!delimited(d)) return false
      while (at(i) === "I" || at(i) === "M") i++
    }
    return true
  }
  while (i < n) {
    while (i < n && (/\s/.test(at(i)) || at(i) === ";" || at(i) === "}")) i++
    if (i >= n) break
    if (!address()) return "the sed script could not be read"
    if (at(i) === ",") {
      i++
      if (at(i) === "+" || at(i) === "~") i++
      if (!address()) return "the sed script could not be read"
    }
    skipBlanks()
    while (at(i) === "!") {
      i++
      skipBlanks()
    }
    const c = at(i++)
    if (c === "{") continue
    if (c === "r" || c === "R") {
      // `r /etc/passwd`: a file read into the output, named in the script
      const file = toLineEnd()
      // `sed 'r .env' x`: the caller judges the file as a read (see Readers.ts)
      reads?.push(file)
      if (/^[/~]|(^|\/)\.\.(\/|$)/.test(file)) return "sed reads a file named in its script"
      continue
    }
    if (c === "#" || c === ":" || c === "a" || c === "i" || c === "c") {
      // text, label or file name up to the end of the line (`a\` continues on escaped newlines)
      while (i < n && at(i) !== "\n") i += at(i) === "\\" ? 2 : 1
      continue
    }
    if (c === "b" || c === "t" || c === "T" || c === "v") {
      while (i < n && at(i) !== ";" && at(i) !== "\n" && at(i) !== "}") i++
      continue
    }
    if (c === "e") return "sed runs a command (the e command)"
    if (c === "w" || c === "W") {
      if (HARMLESS_FILES.has(toLineEnd())) continue
      return "sed writes a file named in its script"
    }
    if (c === "s" || c === "y") {
      const d = at(i++)
      if (d === "" || d === "\n" || d === "\\") return "the sed script could not be read"
      if (!delimited(d) || !delimited(d)) return "the sed script could not be read"
      if (c === "y") continue
      while (i < n && /[gpiImMe0-9w]/.test(at(i))) {
        const flag = at(i++)
        if (flag === "e") return "sed runs the replacement as a command (the e flag)"
        if (flag === "w") {
          if (HARMLESS_FILES.has(toLineEnd())) break
          return "sed writes a file named in its script"
        }
      }
      continue
    }
    if (c === "q" || c === "Q" || c === "l" || c === "L") {
      skipBlanks()
      while (/[0-9]/.test(at(i))) i++
      continue
    }
    if ("=dDgGhHnNpPxzF".includes(c)) continue
    return "the sed script could not be read"
  }
  return undefined
}

const OPERAND_END = /[A-Za-z0-9_$)\]]/

/**
 * Why an awk program runs commands or writes files: `system(…)`, a pipe to or from a command
 * (`print | "cmd"`, `"cmd" | getline`, `|&`), output redirected to a file in a print statement, or
 * `@load`/`@include`; undefined when it does none of them.
 */
export const awkRunsCode = (program: string): string | undefined => {
  const n = program.length
  let i = 0
  // whether the last token ends an operand (then `/` divides; else it opens a regex)
  let operand = false
  let printing = false
  let depth = 0
  while (i < n) {
    const c = program[i]!
    if (c === "#") {
      while (i < n && program[i] !== "\n") i++
      continue
    }
    if (c === '"' || (c === "/" && !operand)) {
      i++
      while (i < n && program[i] !== c) i += program[i] === "\\" ? 2 : 1
      i++
      operand = true
      continue
    }
    if (c === "@") {
      const directive = /^@(load|include|namespace)?/.exec(program.slice(i))?.[1]
      if (directive === "load" || directive === "include") return `awk ${directive}s code from a file (@${directive})`
    }
    if (/[A-Za-z_]/.test(c)) {
      const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(program.slice(i))![0]
      i += word.length
      if (word === "system" && /^\s*\(/.test(program.slice(i))) return "awk runs a command (system)"
      // `getline line < "/etc/passwd"`: a file named in the program
      if (word === "getline" && /^\s*([A-Za-z_][\w[\]$]*\s*)?</.test(program.slice(i))) return "awk reads a file named in its program"
      if (word === "print" || word === "printf") {
        printing = true
        depth = 0
      }
      operand = true
      continue
    }
    if (c === "|") {
      if (program[i + 1] === "|") {
        i += 2
        operand = false
        continue
      }
      return "awk pipes to or from a command"
    }
    if (printing) {
      if (c === "(") depth++
      else if (c === ")") depth--
      else if (c === ";" || c === "\n" || c === "}") printing = false
      else if (c === ">" && depth <= 0 && program[i + 1] !== "=") return "awk writes a file named in its program"
    }
    if (!/\s/.test(c)) operand = OPERAND_END.test(c)
    i++
  }
  return undefined
}
