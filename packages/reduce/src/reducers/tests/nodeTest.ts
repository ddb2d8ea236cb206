/**
 * Node's test runner (`node --test`, spec and TAP reporters) and mocha, under one name. The spec
 * reporter prints `✔ name (1.2ms)` / `✖ name` with the error indented below, the `ℹ tests N`
 * summary, and (Node 20+) a closing `✖ failing tests:` section that repeats every failure with
 * its `test at file:line:col`; when that section is there the inline copies are dropped.
 */
import type { Reducer } from "../../Reducer.ts"
import { runs, sniff, toLines } from "../../Text.ts"
import { jsInternalFrame, Report, sniffEnd } from "./common.ts"
import { parseMocha } from "./mocha.ts"
import { parseTap } from "./tap.ts"

const indentOf = (line: string) => /^\s*/.exec(line)![0].length

const PASS = /^(\s*)✔ (.+?)(?: \(\d+(?:\.\d+)?m?s\))?$/
const FAIL = /^(\s*)✖ (.+?)(?: \(\d+(?:\.\d+)?m?s\))?$/
const SKIP = /^\s*﹣ |# (?:SKIP|TODO)\b/
const SUITE = /^\s*▶ (.+?)(?: \(\d+(?:\.\d+)?m?s\))?$/
const SUMMARY = /^ℹ (?:tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) \d/
const RECAP = /^✖ failing tests:$/

const parseSpec = (lines: ReadonlyArray<string>, report: Report): boolean => {
  const inline: Array<Array<string>> = []
  const recap: Array<Array<string>> = []
  const suites = new Set<string>()
  let block: Array<string> | undefined
  let blockIndent = 0
  let inRecap = false
  let recognised = false

  for (const line of lines) {
    if (inRecap) {
      if (/^test at \S/.test(line) || (block === undefined && FAIL.test(line))) {
        block = [line]
        recap.push(block)
      } else if (block) block.push(line)
      continue
    }
    if (block) {
      if (line.trim() === "" || indentOf(line) > blockIndent) {
        block.push(line)
        continue
      }
      block = undefined
    }
    if (RECAP.test(line)) {
      inRecap = true
      recognised = true
      continue
    }
    if (SUMMARY.test(line)) {
      recognised = true
      report.summary.push(line)
      continue
    }
    const suite = SUITE.exec(line)
    if (suite) {
      suites.add(`${indentOf(line)}:${suite[1]!}`)
      report.drop()
      continue
    }
    if (SKIP.test(line)) {
      report.skipped++
      continue
    }
    const pass = PASS.exec(line)
    if (pass) {
      recognised = true
      // a suite ends with `✔ name` at the indentation of its `▶ name`: not a test
      if (suites.has(`${pass[1]!.length}:${pass[2]!}`)) report.drop()
      else report.passed++
      continue
    }
    const fail = FAIL.exec(line)
    if (fail) {
      recognised = true
      blockIndent = fail[1]!.length
      block = [line]
      inline.push(block)
      continue
    }
    report.stray(line)
  }
  const failures = recap.length > 0 ? recap : inline
  if (recap.length > 0 && inline.length > 0) report.drop()
  for (const b of failures) {
    const fail = FAIL.exec(b[0]!)
    // a failed suite is only its ✖ line; its tests carry the errors
    const onlyHeader = b.slice(1).every((l) => l.trim() === "")
    if (fail && onlyHeader && suites.has(`${fail[1]!.length}:${fail[2]!}`)) {
      report.drop()
      continue
    }
    report.fail(b, { internalFrame: jsInternalFrame })
  }
  return recognised
}

const TAP_SNIFF = /^TAP version \d+$|^\s*(?:not )?ok \d+ - /
const MOCHA_END = /^\s+\d+ (?:passing|failing|pending)(?: \(\d+m?s\))?$/
const SPEC_SNIFF = /^\s*▶ \S|^\s*[✔✖] .+ \(\d+\.\d+ms\)$|^ℹ tests \d+$/

export const nodeTest: Reducer = {
  name: "node_test",
  matches: (input) =>
    runs(input.command, /node\s+(?:\S+\s+)*?--test\b/) ||
    runs(input.command, /(?:_?mocha|tap|tape)\b/) ||
    sniff(input.text, TAP_SNIFF) ||
    sniff(input.text, SPEC_SNIFF) ||
    sniffEnd(input.text, MOCHA_END),
  reduce: (input) => {
    const lines = toLines(input.text)
    if (sniff(input.text, TAP_SNIFF)) {
      const report = new Report("node --test (TAP)")
      return parseTap(lines, report) ? report.render() : undefined
    }
    if (runs(input.command, /_?mocha\b/) || sniffEnd(input.text, MOCHA_END)) {
      const report = new Report("mocha")
      return parseMocha(lines, report) ? report.render() : undefined
    }
    const report = new Report("node --test")
    return parseSpec(lines, report) ? report.render() : undefined
  }
}
