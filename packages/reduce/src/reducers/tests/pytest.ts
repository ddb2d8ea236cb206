/**
 * pytest. A session header, progress (`path::test PASSED [ 12%]` with -v, `path ..F.s [ 12%]`
 * without), then `===` sections: FAILURES / ERRORS with one `___ name ___` block per test,
 * warnings summary, short test summary info (`FAILED path::test - message`; with -v it repeats
 * each diff, already kept in the block), and the closing `=== 5 failed, 440 passed in 1.2s ===`.
 */
import type { Reducer } from "../../Reducer.ts"
import { runs, sniff, toLines } from "../../Text.ts"
import { Report, sniffEnd } from "./common.ts"
import { pythonLibraryFrame } from "./python.ts"

const SECTION = /^={3,} (.+?) ={3,}$/
const FINAL = /\b(?:passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?|no tests ran)\b.* in \d+(?:\.\d+)?s\b/
const BLOCK = /^_{3,} (.+) _{3,}$/
/** `!!!! Interrupted: 1 error during collection !!!!`, `!!!! stopping after 1 failures !!!!` */
const BANG = /^!{3,} .+ !{3,}$/
/** The closing counts without rulers, as `-q` prints them: `1 failed, 9 passed in 0.12s`. */
const FINAL_BARE = /^\d+ (?:passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?)\b.* in \d+(?:\.\d+)?s\b/
const PROGRESS_V = /^\S+::\S.*? (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)(?: .*)?\s+\[\s*\d+%\]$/
const PROGRESS = /^(?:\S+\.py )?[.FEsxX]+\s+\[\s*\d+%\]$/
const WARNINGS_KEPT = 12

const SNIFF = /^={3,} test session starts ={3,}$|^\S+::\S+ (?:PASSED|FAILED|ERROR)\b/

export const pytest: Reducer = {
  name: "pytest",
  matches: (input) =>
    runs(input.command, /(?:py\.test|pytest|python3?\s+-m\s+pytest|uv\s+run\s+pytest|poetry\s+run\s+pytest|tox)\b/) ||
    sniff(input.text, SNIFF) ||
    sniffEnd(input.text, /^={3,} .*\b(?:passed|failed)\b.* in \d+(?:\.\d+)?s\b.*={3,}$/),
  reduce: (input) => {
    const report = new Report("pytest")
    const warnings: Array<string> = []
    let section: string | undefined
    let block: Array<string> | undefined
    let header = false
    let recognised = false
    let listedPasses = 0

    const close = () => {
      if (block) report.fail(block, { internalFrame: pythonLibraryFrame })
      block = undefined
    }

    for (const line of toLines(input.text)) {
      if (BANG.test(line) || FINAL_BARE.test(line)) {
        close()
        recognised = true
        header = false
        report.summary.push(line)
        continue
      }
      const sec = SECTION.exec(line)
      if (sec) {
        close()
        recognised = true
        header = false
        const name = sec[1]!
        if (/^test session starts/.test(name)) {
          header = true
          section = undefined
          report.drop()
        } else if (FINAL.test(name)) {
          section = undefined
          report.summary.push(line)
        } else {
          section = name
          if (/^short test summary info$/.test(name)) report.summary.push(line)
          else if (/^(?:FAILURES|ERRORS)$/.test(name)) report.drop()
        }
        continue
      }
      if (header) {
        // platform, rootdir, plugins … up to the first blank line
        if (line.trim() === "") header = false
        report.drop()
        continue
      }
      if (section === undefined) {
        const v = PROGRESS_V.exec(line)
        if (v) {
          recognised = true
          if (v[1] === "PASSED" || v[1] === "XFAIL") listedPasses++
          else if (v[1] === "SKIPPED") report.skipped++
          // FAILED / ERROR progress lines: the blocks and the short summary name them
          else report.drop()
          continue
        }
        if (PROGRESS.test(line)) {
          recognised = true
          listedPasses += (/ ([.FEsxX]+)\s+\[/.exec(line)?.[1] ?? "").replace(/[^.]/g, "").length
          continue
        }
        if (/^collect(?:ing|ed) /.test(line)) report.drop()
        else report.stray(line)
        continue
      }
      if (/^(?:FAILURES|ERRORS)$/.test(section)) {
        if (BLOCK.test(line)) {
          close()
          block = [line]
        } else if (block) block.push(line)
        else report.stray(line)
        continue
      }
      if (/^short test summary info$/.test(section)) {
        // with -v each entry continues with the whole diff, indented: the block has it already
        if (/^(?:FAILED|ERROR|XPASS|XFAIL)\b/.test(line)) report.summary.push(line)
        else report.drop()
        continue
      }
      if (/warnings summary/.test(section)) {
        if (warnings.length < WARNINGS_KEPT) warnings.push(line)
        else report.drop()
        continue
      }
      // PASSES, captured logs of passing tests, coverage tables, other plugin sections
      report.drop()
    }
    close()
    if (!recognised) return undefined
    if (warnings.length > 0) report.other.push("warnings summary:", ...warnings.filter((l) => l.trim() !== ""))
    const final = report.summary.map((l) => /(\d+) passed/.exec(l)).find((m) => m)
    report.passed = final ? Number(final[1]) : listedPasses
    return report.render()
  }
}
