// `@path` in the interactive session: a file in the project is attached (its text inlined under its
// path in the request), a file outside it is left to the read tool with a notice.
import { beforeAll, expect, setDefaultTimeout, test } from "bun:test"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ensureBuilt, projects } from "./support.ts"
import { openTui, send, settled } from "./tui-support.ts"

setDefaultTimeout(60_000)
beforeAll(() => ensureBuilt())
const project = projects()

test("@path attaches a project file in the interactive session; one outside the project is not attached", async () => {
  const p = await project([{ text: "Summarised the notes." }, { text: "Not attached, fine." }])
  fs.writeFileSync(path.join(p.cwd, "notes.txt"), "remember the milk\n")
  const outside = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-tui-outside-")))
  fs.writeFileSync(path.join(outside, "far.txt"), "far away\n")
  await using pty = await openTui(p, ["--yolo"])
  await send(pty, "summarise @notes.txt")
  await settled(pty, "Summarised the notes.")
  expect(pty.screen()).toContain("[file] notes.txt")
  const user = (p.server.requests[0]!.body.messages as Array<{ role: string; content: any }>).filter((m) => m.role === "user").flatMap((m) => m.content)
  expect(user).toContainEqual({ type: "text", text: '<file path="notes.txt">\nremember the milk\n</file>' })

  await send(pty, `and @${outside}/far.txt`)
  await pty.waitFor("Not attached, fine.")
  expect(pty.screen()).toContain("is outside the project and was not attached")
  expect(JSON.stringify(p.server.requests[1]!.body)).not.toContain("far away")
  await send(pty, "/exit")
  expect(await pty.waitExit()).toBe(0)
})
