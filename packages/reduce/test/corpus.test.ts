// The fixture corpus: real outputs captured from real tools (and faithful copies of documented
// formats where a tool is not installable). Each `<name>.txt` has a `<name>.json` manifest:
//   { "command": "bun test", "kind": "failing" | "passing", "source": "real" | "documented",
//     "tool": "bun 1.4.5", "reducer": "bun_test", "failures": ["suite > name", …],
//     "locations": ["src/a.test.ts:12", …] }
// The failures and locations are written from what the sample project was built to fail, not
// from the reducer's output.
import { describe, expect, test } from "bun:test"
import { byteLength, MAX_BYTES, MAX_LINES } from "@reins/truncate"
import { builtinReducers, runReducers } from "../src/index.ts"
import { corpus } from "./corpus.ts"

describe("reducer corpus", () => {
  const fixtures = corpus()
  for (const { name, manifest, text } of fixtures) {
    test(`${name} (${manifest.kind}, ${manifest.source})`, () => {
      // minBytes 0: small fixtures are reduced too, so every reducer is exercised
      const result = runReducers(builtinReducers, { text, command: manifest.command, maxLines: MAX_LINES, maxBytes: MAX_BYTES }, { minBytes: 0 })
      expect(result).toBeDefined()
      const { text: reduced, evidence } = result!
      expect(evidence.reducer).toBe(manifest.reducer)
      expect(evidence.originalBytes).toBe(byteLength(text))
      expect(evidence.compactedBytes).toBe(byteLength(reduced))
      expect(evidence.reasons.length).toBeGreaterThan(0)
      for (const failure of manifest.failures) expect(reduced).toContain(failure)
      for (const location of manifest.locations) expect(reduced).toContain(location)
      const removed = 1 - evidence.compactedBytes / evidence.originalBytes
      if (manifest.kind === "failing" && evidence.originalBytes > 20_000) expect(removed).toBeGreaterThanOrEqual(0.85)
      if (manifest.kind === "passing") expect(evidence.compactedBytes).toBeLessThan(1024)
    })
  }
})
