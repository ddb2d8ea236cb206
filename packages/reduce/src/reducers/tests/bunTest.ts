/**
 * `bun test`. Bun prints each test's error (code frame, message, diff, stack) BEFORE its
 * `(fail) name` line, so the lines since the previous result belong to the next failure. With
 * colour on, `(pass)`/`(fail)`/`(skip)`/`(todo)` become `✓`/`✗`/`»`/`✎`.
 */
import type { Reducer } from "../../Reducer.ts"
import { runs, sniff, toLines } from "../../Text.ts"
import { jsInternalFrame, Report, trimCodeFrame } from "./common.ts"

const RESULT = /^(\(pass\)|✓|\(fail\)|✗|\(skip\)|»|\(todo\)|✎) (.+)$/
const FILE = /^(?!\s)(?!Ran |error:)\S.*\.(?:[cm]?[jt]sx?):$/
const SUMMARY =
  /^\s*\d+ (?:pass|fail|skip|todo|error|errors|snapshots?|expect\(\) calls?)\b|^Ran \d+ tests? across \d+ files?\.|^\s*\d+ tests? (?:failed|skipped|todo):?$|^\s*\d+ snapshots?,/
const FRAME = /^\s*\d+ \| /
const CARET = /^\s*\^\s*$/

const SNIFF = /^bun test v\d|^\((?:pass|fail)\) \S|^Ran \d+ tests? across \d+ files?\./

export const bunTest: Reducer = {
  name: "bun_test",
  matches: (input) => runs(input.command, /bun\s+(?:--\S+\s+)*test\b/) || sniff(input.text, SNIFF),
  reduce: (input) => {
    const report = new Report("bun test")
    let pending: Array<string> = []
    let file: string | undefined
    let fileShown = false
    let recognised = false
    /** Inside a closing "N tests failed:" list: its (fail) lines are summary, not new failures. */
    let list: "fail" | "other" | undefined
    /** Inside "# Unhandled error between tests": up to the closing dashes. */
    let unhandled: Array<string> | undefined

    const flushStray = () => {
      for (const l of pending) report.stray(l)
      pending = []
    }

    for (const line of toLines(input.text)) {
      if (unhandled) {
        unhandled.push(line)
        if (/^-{5,}$/.test(line) && unhandled.length > 2) {
          report.fail(unhandled, { internalFrame: jsInternalFrame })
          unhandled = undefined
        }
        continue
      }
      if (/^# Unhandled error/.test(line)) {
        flushStray()
        unhandled = [line]
        recognised = true
        continue
      }
      if (list !== undefined) {
        if (line.trim() === "") {
          list = undefined
          continue
        }
        if (list === "fail") report.summary.push(line)
        else report.drop()
        continue
      }
      const result = RESULT.exec(line)
      if (result) {
        recognised = true
        const kind = result[1]!
        if (kind === "(pass)" || kind === "✓") {
          report.passed++
          flushStray()
        } else if (kind === "(skip)" || kind === "»" || kind === "(todo)" || kind === "✎") {
          report.skipped++
          flushStray()
        } else {
          const header = file && !fileShown ? [`${file}:`] : []
          fileShown = true
          const block = trimCodeFrame(pending, FRAME, CARET, report.reasons)
          report.fail([...header, line, ...block], { internalFrame: jsInternalFrame })
          pending = []
        }
        continue
      }
      if (/^\s*\d+ tests? failed:$/.test(line)) {
        flushStray()
        report.summary.push(line)
        list = "fail"
        continue
      }
      if (/^\s*\d+ tests? (?:skipped|todo):$/.test(line)) {
        flushStray()
        list = "other"
        report.drop()
        continue
      }
      if (SUMMARY.test(line)) {
        flushStray()
        recognised = true
        report.summary.push(line)
        continue
      }
      if (FILE.test(line)) {
        flushStray()
        file = line.slice(0, -1)
        fileShown = false
        continue
      }
      if (/^bun test v\d/.test(line)) {
        report.drop()
        continue
      }
      pending.push(line)
    }
    if (unhandled) report.fail(unhandled, { internalFrame: jsInternalFrame })
    // whatever followed the last result (a crash, a load error) is kept when it looks like one
    if (pending.some((l) => /error|Error|panic/.test(l))) report.fail(pending, { internalFrame: jsInternalFrame })
    else flushStray()
    if (!recognised) return undefined
    return report.render()
  }
}
