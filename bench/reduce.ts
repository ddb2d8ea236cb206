// Benchmark: the reducers over the fixture corpus. Per fixture: original and reduced bytes,
// % removed, failure names and locations kept, and the time to reduce. Usage: bun bench/reduce.ts
import { builtinReducers, runReducers } from "@reins/reduce"
import { byteLength, MAX_BYTES, MAX_LINES } from "@reins/truncate"
import { corpus } from "../packages/reduce/test/corpus.ts"
import { machine, table } from "./support.ts"

const rows: Array<Array<string>> = []
let allKept = true
let targetsMet = true
for (const { name, manifest, text } of corpus()) {
  const start = performance.now()
  const result = runReducers(builtinReducers, { text, command: manifest.command, maxLines: MAX_LINES, maxBytes: MAX_BYTES }, { minBytes: 0 })
  const ms = performance.now() - start
  const reduced = result?.text ?? text
  const original = byteLength(text)
  const after = byteLength(reduced)
  const wanted = [...manifest.failures, ...manifest.locations]
  const kept = wanted.filter((w) => reduced.includes(w)).length
  allKept &&= kept === wanted.length
  const removed = 1 - after / original
  const target = manifest.kind === "failing" && original > 20_000 ? removed >= 0.85 : manifest.kind === "passing" ? after < 1024 : true
  targetsMet &&= target
  rows.push([
    name,
    manifest.kind,
    result?.evidence.reducer ?? "(none)",
    `${original}`,
    `${after}`,
    `${(removed * 100).toFixed(1)}%`,
    `${kept}/${wanted.length}`,
    `${ms.toFixed(1)} ms`,
    target ? "ok" : "MISS"
  ])
}

console.log(`\nreduce — the reducer corpus (targets: failing runs > 20 KB ≥ 85% removed, passing runs < 1 KB, every failure name and location kept)`)
console.log(`machine: ${machine()}\n`)
console.log(table(["fixture", "kind", "reducer", "bytes", "reduced", "removed", "kept", "time", "target"], rows))
// speed on large inputs: a fixture of each family repeated to 10 MB
const big: Array<Array<string>> = []
for (const name of ["tests/jest-failing", "tests/go-test-json-failing", "build/make-gcc", "build/eslint-unix", "git/git-log"]) {
  const f = corpus().find((c) => c.name === name)
  if (!f) continue
  const text = f.text.repeat(Math.ceil(10_000_000 / f.text.length))
  const start = performance.now()
  const r = runReducers(builtinReducers, { text, command: f.manifest.command, maxLines: MAX_LINES, maxBytes: MAX_BYTES })
  big.push([name, `${(byteLength(text) / 1e6).toFixed(1)} MB`, r?.evidence.reducer ?? "(none)", `${(performance.now() - start).toFixed(0)} ms`])
}
console.log(`\n${table(["10 MB input", "size", "reducer", "time"], big)}`)
console.log(`\nfailure names and locations kept: ${allKept ? "all" : "NOT ALL"}; size targets: ${targetsMet ? "all met" : "MISSED"}`)
if (!allKept) process.exitCode = 1
