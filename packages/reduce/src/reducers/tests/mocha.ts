/**
 * Mocha's spec reporter: suites and `✔ name` lines (`1) name` for failures, `- name` pending),
 * then `N passing (Xms)`, `N failing`, `N pending`, then one block per failure starting with
 * `  1) suite` at two spaces, its test name on the next line, message, diff and stack.
 */
import type { Report } from "./common.ts"
import { jsInternalFrame } from "./common.ts"

const PASS = /^\s+[✔✓√] /
const INDEX = /^\s+\d+\) \S/
const PENDING = /^\s+- \S/
const COUNT = /^\s+\d+ (?:passing|failing|pending)(?: \(\d+m?s\))?$/
const BLOCK = /^ {2}\d+\) \S/

export const parseMocha = (lines: ReadonlyArray<string>, report: Report): boolean => {
  let recognised = false
  let block: Array<string> | undefined
  let details = false

  const close = () => {
    if (block) report.fail(block, { internalFrame: jsInternalFrame })
    block = undefined
  }

  for (const line of lines) {
    if (COUNT.test(line)) {
      close()
      recognised = true
      report.summary.push(line.trim())
      if (/failing$/.test(line)) details = true
      continue
    }
    if (details) {
      if (BLOCK.test(line)) {
        close()
        block = [line]
      } else if (block) block.push(line)
      else report.stray(line)
      continue
    }
    if (PASS.test(line)) {
      recognised = true
      report.passed++
      continue
    }
    if (PENDING.test(line)) {
      report.skipped++
      continue
    }
    if (INDEX.test(line)) {
      // the listing's `1) name`: repeated with its details below
      report.drop()
      continue
    }
    // suite titles and blank lines of the listing
    if (/^\s+\S/.test(line) && !/error|Error/.test(line)) report.drop()
    else report.stray(line)
  }
  close()
  return recognised
}
