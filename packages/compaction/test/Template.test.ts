import { describe, expect, test } from "bun:test"
import { prunedPlaceholder } from "@reins/provider"
import { SUMMARY_TEMPLATE, summaryRequest, transcript } from "../src/index.ts"
import { history } from "./fixtures.ts"

const textOf = (request: ReturnType<typeof summaryRequest>) =>
  request.messages.flatMap((m) => m.parts.flatMap((p) => (p.type === "text" ? [p.text] : []))).join("\n")

const head = () => {
  const h = history()
  h.user("Fix the login bug", { files: [{ mime: "image/png", filename: "shot.png" }] })
  h.assistant({
    text: "Looking",
    tools: [
      { tool: "bash", output: "SECRET OLD OUTPUT", compacted: 1 },
      { tool: "read", output: "file body here" }
    ]
  })
  return h.messages
}

describe("summary template (T12)", () => {
  test("the built-in template names every section", () => {
    for (const section of [
      "## Objective",
      "## Important Details",
      "## Work State",
      "### Completed",
      "### Active",
      "### Blocked",
      "## Next Move",
      "## Relevant Files"
    ]) {
      expect(SUMMARY_TEMPLATE).toContain(section)
    }
  })
  test("the head goes in as one user transcript, tool results as the model sees them", () => {
    const request = summaryRequest({ head: head() })
    expect(request.system).toEqual([SUMMARY_TEMPLATE])
    expect(request.messages).toHaveLength(1)
    expect(request.messages[0]!.info.role).toBe("user")
    const text = textOf(request)
    expect(text).toContain("Fix the login bug")
    expect(text).toContain("[Attached image/png: shot.png]")
    expect(text).toContain("file body here")
    expect(text).toContain(prunedPlaceholder("bash"))
    expect(text).not.toContain("SECRET OLD OUTPUT")
    expect(text).not.toContain("previous-summary")
  })
  test("a previous summary is passed in to be updated", () => {
    const text = textOf(summaryRequest({ head: head(), previous: "## Objective\nOLD GOAL" }))
    expect(text).toContain("<previous-summary>\n## Objective\nOLD GOAL\n</previous-summary>")
    expect(text).toMatch(/Update the previous summary/)
    expect(text).toMatch(/Do not summarise the summary itself again/)
  })
  test("a configured template replaces the built-in one", () => {
    expect(summaryRequest({ head: head(), template: "MY TEMPLATE" }).system).toEqual(["MY TEMPLATE"])
  })
  test("the transcript labels who said what", () => {
    const t = transcript(head())
    expect(t.indexOf("### User")).toBeLessThan(t.indexOf("### Assistant"))
    expect(t).toContain('[Tool call: read {"command":"read"}]')
  })
})
