// Issue 26: reins's helper processes start with its own runtime: under bun, the script without the directory's
// .env and bunfig.toml; in the standalone executable, the executable's own helper entry.
import { describe, expect, test } from "bun:test"
import { HELPER_FLAG, helperCommand, isStandalone } from "../src/Helper.ts"

describe("helper processes", () => {
  test("the standalone executable is told by where its main module lives", () => {
    expect(isStandalone("/$bunfs/root/reins")).toBe(true)
    expect(isStandalone("B:\\~BUN\\root\\reins.exe")).toBe(true)
    expect(isStandalone("B:/~BUN/root/reins.exe")).toBe(true)
    expect(isStandalone("/usr/lib/node_modules/@reins/cli/dist/reins.js")).toBe(false)
    expect(isStandalone("/home/me/$bunfs/reins.js")).toBe(false)
    // this test runs under bun, from source
    expect(isStandalone()).toBe(false)
  })

  test("under bun: the script, with the project's .env and bunfig.toml left unread", () => {
    expect(helperCommand("GrepChild", ["/src/GrepChild.ts"], ["42"])).toEqual([
      process.execPath,
      "--no-env-file",
      "--config=/dev/null",
      "/src/GrepChild.ts",
      "42"
    ])
    expect(HELPER_FLAG).toBe("--reins-helper")
  })
})
