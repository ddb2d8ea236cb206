// The temporary files a killed process left: removed by the next one from the list it noted, and only such files.
import { describe, expect, test } from "bun:test"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { cleanTempFiles } from "../src/TempFiles.ts"

const tmp = (prefix: string) => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)))

describe("cleanTempFiles", () => {
  test("removes what a dead process noted, when it is one of reins's temp names; leaves the living's and everything else", () => {
    const dataDir = tmp("reins-tmpfiles-data-")
    const project = tmp("reins-tmpfiles-project-")
    const file = (name: string, directory = false) => {
      const full = path.join(project, name)
      if (directory) fs.mkdirSync(full)
      else fs.writeFileSync(full, "x")
      return full
    }
    const dead = [
      file(".app.ts.reins-4242-3"),
      file(".notes.md.reins-patch-k2j3h4g5"),
      file("src.ts.reins-restore-4242"),
      file(".copy.reins-copy-4242", true),
      file("reins.json.4242.tmp")
    ]
    // noted by the dead process but not a temp name (a list tampered with, or a path reused): kept
    const kept = [file("app.ts"), file("README.md.reins")]
    const gone = path.join(project, ".renamed.reins-4242-9")
    const living = file(".other.reins-777-1")
    fs.mkdirSync(path.join(dataDir, "temp-files"))
    fs.writeFileSync(path.join(dataDir, "temp-files", "4242"), [...dead, ...kept, gone, "relative.reins-1-1", ""].join("\n"))
    fs.writeFileSync(path.join(dataDir, "temp-files", "777"), `${living}\n`)
    fs.writeFileSync(path.join(dataDir, "temp-files", String(process.pid)), `${living}\n`)
    const removed = cleanTempFiles(dataDir, (pid) => pid === 777)
    expect([...removed].sort()).toEqual([...dead].sort())
    for (const f of dead) expect(fs.existsSync(f)).toBe(false)
    for (const f of [...kept, living]) expect(fs.existsSync(f)).toBe(true)
    // the dead process's list is gone; the living's and this process's stay
    expect(fs.readdirSync(path.join(dataDir, "temp-files")).sort()).toEqual([String(process.pid), "777"].sort())
  })

  test("no list, or no data dir: nothing to do", () => {
    expect(cleanTempFiles(tmp("reins-tmpfiles-empty-"))).toEqual([])
    expect(cleanTempFiles("/nonexistent/reins-data")).toEqual([])
  })
})
