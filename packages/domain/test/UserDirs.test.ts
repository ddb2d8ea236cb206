// Where the user's config and data (the key store) live. A relative XDG_CONFIG_HOME / XDG_DATA_HOME is invalid (the
// XDG spec: ignored): taken from the working directory, a cloned repository's `x/reins/reins.json` would be the
// user's own, trusted config. REINS_DATA_DIR is made absolute, so the sandbox and the rules hiding auth.json name
// the directory really used.
import { describe, expect, test } from "bun:test"
import * as path from "node:path"
import { defaultDataDir, userConfigDir } from "../src/index.ts"

const home = "/home/u"

describe("the user's directories", () => {
  const cases: ReadonlyArray<{ readonly env: Record<string, string>; readonly data: string; readonly config: string }> = [
    { env: {}, data: "/home/u/.local/share/reins", config: "/home/u/.config/reins" },
    { env: { XDG_DATA_HOME: "/x/data", XDG_CONFIG_HOME: "/x/config" }, data: "/x/data/reins", config: "/x/config/reins" },
    { env: { XDG_DATA_HOME: "data", XDG_CONFIG_HOME: "config" }, data: "/home/u/.local/share/reins", config: "/home/u/.config/reins" },
    { env: { XDG_DATA_HOME: "./.x", XDG_CONFIG_HOME: "../c" }, data: "/home/u/.local/share/reins", config: "/home/u/.config/reins" },
    { env: { XDG_DATA_HOME: "", XDG_CONFIG_HOME: "" }, data: "/home/u/.local/share/reins", config: "/home/u/.config/reins" },
    { env: { REINS_DATA_DIR: "/srv/reins" }, data: "/srv/reins", config: "/home/u/.config/reins" },
    { env: { REINS_DATA_DIR: "rd", XDG_DATA_HOME: "/x/data" }, data: path.resolve("rd"), config: "/home/u/.config/reins" }
  ]
  for (const c of cases) {
    test(JSON.stringify(c.env), () => {
      expect(defaultDataDir(c.env, home)).toBe(c.data)
      expect(path.isAbsolute(defaultDataDir(c.env, home))).toBe(true)
      expect(userConfigDir(c.env, home)).toBe(c.config)
    })
  }
})
