/**
 * Jest. Per file a `PASS path`/`FAIL path` line, in verbose mode the tests as `✓ name` /
 * `✕ name`, then for each failure a `● suite › name` block (message, diff, code frame, stack),
 * and the closing `Tests:` summary. Console output (`● Console` with --ci, else bare
 * `console.log` blocks, each with indented lines) is noise; a "Summary of all failing tests"
 * section repeats blocks already kept.
 */
import type { Reducer } from "../../Reducer.ts"
import { runs, sniff, toLines } from "../../Text.ts"
import { jsInternalFrame, Report, trimCodeFrame } from "./common.ts"

const FILE = /^(PASS|FAIL) (\S.*)$/
const PASS_LINE = /^\s+[✓√] /
const FAIL_LINE = /^\s+[✕×] (.+?)(?: \(\d+(?:\.\d+)? m?s\))?$/
const SKIP_LINE = /^\s+[○✎] /
const BLOCK = /^ {2}● (.+)$/
const SUMMARY = /^(?:Test Suites|Tests|Snapshots|Time|Seed):\s|^Ran all test suites|^Test run was interrupted/
const CONSOLE = /^\s{2}console\.(?:log|info|warn|error|debug|trace)$/
const FRAME = /^\s+(?:>\s)?\s*\d+ \|/
const CARET = /^\s+\|\s+\^/
const MARKED = /^\s+>\s+\d+ \|/

const SNIFF = /^(?:PASS|FAIL) \S+\.\w+$|^Test Suites: \d+|^\s{2}● \S/

export const jest: Reducer = {
  name: "jest",
  matches: (input) => runs(input.command, /(?:jest|react-scripts\s+test)\b/) || sniff(input.text, SNIFF),
  reduce: (input) => {
    const report = new Report("jest")
    const seen = new Set<string>()
    const failed: Array<string> = []
    let block: Array<string> | undefined
    let inConsole = false
    let inRecap = false
    let recognised = false
    /** The `FAIL path` line, shown once above that file's first failure block. */
    let fileHeader: string | undefined

    const close = () => {
      if (block) {
        const title = block[0]!.trim()
        if (!seen.has(title)) {
          seen.add(title)
          const framed = trimCodeFrame(block, FRAME, CARET, report.reasons, MARKED)
          report.fail(fileHeader ? [fileHeader, ...framed] : framed, { internalFrame: jsInternalFrame })
          fileHeader = undefined
        } else report.drop()
      }
      block = undefined
    }

    for (const line of toLines(input.text)) {
      if (inConsole) {
        // console output ends at the next `●` block, file line or summary, or (outside a
        // `● Console` section) at the first line back at the file's indentation
        if (line === "" || /^\s{4}/.test(line)) {
          report.drop()
          continue
        }
        inConsole = false
      }
      const file = FILE.exec(line)
      if (file) {
        close()
        recognised = true
        inRecap = false
        fileHeader = file[1] === "FAIL" ? line : undefined
        if (file[1] !== "FAIL") report.drop()
        continue
      }
      if (SUMMARY.test(line)) {
        close()
        recognised = true
        inRecap = false
        report.summary.push(line)
        continue
      }
      if (/^Summary of all failing tests$/.test(line)) {
        close()
        inRecap = true
        report.drop()
        continue
      }
      const head = BLOCK.exec(line)
      if (head) {
        close()
        recognised = true
        // `● Console`: the file's console output (in --ci), not a failure
        if (head[1] === "Console") {
          inConsole = true
          report.drop()
        } else block = [line]
        continue
      }
      if (CONSOLE.test(line)) {
        close()
        inConsole = true
        report.drop()
        continue
      }
      if (block) {
        block.push(line)
        continue
      }
      if (PASS_LINE.test(line)) {
        report.passed++
        continue
      }
      const fail = FAIL_LINE.exec(line)
      if (fail) {
        failed.push(fail[1]!)
        continue
      }
      if (SKIP_LINE.test(line)) {
        report.skipped++
        continue
      }
      if (inRecap) {
        report.drop()
        continue
      }
      // suite names of the verbose listing, blank lines, other chatter
      if (/^\s+\S/.test(line) && !/error|Error/.test(line)) report.drop()
      else report.stray(line)
    }
    close()
    // failures listed as ✕ but with no ● block (an interrupted run): keep their names
    const titles = [...seen]
    const missing = failed.filter((name) => !titles.some((t) => t.endsWith(name)))
    if (missing.length > 0) report.fail(["Failed (no details printed):", ...missing.map((n) => `  ✕ ${n}`)])
    if (!recognised) return undefined
    return report.render()
  }
}
