/**
 * `cargo test` (libtest's output). Per test binary: `Running …`, `running N tests`, one
 * `test path ... ok|FAILED|ignored` line per test, then for failures a `failures:` section of
 * `---- name stdout ----` blocks (the panic with its `file:line:col`, maybe a backtrace), the
 * `failures:` list of names, and `test result: FAILED. 400 passed; 5 failed; …`.
 */
import type { Reducer } from "../../Reducer.ts"
import { runs, sniff, toLines } from "../../Text.ts"
import type { FrameSpan } from "./common.ts"
import { Report } from "./common.ts"

const RESULT = /^test (.+?) \.\.\. (ok|FAILED|ignored\b.*|bench:.*)$/
const BINARY = /^\s+(?:Running|Doc-tests) \S/
const BUILD = /^\s+(?:Compiling|Finished|Checking|Blocking|Updating|Locking|Downloaded|Downloading|Fresh)\s/
const BLOCK = /^---- (.+?) (?:stdout|stderr) ----$/
const RESULT_LINE = /^test result: /
const NOTE = /^note: (?:run with `RUST_BACKTRACE|Some details are omitted)/

/** A backtrace frame `  12: symbol` (and its `at path:line` line) from std, core or the harness. */
const rustFrame: FrameSpan = (lines, i) => {
  const frame = /^\s*\d+: (.+)$/.exec(lines[i]!)
  if (!frame) return 0
  const next = lines[i + 1]
  const at = next !== undefined && /^\s+at \S/.test(next) ? next : undefined
  const internal =
    /^(?:<?(?:std|core|alloc|test|__rustc|panic_unwind|backtrace)::|<fn\(|rust_begin_unwind|__rust|_start\b|__libc_start|start_thread|clone\d*$|__clone)/.test(
      frame[1]!
    ) ||
    (at !== undefined && /at \/rustc\//.test(at))
  return internal ? (at ? 2 : 1) : 0
}

const SNIFF = /^running \d+ tests?$|^test result: (?:ok|FAILED)\.|^test \S+ \.\.\. (?:ok|FAILED)$/

export const cargoTest: Reducer = {
  name: "cargo_test",
  matches: (input) => runs(input.command, /cargo\s+(?:\+\S+\s+)?test\b/) || sniff(input.text, SNIFF),
  reduce: (input) => {
    const report = new Report("cargo test")
    let binary: string | undefined
    let binaryShown = false
    let block: Array<string> | undefined
    /** 0: listing tests; 1: in the failures: details; 2: in the failures: name list. */
    let phase = 0
    let recognised = false

    const close = () => {
      if (block) {
        const header = binary && !binaryShown ? [binary.trim()] : []
        binaryShown = true
        report.fail([...header, ...block], { internalFrame: rustFrame })
      }
      block = undefined
    }

    for (const line of toLines(input.text)) {
      if (BINARY.test(line)) {
        close()
        phase = 0
        binary = line
        binaryShown = false
        report.drop()
        continue
      }
      if (RESULT_LINE.test(line)) {
        close()
        phase = 0
        recognised = true
        report.summary.push(line)
        continue
      }
      if (line === "failures:") {
        close()
        phase = phase === 0 ? 1 : 2
        if (phase === 2) report.summary.push(line)
        continue
      }
      if (phase === 1) {
        if (BLOCK.test(line)) {
          close()
          block = [line]
        } else if (NOTE.test(line)) report.drop()
        else if (block) block.push(line)
        else report.stray(line)
        continue
      }
      if (phase === 2) {
        if (/^\s{4}\S/.test(line)) report.summary.push(line)
        continue
      }
      const result = RESULT.exec(line)
      if (result) {
        recognised = true
        const status = result[2]!
        if (status === "ok") report.passed++
        else if (status.startsWith("ignored")) report.skipped++
        else report.drop()
        continue
      }
      if (/^running \d+ tests?$/.test(line) || BUILD.test(line)) {
        report.drop()
        continue
      }
      if (/^error(?:\[E\d+\])?: /.test(line) && !/^error: test failed|^error: \d+ targets? failed/.test(line)) {
        report.stray(line)
        continue
      }
      if (/^error: /.test(line) || /^\s{4}`[^`]+`$/.test(line)) report.summary.push(line)
      else report.stray(line)
    }
    close()
    return recognised ? report.render() : undefined
  }
}
