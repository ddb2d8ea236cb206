import { expect, test } from "bun:test"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { systemPrompt } from "../src/Prompt.ts"

// T10: the header is the cached prefix of every request, so nothing in it may change between steps,
// turns, directories or days; what does change (env, instructions) is the second part.
test("the static header is byte-identical across directories, dates and git state; the dynamic part carries them", async () => {
  const a = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-header-a-")))
  const b = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-header-b-")))
  Bun.spawnSync(["git", "init", "-q"], { cwd: b })
  fs.writeFileSync(path.join(b, "AGENTS.md"), "project rules")
  fs.writeFileSync(path.join(b, "dirty.txt"), "x")
  const [headerA, restA] = await Effect.runPromise(systemPrompt(a, new Date("2026-01-02T03:04:05Z")))
  const [headerB, restB] = await Effect.runPromise(systemPrompt(b, new Date("2027-06-07T08:09:10Z")))
  expect(headerB).toBe(headerA!)
  for (const dynamic of [a, b, "2026-01-02", "2027-06-07", "dirty.txt", "project rules", process.platform]) expect(headerA).not.toContain(dynamic)
  expect(restA).toContain(a)
  expect(restA).toContain("2026-01-02")
  expect(restB).toContain("2027-06-07")
  expect(restB).toContain("dirty.txt")
  expect(restB).toContain("project rules")
})
