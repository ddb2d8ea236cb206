/**
 * `go test`, plain, `-v` and `-json`. With -v each test streams `=== RUN   TestX`, its output
 * (`    x_test.go:14: message`) and `--- PASS|FAIL|SKIP: TestX (0.00s)`; without -v only failing
 * tests print, their output after the `--- FAIL` line, indented. A panic ends the package:
 * `panic: …`, `goroutine N [running]:` and frame pairs (`pkg.Func(…)` + `\t/path/file.go:12
 * +0x1d`) up to `exit status 2`. Packages close with `ok  \tpkg\t0.01s` or `FAIL\tpkg\t0.01s`.
 * -json (test2json) wraps that same text in `{"Action":"output","Output":"…"}` events, so the
 * reducer rebuilds the text from the events and reads it the same way.
 */
import type { Reducer } from "../../Reducer.ts"
import { runs, sniff, toLines } from "../../Text.ts"
import type { FrameSpan } from "./common.ts"
import { Report } from "./common.ts"

const RUN = /^=== (?:RUN|PAUSE|CONT|NAME)\s+(\S+)/
const RESULT = /^(\s*)--- (PASS|FAIL|SKIP): (\S+) \(\d+(?:\.\d+)?s\)$/
const PKG_OK = /^ok\s+\S+\s+(?:\(cached\)|\d+(?:\.\d+)?s|\[no tests to run\])/
const PKG_FAIL = /^FAIL\s+\S+\s+(?:\(cached\)|\d+(?:\.\d+)?s|\[(?:build|setup) failed\])/
const NO_TESTS = /^\?\s+\S+\s+\[no test files\]$/
const OK_SHOWN = 10

/** A goroutine frame pair from the runtime, the testing package, the standard library or the module cache. */
const goFrame: FrameSpan = (lines, i) => {
  const fn = lines[i]!
  if (/^\s/.test(fn) || fn.length > 1000) return 0
  const at = lines[i + 1]
  if (at === undefined || !/^\t\S.*:\d+(?: \+0x[0-9a-f]+)?$/.test(at)) return 0
  const internalFn = /^(?:testing\.|runtime\.|panic\(|reflect\.|sync\.|created by (?:testing|runtime)\.)/.test(fn)
  const internalPath = /^\t(?:\/usr\/local\/go\/src\/|\/usr\/lib\/go[^/]*\/src\/|.*\/pkg\/mod\/|.*\/(?:golang\.org\/)?toolchain@[^/]*\/src\/)/.test(at)
  return internalFn || internalPath ? 2 : 0
}

interface Failure {
  readonly name: string
  readonly block: Array<string>
}

const parse = (lines: ReadonlyArray<string>, report: Report): boolean => {
  const buffers = new Map<string, Array<string>>()
  const failures: Array<Failure> = []
  let current: string | undefined
  let tail: { block: Array<string>; indent: number } | undefined
  let special: Array<string> | undefined
  let okPackages = 0
  let recognised = false

  /** The failure whose `--- FAIL` line came last, while nothing else has come since. */
  let lastFailure: Failure | undefined
  const closeSpecial = () => {
    if (special && !failures.some((f) => f.block === special)) failures.push({ name: "", block: special })
    special = undefined
  }

  for (const line of lines) {
    if (special) {
      // a panic runs to `exit status N`; a build failure (`# pkg` + compiler errors) to its FAIL line
      if (/^exit status \d+$/.test(line)) {
        special.push(line)
        closeSpecial()
        continue
      }
      if (!PKG_FAIL.test(line) && !PKG_OK.test(line) && !RUN.test(line) && !RESULT.test(line)) {
        special.push(line)
        continue
      }
      closeSpecial()
    }
    if (/^panic: /.test(line) || /^# \S/.test(line)) {
      tail = undefined
      recognised = true
      // a test that panics prints its --- FAIL line first: the panic goes under it
      if (lastFailure && /^panic: /.test(line)) {
        special = lastFailure.block
        special.push(line)
      } else special = [line]
      lastFailure = undefined
      continue
    }
    const run = RUN.exec(line)
    if (run) {
      recognised = true
      lastFailure = undefined
      tail = undefined
      current = run[1]!
      if (!buffers.has(current)) buffers.set(current, [])
      report.drop()
      continue
    }
    const result = RESULT.exec(line)
    if (result) {
      recognised = true
      tail = undefined
      const [, indent, status, name] = result as unknown as [string, string, string, string]
      const output = buffers.get(name) ?? []
      buffers.delete(name)
      lastFailure = undefined
      if (status === "PASS") report.passed++
      else if (status === "SKIP") report.skipped++
      else {
        const block = [line.trimStart(), ...output]
        lastFailure = { name, block }
        failures.push(lastFailure)
        tail = { block, indent: indent.length }
      }
      continue
    }
    if (tail && (line.trim() === "" || /^\s*/.exec(line)![0].length > tail.indent)) {
      tail.block.push(line)
      continue
    }
    tail = undefined
    if (line.trim() !== "") lastFailure = undefined
    if (PKG_OK.test(line)) {
      recognised = true
      current = undefined
      if (okPackages++ < OK_SHOWN) report.summary.push(line)
      else report.drop()
      continue
    }
    if (PKG_FAIL.test(line)) {
      recognised = true
      current = undefined
      report.summary.push(line)
      continue
    }
    if (NO_TESTS.test(line) || /^(?:PASS|FAIL)$/.test(line)) {
      report.drop()
      continue
    }
    if (/^\s*coverage: /.test(line)) {
      report.summary.push(line.trim())
      continue
    }
    const buffer = current === undefined ? undefined : buffers.get(current)
    if (buffer) buffer.push(line)
    else report.stray(line)
  }
  closeSpecial()
  if (okPackages > OK_SHOWN) report.summary.push(`… and ${okPackages - OK_SHOWN} more packages ok`)
  for (const { name, block } of failures) {
    // a parent whose subtests failed prints only its own --- FAIL line
    const onlyHeader = block.slice(1).every((l) => l.trim() === "")
    if (name !== "" && onlyHeader && failures.some((f) => f.name.startsWith(`${name}/`))) {
      report.drop()
      continue
    }
    report.fail(block, { internalFrame: goFrame })
  }
  return recognised
}

/** test2json events → the text they carry; lines that are not events are kept as they are. */
const fromJson = (text: string): Array<string> => {
  let out = ""
  for (const raw of text.split("\n")) {
    const line = raw.trim()
    if (line === "") continue
    if (line.startsWith("{")) {
      try {
        const event = JSON.parse(line) as { Action?: unknown; Output?: unknown }
        if (typeof event.Action === "string") {
          if ((event.Action === "output" || event.Action === "build-output") && typeof event.Output === "string") out += event.Output
          continue
        }
      } catch {
        // not an event: kept as text
      }
    }
    out += `${raw}\n`
  }
  return toLines(out)
}

const JSON_SNIFF = /^\{"(?:Time|Action|ImportPath)":/
const SNIFF = /^=== RUN\s+Test|^--- (?:FAIL|PASS): Test\S* \(\d|^ok\s+\S+\s+(?:\(cached\)|\d+(?:\.\d+)?s)|^FAIL\s+\S+\s+(?:\d+(?:\.\d+)?s|\[build failed\])/

export const goTest: Reducer = {
  name: "go_test",
  matches: (input) => runs(input.command, /(?:go\s+test|gotestsum)\b/) || sniff(input.text, JSON_SNIFF, 5) || sniff(input.text, SNIFF),
  reduce: (input) => {
    const json = sniff(input.text, JSON_SNIFF, 5)
    const report = new Report(json ? "go test -json" : "go test")
    const lines = json ? fromJson(input.text) : toLines(input.text)
    if (json) report.drop()
    return parse(lines, report) ? report.render() : undefined
  }
}
