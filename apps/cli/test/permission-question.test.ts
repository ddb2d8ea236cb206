// A bash question's title is shown beside the command: a background command's says the grant lasts the job's life.
import { expect, test } from "bun:test"
import { questionLines } from "../src/tui/view/PermissionQuestion.tsx"

test("a background command's question says it runs in the background with no timeout", () => {
  const base = { id: "per_1", permission: "bash", patterns: ["npm run dev"], always: ["npm run *"] }
  const note = "runs in the background with no timeout: allowed for as long as the job runs, until it ends or is stopped"
  expect(questionLines({ ...base, title: note }, "/p")).toContain(`  note: ${note}`)
  expect(questionLines(base, "/p").some((l) => l.startsWith("  note:"))).toBe(false)
})
