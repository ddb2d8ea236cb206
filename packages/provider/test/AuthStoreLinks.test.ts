// The key store's temporary file has a predictable name (auth.json.<pid>.tmp): whatever sits there (a symlink to a
// file someone else can read, a stale file) is replaced, never written through, and the key lands only in auth.json.
import { describe, expect, test } from "bun:test"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { authFile, storeKey } from "../src/AuthStore.ts"

const tempDir = () => fs.mkdtempSync(path.join(os.tmpdir(), "reins-auth-links-"))

describe("the key store's temporary file", () => {
  const cases: ReadonlyArray<{ readonly name: string; readonly plant: (temp: string, outside: string) => void }> = [
    {
      name: "a symlink to an existing readable file",
      plant: (temp, outside) => {
        fs.writeFileSync(outside, "", { mode: 0o644 })
        fs.symlinkSync(outside, temp)
      }
    },
    { name: "a dangling symlink", plant: (temp, outside) => fs.symlinkSync(outside, temp) },
    { name: "a stale readable file", plant: (temp) => fs.writeFileSync(temp, "old", { mode: 0o644 }) },
    { name: "nothing (the ordinary case)", plant: () => {} }
  ]
  for (const c of cases) {
    test(c.name, async () => {
      const data = path.join(tempDir(), "data")
      fs.mkdirSync(data, { mode: 0o700 })
      const outside = path.join(tempDir(), "leak.txt")
      const existed = c.name.includes("existing")
      c.plant(`${authFile(data)}.${process.pid}.tmp`, outside)
      await Effect.runPromise(storeKey(data, "anthropic", "sk-ant-secret-1"))
      expect(JSON.parse(fs.readFileSync(authFile(data), "utf8"))).toEqual({ anthropic: { type: "api", key: "sk-ant-secret-1" } })
      expect(fs.lstatSync(authFile(data)).isFile()).toBe(true)
      expect(fs.statSync(authFile(data)).mode & 0o777).toBe(0o600)
      // the outside file did not get the key (nor its mode changed); a dangling link's target was not created
      if (existed) {
        expect(fs.readFileSync(outside, "utf8")).toBe("")
        expect(fs.statSync(outside).mode & 0o777).toBe(0o644)
      } else expect(fs.existsSync(outside)).toBe(false)
      expect(fs.readdirSync(data)).toEqual(["auth.json"])
    })
  }
})
