// Issue 27 (item 5) and STYLE.md: no file of the session package's source over 300 lines. The session's files are
// the ones the next engineer reads first.
import { expect, test } from "bun:test"
import * as fs from "node:fs"
import * as path from "node:path"

const MAX_LINES = 300

test(`every file in packages/session/src has at most ${MAX_LINES} lines`, () => {
  const src = path.join(import.meta.dir, "..", "src")
  const files = fs.readdirSync(src, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts"))
  expect(files.length).toBeGreaterThan(10)
  const over = files.map((f) => ({ file: f, lines: fs.readFileSync(path.join(src, f), "utf8").split("\n").length - 1 })).filter((f) => f.lines > MAX_LINES)
  expect(over).toEqual([])
})
