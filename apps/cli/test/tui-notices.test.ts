// Warnings in the interactive session (an extension file that does not load) show as notices in the
// transcript: a log line written to the terminal would draw over the screen.
import { beforeAll, expect, setDefaultTimeout, test } from "bun:test"
import * as fs from "node:fs"
import * as path from "node:path"
import { ensureBuilt, projects, trust } from "./support.ts"
import { openTui, send, settled } from "./tui-support.ts"

setDefaultTimeout(60_000)
beforeAll(() => ensureBuilt())
const project = projects()

for (const resumed of [false, true]) {
  test(`a plugin file that does not load is a notice on screen, not a log line over it (${resumed ? "a resumed session: logged before the screen" : "a new session"})`, async () => {
    const p = await project(resumed ? [{ text: "first answer" }, { text: "Still working." }] : [{ text: "Still working." }])
    if (resumed) {
      const { reins } = await import("./support.ts")
      expect((await reins(["run", "hello"], p)).code).toBe(0)
    }
    fs.mkdirSync(path.join(p.cwd, ".reins", "plugins"), { recursive: true })
    fs.writeFileSync(path.join(p.cwd, ".reins", "plugins", "broken.ts"), "export default {{{ not typescript\n")
    await trust(p)
    await using pty = await openTui(p, resumed ? ["--continue"] : [])
    await settled(pty, "broken.ts")
    const screen = pty.screen()
    expect(screen).toMatch(/Skipped .*broken\.ts/)
    // not the logger's own line format
    expect(screen).not.toMatch(/level=WARN|timestamp=/)
    await send(pty, "go on")
    await pty.waitFor("Still working.")
    expect(pty.screen()).toMatch(/Skipped .*broken\.ts/)
    await send(pty, "/exit")
    expect(await pty.waitExit()).toBe(0)
  })
}
