// The temporary files a killed process left: removed by the next one from the list it noted, and only such files.
import { describe, expect, test } from "bun:test"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { cleanTempFiles } from "../src/TempFiles.ts"

const tmp = (prefix: string) => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)))
const host = os.hostname().replace(/[^A-Za-z0-9.-]/g, "_")

describe("cleanTempFiles", () => {
  test("removes what a dead process of this machine noted, when it is one of its temp names; leaves the rest", () => {
    const dataDir = tmp("reins-tmpfiles-data-")
    const project = tmp("reins-tmpfiles-project-")
    const outside = tmp("reins-tmpfiles-outside-")
    const file = (dir: string, name: string, directory = false) => {
      const full = path.join(dir, name)
      if (directory) fs.mkdirSync(full)
      else fs.writeFileSync(full, "x")
      return full
    }
    const dead = [
      file(project, ".app.ts.reins-4242-3"),
      file(project, ".notes.md.reins-patch-4242-k2j3h4g5"),
      file(project, "src.ts.reins-restore-4242"),
      file(project, ".copy.reins-copy-4242", true),
      file(project, "reins.json.4242.tmp")
    ]
    // noted by the dead process, but not to be removed: not a temp name, another pid's name, a directory where a file is
    // expected, a link (never followed), a name that only looks like one after a newline
    const kept = [file(project, "app.ts"), file(project, "README.md.reins"), file(project, ".other.reins-777-1"), file(outside, "cache.4242.tmp", true)]
    fs.writeFileSync(path.join(outside, "target"), "keep")
    fs.symlinkSync(path.join(outside, "target"), path.join(project, ".link.reins-4242-1"))
    const gone = path.join(project, ".renamed.reins-4242-9")
    fs.mkdirSync(path.join(dataDir, "temp-files"))
    const lines = [...dead, ...kept, gone, path.join(project, ".link.reins-4242-1"), "relative.reins-4242-1"].map((f) => JSON.stringify(f))
    fs.writeFileSync(path.join(dataDir, "temp-files", `${host}-4242`), `${lines.join("\n")}\n${JSON.stringify(`x\n${outside}/cache.4242.tmp`)}\n{torn`)
    const living = file(project, ".living.reins-777-2")
    fs.writeFileSync(path.join(dataDir, "temp-files", `${host}-777`), `${JSON.stringify(living)}\n`)
    // another machine's list (a data dir shared by cluster runners): its pids are not this machine's
    const remote = file(project, ".remote.reins-5151-1")
    fs.writeFileSync(path.join(dataDir, "temp-files", "other-host-5151"), `${JSON.stringify(remote)}\n`)
    const removed = cleanTempFiles(dataDir, (pid) => pid === 777)
    expect([...removed].sort()).toEqual([...dead].sort())
    for (const f of dead) expect(fs.existsSync(f)).toBe(false)
    for (const f of [...kept, living, remote, path.join(outside, "target")]) expect(fs.existsSync(f)).toBe(true)
    expect(fs.lstatSync(path.join(project, ".link.reins-4242-1")).isSymbolicLink()).toBe(true)
    expect(fs.readdirSync(path.join(dataDir, "temp-files")).sort()).toEqual([`${host}-777`, "other-host-5151"].sort())
  })

  test("a path that cannot be removed is left, and the start goes on", () => {
    const dataDir = tmp("reins-tmpfiles-data-")
    const locked = tmp("reins-tmpfiles-locked-")
    const stuck = path.join(locked, "y.4343.tmp")
    fs.writeFileSync(stuck, "x")
    fs.chmodSync(locked, 0o555)
    fs.mkdirSync(path.join(dataDir, "temp-files"))
    fs.writeFileSync(path.join(dataDir, "temp-files", `${host}-4343`), `${JSON.stringify(stuck)}\n`)
    try {
      expect(() => cleanTempFiles(dataDir, () => false)).not.toThrow()
    } finally {
      fs.chmodSync(locked, 0o755)
    }
  })

  test("no list, or no data dir: nothing to do", () => {
    expect(cleanTempFiles(tmp("reins-tmpfiles-empty-"))).toEqual([])
    expect(cleanTempFiles("/nonexistent/reins-data")).toEqual([])
  })
})
