// A project the user has not trusted themselves: none of its own programs run — not its node_modules/.bin, not a
// PATH entry pointing into it or relative to it, not servers that run its code (rust-analyzer, gopls) — and a
// rustup proxy without its component is neither started nor offered.
import { describe, expect, test } from "bun:test"
import { edit } from "@reins/tool"
import * as fs from "node:fs"
import * as path from "node:path"
import { findRoot, serverTable } from "../src/Servers.ts"
import { pathWithServers, tempDir, withServers } from "./helpers.ts"

/** An executable that leaves `marker` behind when run (and exits 1). */
const plant = (file: string, marker: string) => {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, `#!/bin/sh\ntouch ${marker}\nexit 1\n`, { mode: 0o755 })
}

const tsProject = () => {
  const cwd = tempDir()
  fs.writeFileSync(path.join(cwd, "tsconfig.json"), "{}")
  fs.writeFileSync(path.join(cwd, "a.ts"), "export const count: number = 1\n")
  return cwd
}

describe("a project not trusted by the user", () => {
  test("PATH's relative entries are skipped (they name the project's programs)", async () => {
    const cwd = tsProject()
    // relative to this process's directory, where the devDependencies' typescript-language-server is
    const env = { PATH: ["node_modules/.bin", path.dirname(process.execPath), "/usr/bin", "/bin"].join(path.delimiter) }
    await withServers({ cwd, config: undefined, env, projectCode: false }, async (call, offered) => {
      expect(offered).toBe(false)
      const r = await call(edit, { filePath: "a.ts", oldString: "= 1", newString: '= "one"' })
      expect(r.output).not.toContain("Errors reported")
    })
  })

  test("a PATH entry inside the project is not run", async () => {
    const cwd = tsProject()
    const marker = path.join(cwd, "ran")
    plant(path.join(cwd, "tools", "typescript-language-server"), marker)
    const env = { PATH: [path.join(cwd, "tools"), pathWithServers()].join(path.delimiter) }
    await withServers({ cwd, config: undefined, env, projectCode: false }, async (call) => {
      const r = await call(edit, { filePath: "a.ts", oldString: "= 1", newString: '= "one"' })
      // the one on PATH outside the project serves it, with its own typescript
      expect(r.output).toContain("a.ts:1:14 TS2322")
    })
    expect(fs.existsSync(marker)).toBe(false)
  })

  test("rust-analyzer (build scripts, proc macros) is neither offered nor started; trusted, it is", async () => {
    const cwd = tempDir()
    fs.writeFileSync(path.join(cwd, "Cargo.toml"), "[package]\nname = 'x'\n")
    fs.writeFileSync(path.join(cwd, "main.rs"), "fn main() {}\n")
    const bin = tempDir("reins-lsp-bin-")
    const marker = path.join(cwd, "ran")
    plant(path.join(bin, "rust-analyzer"), marker)
    const env = { PATH: [bin, "/usr/bin", "/bin"].join(path.delimiter) }
    await withServers({ cwd, config: undefined, env, projectCode: false }, async (call, offered) => {
      expect(offered).toBe(false)
      await call(edit, { filePath: "main.rs", oldString: "{}", newString: "{ }" })
    })
    expect(fs.existsSync(marker)).toBe(false)
    await withServers({ cwd, config: undefined, env, projectCode: true }, async (call, offered) => {
      expect(offered).toBe(true)
      const r = await call(edit, { filePath: "main.rs", oldString: "{ }", newString: "{}" })
      // it exits at once: the edit's result is untouched
      expect(r.output).not.toContain("Errors reported")
    })
    expect(fs.existsSync(marker)).toBe(true)
  })

  test("rustup's proxy without the rust-analyzer component is not offered, nor run", async () => {
    const cwd = tempDir()
    fs.writeFileSync(path.join(cwd, "Cargo.toml"), "[package]\nname = 'x'\n")
    fs.writeFileSync(path.join(cwd, "main.rs"), "fn main() {}\n")
    const home = tempDir("reins-lsp-home-")
    const bin = path.join(home, ".cargo", "bin")
    const marker = path.join(cwd, "ran")
    plant(path.join(bin, "rustup"), marker)
    fs.symlinkSync(path.join(bin, "rustup"), path.join(bin, "rust-analyzer"))
    fs.mkdirSync(path.join(home, ".rustup", "toolchains", "stable-x86_64-unknown-linux-gnu", "bin"), { recursive: true })
    const env = { PATH: [bin, "/usr/bin", "/bin"].join(path.delimiter), HOME: home }
    await withServers({ cwd, config: undefined, env, projectCode: true }, async (call, offered) => {
      expect(offered).toBe(false)
      await call(edit, { filePath: "main.rs", oldString: "{}", newString: "{ }" })
    })
    expect(fs.existsSync(marker)).toBe(false)
  })
})

describe("roots", () => {
  test("TypeScript's root is the outermost marker in the project (one server for a monorepo); others the nearest", () => {
    const cwd = tempDir()
    for (const dir of ["packages/a/src", "packages/b"]) fs.mkdirSync(path.join(cwd, dir), { recursive: true })
    for (const dir of ["", "packages/a", "packages/b"]) fs.writeFileSync(path.join(cwd, dir, "package.json"), "{}")
    const ts = serverTable(undefined).find((d) => d.id === "typescript")!
    const python = serverTable(undefined).find((d) => d.id === "python")!
    for (const file of ["packages/a/src/x.ts", "packages/b/y.ts"]) expect(findRoot(path.join(cwd, file), ts.markers, cwd, ts.rootAt)).toBe(cwd)
    fs.writeFileSync(path.join(cwd, "packages/a/pyproject.toml"), "")
    expect(findRoot(path.join(cwd, "packages/a/src/x.py"), python.markers, cwd, python.rootAt)).toBe(path.join(cwd, "packages/a"))
  })
})
