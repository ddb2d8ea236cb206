/**
 * TAP, as `node --test --test-reporter=tap` prints it (and Node 20's default when not on a
 * terminal): `# Subtest: name`, `ok N - name` / `not ok N - name`, each followed by an indented
 * YAML block (`---` … `...`) with duration, location, error, stack; `# tests N` summary comments.
 * A suite whose subtests failed is itself `not ok` with `failureType: 'subtestsFailed'`: dropped,
 * its failing tests are kept on their own.
 */
import type { FrameSpan, Report } from "./common.ts"
import { jsInternalFrame } from "./common.ts"

const RESULT = /^(\s*)(not ok|ok) \d+(?: - (.*?))?(?:\s+# (SKIP|TODO)\b.*)?$/
const SUMMARY = /^# (?:tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) \d/

/** TAP stack lines have no `at `: `Test.run (node:internal/test_runner/test:796:25)`. */
const tapFrame: FrameSpan = (lines, i) => {
  const line = lines[i]!
  if (line.length >= 1000) return 0
  return /^\s+(?:async )?(?:\S.*\((?:node:|<anonymous>\)|[^()]*node_modules[\\/])|node:\S+$|Promise\.(?:all|allSettled|any|race) \(index \d+\)$)/.test(line)
    ? 1
    : jsInternalFrame(lines, i)
}

/** Drops `duration_ms`, and shortens `expected:`/`actual:` dumps that the `error:` diff already shows. */
const compactYaml = (yaml: ReadonlyArray<string>, indent: number): Array<string> => {
  const out: Array<string> = []
  let i = 0
  while (i < yaml.length) {
    const line = yaml[i]!
    const key = /^(\s*)(\w+):/.exec(line)
    i++
    if (!key || key[1]!.length !== indent) {
      out.push(line)
      continue
    }
    let end = i
    while (end < yaml.length && (yaml[end]!.trim() === "" || /^\s*/.exec(yaml[end]!)![0].length > indent)) end++
    const nested = yaml.slice(i, end)
    if (key[2] === "duration_ms") {
      i = end
      continue
    }
    if ((key[2] === "expected" || key[2] === "actual") && nested.length > 4) {
      out.push(`${line} … ${nested.length} lines not shown`)
      i = end
      continue
    }
    out.push(line)
  }
  return out
}

export const parseTap = (lines: ReadonlyArray<string>, report: Report): boolean => {
  let recognised = false
  let i = 0
  while (i < lines.length) {
    const line = lines[i]!
    const result = RESULT.exec(line)
    if (!result) {
      if (SUMMARY.test(line) || /^Bail out!/.test(line.trim())) {
        recognised = true
        report.summary.push(line)
      } else if (/^\s*(?:TAP version|1\.\.\d+|# Subtest:)/.test(line)) report.drop()
      else report.stray(line)
      i++
      continue
    }
    recognised = true
    // the YAML block: from `---` to `...`, indented two more than the result line
    const yamlIndent = " ".repeat(result[1]!.length + 2)
    let yaml: ReadonlyArray<string> = []
    if (lines[i + 1] === `${yamlIndent}---`) {
      let end = i + 2
      while (end < lines.length && lines[end] !== `${yamlIndent}...`) end++
      yaml = lines.slice(i + 2, end)
      i = Math.min(end + 1, lines.length)
    } else i++
    if (yaml.some((l) => /^\s+type: '?suite'?$/.test(l))) {
      // a suite's own result line: its tests are counted one by one
      if (result[2] === "not ok") report.drop()
      continue
    }
    if (result[2] === "ok") {
      if (result[4]) report.skipped++
      else report.passed++
      continue
    }
    if (result[4] === "TODO") {
      report.skipped++
      continue
    }
    if (yaml.some((l) => /^\s+failureType: '?subtestsFailed'?$/.test(l))) {
      report.drop()
      continue
    }
    const kept = compactYaml(yaml, yamlIndent.length)
    if (kept.length < yaml.length) report.drop()
    const dedent = new RegExp(`^ {0,${yamlIndent.length - 2}}`)
    report.fail([line.trim(), ...kept.map((l) => l.replace(dedent, ""))], { internalFrame: tapFrame })
  }
  return recognised
}
