/**
 * Python's unittest (`python -m unittest [-v]`, Django's `manage.py test`). Progress first: with
 * -v one `test_x (pkg.mod.Class.test_x) ... ok|FAIL|ERROR|skipped '…'|expected failure|unexpected
 * success` line per test (a docstring or the test's own output can push the status to a later
 * line), without -v a line of `.FEsxu`. Then one block per failure, each between a `====` ruler
 * and the next (`FAIL: name (id)`, a `----` ruler, the traceback), a closing `----` ruler,
 * `Ran N tests in Xs` and `OK` / `OK (skipped=2)` / `FAILED (failures=1, errors=2)`.
 */
import type { Reducer } from "../../Reducer.ts"
import { runs, sniff, toLines } from "../../Text.ts"
import { Report, sniffEnd } from "./common.ts"
import { pythonLibraryFrame } from "./python.ts"

const STATUS = "ok|FAIL|ERROR|skipped(?: .*)?|expected failure|unexpected success"
/** A verbose progress line with its status: `test_x (mod.Class.test_x) ... ok`. */
const RESULT = new RegExp(`^\\s*\\S.*? \\.\\.\\. (${STATUS})$`)
/** A test named without its status yet (a docstring line or the test's output comes first). */
const NAMED = /^\s*\S+ \([\w.]+\)(?: \(.*\))?(?: \.\.\. .*)?$/
/** The status alone on its line, after a test's output or docstring. */
const LONE_STATUS = new RegExp(`^(${STATUS})$`)
/** Without -v: `..F.E.s`, also after a test's own output on the same line. */
const DOTS = /^[.FEsxu]+$/
const RULER_BLOCK = /^={30,}$/
const RULER_END = /^-{30,}$/
const BLOCK_HEAD = /^(?:FAIL|ERROR|UNEXPECTED SUCCESS): \S/
const RAN = /^Ran \d+ tests? in \d+(?:\.\d+)?s$/
const VERDICT = /^(?:OK|FAILED|NO TESTS RAN)(?: \(.*\))?$/
/** Python 3.12's `--durations N`: after the failures, a titled list (`0.501s     test_x (mod.T.test_x)`) under a ruler. */
const DURATIONS = /^Slowest test durations$/
const DURATION = /^\d+\.\d+s\s+\S/
const DURATIONS_HIDDEN = /^\(durations < [\d.]+s were hidden/
/** Durations listed before the rest are counted. */
const MAX_DURATIONS = 10

/** `python3 -m unittest -v`, `uv run python -m unittest`, `python manage.py test` (Django's runner prints the same). */
const COMMAND =
  /(?:(?:(?:uv|poetry|pipenv)\s+run\s+)?(?:python[\d.]*\s+(?:-[A-Za-z]+(?:\s+[^-\s]\S*)?\s+)*-m\s+unittest\b|(?:python[\d.]*\s+)?(?:\.\/)?manage\.py\s+test\b)|django-admin\s+test\b)/

const SNIFF = new RegExp(`^\\s*\\S+ \\([\\w.]+\\)(?: \\(.*\\))? \\.\\.\\. (?:${STATUS})$|^(?:FAIL|ERROR): \\S+ \\([\\w.]+\\)`)

/** How the verdict counts a kind of result: `FAILED (failures=1, skipped=2)`. */
const counted = (verdict: string | undefined, kind: string) => Number(new RegExp(`\\b${kind}=(\\d+)`).exec(verdict ?? "")?.[1] ?? 0)

/** The durations from `start` to their end, into the summary (the slowest ten, the rest counted); the index of their last line. */
const durations = (lines: ReadonlyArray<string>, start: number, report: Report) => {
  report.summary.push("Slowest test durations")
  let listed = 0
  let i = start
  for (; i < lines.length; i++) {
    const line = lines[i]!
    if (DURATION.test(line)) {
      if (listed++ < MAX_DURATIONS) report.summary.push(line)
      continue
    }
    if (line.trim() === "" || DURATIONS_HIDDEN.test(line)) continue
    break
  }
  if (listed > MAX_DURATIONS) report.summary.push(`(${listed - MAX_DURATIONS} faster tests not listed)`)
  return i - 1
}

export const unittest: Reducer = {
  name: "unittest",
  matches: (input) => runs(input.command, COMMAND) || sniff(input.text, SNIFF) || sniffEnd(input.text, RAN),
  reduce: (input) => {
    const report = new Report("unittest")
    let recognised = false
    let progressPasses = 0
    let progressSkips = 0
    let progressSeen = false
    let pending = false
    let block: Array<string> | undefined
    let inBody = false
    let verdict: string | undefined

    const close = () => {
      if (block) report.fail(block, { internalFrame: pythonLibraryFrame })
      block = undefined
      inBody = false
    }
    const status = (s: string) => {
      progressSeen = true
      recognised = true
      if (s === "ok" || s === "expected failure") progressPasses++
      else if (s.startsWith("skipped")) progressSkips++
      // FAIL, ERROR, unexpected success: their blocks name them
      else report.drop()
    }

    const lines = toLines(input.text)
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!
      // the durations end the last failure's block: listed apart (the slowest first), never in its traceback
      if (DURATIONS.test(line) && RULER_END.test(lines[i + 1] ?? "")) {
        close()
        recognised = true
        i = durations(lines, i + 2, report)
        continue
      }
      if (RULER_BLOCK.test(line)) {
        close()
        if (BLOCK_HEAD.test(lines[i + 1] ?? "")) {
          recognised = true
          block = []
        } else report.drop()
        continue
      }
      if (RULER_END.test(line)) {
        // inside a block, the first ruler separates the name from the traceback; the one before
        // `Ran N tests` ends the last block; another in the traceback is the failure's own (a
        // doctest's, before the example that failed): kept with it
        let next = i + 1
        while (next < lines.length && lines[next]!.trim() === "") next++
        const ends = next >= lines.length || RAN.test(lines[next]!) || RULER_BLOCK.test(lines[next]!)
        if (block && !inBody && !RAN.test(lines[i + 1] ?? "")) inBody = true
        else if (block && inBody && !ends) {
          block.push(line)
          continue
        } else close()
        report.drop()
        continue
      }
      if (RAN.test(line) || (!block && VERDICT.test(line))) {
        close()
        recognised = true
        if (VERDICT.test(line)) verdict = line
        report.summary.push(line)
        continue
      }
      if (block) {
        block.push(line)
        continue
      }
      const result = RESULT.exec(line)
      if (result) {
        pending = false
        status(result[1]!)
        continue
      }
      if (pending) {
        const lone = LONE_STATUS.exec(line)
        if (lone) {
          pending = false
          status(lone[1]!)
          continue
        }
      }
      if (NAMED.test(line)) {
        pending = true
        recognised = true
        continue
      }
      if (DOTS.test(line)) {
        progressSeen = true
        recognised = true
        progressPasses += (line.match(/[.x]/g) ?? []).length
        progressSkips += (line.match(/s/g) ?? []).length
        continue
      }
      // a docstring under a pending test, the tests' own output, Django's database set-up
      report.stray(line)
    }
    close()
    if (!recognised) return undefined
    const ran = Number(/\d+/.exec(report.summary.find((l) => RAN.test(l)) ?? "")?.[0] ?? 0)
    const notPassed = ["failures", "errors", "skipped", "unexpected successes"].reduce((n, k) => n + counted(verdict, k), 0)
    report.passed = progressSeen ? progressPasses : Math.max(0, ran - notPassed)
    report.skipped = progressSeen ? progressSkips : counted(verdict, "skipped")
    return report.render()
  }
}
