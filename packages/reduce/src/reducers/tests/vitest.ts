/**
 * Vitest. The run lists tests (`✓ file > suite > name` in the verbose reporter, `✓ file (N
 * tests)` per file in the default one, `× name` + `→ message` for failures), then a
 * `⎯⎯ Failed Tests N ⎯⎯` section of ` FAIL  file > suite > name` blocks separated by
 * `⎯⎯[1/5]⎯` rules (likewise `Failed Suites` for files that failed to load), maybe
 * `⎯⎯ Unhandled Errors ⎯⎯` with one section per error, and the ` Test Files`/`Tests` summary.
 */
import type { Reducer } from "../../Reducer.ts"
import { runs, sniff, toLines } from "../../Text.ts"
import type { FrameSpan } from "./common.ts"
import { jsInternalFrame, Report, trimCodeFrame } from "./common.ts"

const PASS_LINE = /^\s*[✓√] (.+?)(?: \d+(?:\.\d+)?m?s)?$/
const PASS_FILE = /^\s*[✓√] \S+ \((\d+) tests?(?: \| \d+ skipped)?\)/
const FAIL_LINE = /^\s*[×✗] /
const ARROW = /^\s+→ /
const SKIP_LINE = /^\s*[↓] /
const FILE_LINE = /^\s*❯ \S+ \(\d+ tests?/
const SECTION = /^⎯+ (.+?) ⎯+$/
const RULE = /^⎯+(?:\[\d+\/\d+\]⎯*)?$/
const BLOCK = /^ (?:FAIL|ERROR) {1,2}\S/
const SUMMARY = /^\s*(?:Test Files|Tests|Errors|Snapshots|Type Errors|Duration)\s{2}/
const FRAME = /^\s+\d+\|/
const CARET = /^\s+\|\s*\^/

/** Sections that list ` FAIL  …` blocks separated by `⎯⎯[1/5]⎯` rules. */
const LISTS = /^Failed (?:Tests|Suites)\b/

/** Vitest prints frames as `❯ fn file:line:col` (or `at …` in `Caused by` chains). */
const vitestFrame: FrameSpan = (lines, i) => {
  const line = lines[i]!
  if (line.length < 1000 && /^\s*❯ (?:.*\s)?(?:node:|[^\s]*node_modules[\\/])/.test(line)) return 1
  return jsInternalFrame(lines, i)
}

const SNIFF = /^\s*RUN\s+v\d+\.\d+|^\s*Test Files\s{2}\d|^⎯+ Failed Tests \d+ ⎯+$/

export const vitest: Reducer = {
  name: "vitest",
  matches: (input) => runs(input.command, /vitest\b/) || sniff(input.text, SNIFF),
  reduce: (input) => {
    const report = new Report("vitest")
    const listed: Array<string> = []
    let section: string | undefined
    let block: Array<string> | undefined
    let recognised = false

    const close = () => {
      if (block?.some((l) => l.trim() !== "")) {
        report.fail(trimCodeFrame(block, FRAME, CARET, report.reasons), { internalFrame: vitestFrame })
      }
      block = undefined
    }

    for (const line of toLines(input.text)) {
      const sec = SECTION.exec(line)
      if (sec) {
        close()
        recognised = true
        section = sec[1]!
        // "Unhandled Errors" opens with a paragraph of advice, then one section per error
        // ("Uncaught Exception", "Unhandled Rejection") that is kept whole
        if (!LISTS.test(section) && !/^Unhandled Errors?$/.test(section)) block = [line]
        else report.drop()
        continue
      }
      if (SUMMARY.test(line)) {
        close()
        section = undefined
        recognised = true
        report.summary.push(line)
        continue
      }
      if (section !== undefined) {
        if (RULE.test(line)) {
          close()
          if (!LISTS.test(section)) section = undefined
          report.drop()
          continue
        }
        if (BLOCK.test(line)) {
          close()
          block = [line]
          continue
        }
        if (block) block.push(line)
        else report.stray(line)
        continue
      }
      if (/^\s*RUN\s+v\d/.test(line) || /^\s*Start at\s{2}/.test(line)) {
        recognised = true
        report.drop()
        continue
      }
      const file = PASS_FILE.exec(line)
      if (file) {
        recognised = true
        report.passed += Number(file[1])
        continue
      }
      if (PASS_LINE.test(line)) {
        recognised = true
        report.passed++
        continue
      }
      if (FAIL_LINE.test(line) || ARROW.test(line)) {
        recognised = true
        listed.push(line)
        continue
      }
      if (SKIP_LINE.test(line)) {
        report.skipped++
        continue
      }
      if (FILE_LINE.test(line)) {
        report.drop()
        continue
      }
      if (/^\s*(?:stdout|stderr) \| /.test(line)) {
        report.drop()
        continue
      }
      report.stray(line)
    }
    close()
    if (!recognised) return undefined
    // no Failed Tests section (a cut-off run): the × lines and their → messages are all there is
    if (report.failures.length === 0 && listed.length > 0) report.fail(listed)
    else if (listed.length > 0) report.drop()
    // the default reporter lists only files (a failing file's passes are never listed): the
    // summary has the true count of passing tests not shown
    const tests = report.summary.map((l) => /^\s*Tests\s{2}.*?(\d+) passed/.exec(l)).find((m) => m)
    if (tests) report.passed = Number(tests[1])
    return report.render()
  }
}
