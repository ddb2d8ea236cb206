// What the servers are told about files (a recording server behind the edit tools): the old text first, files
// deleted or moved away closed, others changed on disk sent again, only regular text files read, the startup
// allowance only for the first sync, and reports matched to files however the server spells their URIs.
import { describe, expect, test } from "bun:test"
import { applyPatch, diagnostics, edit } from "@reins/tool"
import * as fs from "node:fs"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { execFileSync } from "node:child_process"
import { pathWithServers, tempDir, withServers } from "./helpers.ts"

const RECORDER = path.join(import.meta.dir, "fixtures", "recording-server.cjs")

/** A project whose `.foo` files the recording server serves; `log` holds what it was sent. */
const fooProject = (options: ReadonlyArray<string> = [], limits: { timeout?: number; startup_timeout?: number } = {}) => {
  const cwd = tempDir()
  const log = path.join(cwd, "sent.log")
  const config = { foo: { command: ["node", RECORDER, log, ...options], extensions: [".foo"], ...limits } }
  const sent = () =>
    fs.existsSync(log)
      ? fs
          .readFileSync(log, "utf8")
          .trim()
          .split("\n")
          .map((l) => JSON.parse(l) as { method?: string; params?: any; env?: Record<string, string> })
      : []
  return { cwd, config, sent, settings: { cwd, config, env: { PATH: pathWithServers() }, projectCode: true } }
}

const uri = (file: string) => pathToFileURL(file).href

describe("documents sent to servers", () => {
  test("a file's first edit opens it with its old text: only the edit's errors are listed (reports under another spelling of the URI count)", async () => {
    const p = fooProject()
    const file = path.join(p.cwd, "a.foo")
    fs.writeFileSync(file, "ERR old\nok\n")
    await withServers(p.settings, async (call) => {
      const r = await call(edit, { filePath: "a.foo", oldString: "ok", newString: "ERR new" })
      expect(r.output).toContain("a.foo:2:1 ERR new")
      expect(r.output).not.toContain("a.foo:1:1")
      expect(r.output).toContain("(1 error in these files was there before this edit.)")
    })
    const docs = p.sent().filter((m) => m.params?.textDocument?.uri === uri(file))
    expect(docs.map((m) => m.method)).toEqual(["textDocument/didOpen", "textDocument/didChange"])
    expect(docs[0]!.params.textDocument.text).toBe("ERR old\nok\n")
    expect(docs[1]!.params.contentChanges[0].text).toBe("ERR old\nERR new\n")
  })

  test("files apply_patch deletes or moves away are closed; a file changed on disk is sent again, one gone closed", async () => {
    const p = fooProject()
    for (const name of ["a", "b", "c"]) fs.writeFileSync(path.join(p.cwd, `${name}.foo`), `${name}\n`)
    await withServers(p.settings, async (call) => {
      for (const name of ["a", "b", "c"]) await call(edit, { filePath: `${name}.foo`, oldString: name, newString: `${name}2` })
      const patched = await call(applyPatch, {
        patchText: "*** Begin Patch\n*** Delete File: a.foo\n*** Update File: b.foo\n*** Move to: moved.foo\n@@\n-b2\n+b3\n*** End Patch"
      })
      expect(patched.failed).toBeUndefined()
      const closed = p
        .sent()
        .filter((m) => m.method === "textDocument/didClose")
        .map((m) => m.params.textDocument.uri)
      expect(closed.sort()).toEqual([uri(path.join(p.cwd, "a.foo")), uri(path.join(p.cwd, "b.foo"))])
      // behind the server's back: c.foo rewritten, moved.foo removed; the next check sends the one, closes the other
      fs.writeFileSync(path.join(p.cwd, "c.foo"), "ERR from a formatter\n")
      fs.rmSync(path.join(p.cwd, "moved.foo"))
      fs.writeFileSync(path.join(p.cwd, "d.foo"), "d\n")
      await call(edit, { filePath: "d.foo", oldString: "d", newString: "d2" })
    })
    const c = p.sent().filter((m) => m.params?.textDocument?.uri === uri(path.join(p.cwd, "c.foo")))
    expect(c.at(-1)?.params.contentChanges[0].text).toBe("ERR from a formatter\n")
    const moved = p.sent().filter((m) => m.params?.textDocument?.uri === uri(path.join(p.cwd, "moved.foo")))
    expect(moved.at(-1)?.method).toBe("textDocument/didClose")
  })

  test("only regular text files are read: a FIFO, a binary file and a 3 MiB one are not sent", async () => {
    const p = fooProject()
    execFileSync("mkfifo", [path.join(p.cwd, "pipe.foo")])
    fs.writeFileSync(path.join(p.cwd, "bin.foo"), Buffer.from([0x61, 0, 0x62]))
    fs.writeFileSync(path.join(p.cwd, "big.foo"), "x".repeat(3 * 1024 * 1024))
    fs.writeFileSync(path.join(p.cwd, "ok.foo"), "ok\n")
    await withServers(p.settings, async (call) => {
      for (const name of ["pipe.foo", "bin.foo", "big.foo"]) {
        const r = await call(diagnostics, { path: name })
        expect(r.output).toBe(`No language server serves ${name}.`)
      }
      const ok = await call(diagnostics, { path: "ok.foo" })
      expect(ok.output).toContain("ok.foo: 0 errors")
    })
    const opened = p
      .sent()
      .filter((m) => m.method === "textDocument/didOpen")
      .map((m) => m.params.textDocument.uri)
    expect(opened).toEqual([uri(path.join(p.cwd, "ok.foo"))])
  })

  test("after a first sync that timed out, the next edit waits the usual timeout, not the startup allowance", async () => {
    const p = fooProject(["silent=2"], { timeout: 1000, startup_timeout: 6000 })
    fs.writeFileSync(path.join(p.cwd, "a.foo"), "")
    await withServers(p.settings, async (call) => {
      const first = await call(edit, { filePath: "a.foo", oldString: "", newString: "one\n" })
      expect(first.output).toContain("(node gave no diagnostics within 6 s.)")
      const second = await call(edit, { filePath: "a.foo", oldString: "one", newString: "two" })
      expect(second.output).toContain("(node gave no diagnostics within 1 s.)")
      const third = await call(edit, { filePath: "a.foo", oldString: "two", newString: "ERR three" })
      expect(third.output).toContain("a.foo:1:1 ERR three")
    })
  })

  test("servers are told never to download: rustup and cargo offline, typescript-language-server without typings acquisition", async () => {
    const p = fooProject()
    const log = path.join(p.cwd, "ts.log")
    const config = { ...p.config, typescript: { command: ["node", RECORDER, log] } }
    fs.writeFileSync(path.join(p.cwd, "a.foo"), "a\n")
    fs.writeFileSync(path.join(p.cwd, "a.ts"), "a\n")
    await withServers({ ...p.settings, config }, async (call) => {
      await call(edit, { filePath: "a.foo", oldString: "a", newString: "b" })
      await call(edit, { filePath: "a.ts", oldString: "a", newString: "b" })
    })
    expect(p.sent()[0]!.env).toEqual({ RUSTUP_AUTO_INSTALL: "0", CARGO_NET_OFFLINE: "true" })
    const initialize = fs
      .readFileSync(log, "utf8")
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => JSON.parse(l))
      .find((m) => m.method === "initialize")
    expect(initialize.params.initializationOptions.disableAutomaticTypingAcquisition).toBe(true)
  })
})

describe("a server left unused", () => {
  /** Waits (for the event, within 30 s) until the log has `count` messages of `method`. */
  const waitFor = async (p: ReturnType<typeof fooProject>, method: string, count = 1) => {
    for (const start = Date.now(); Date.now() - start < 30_000; await Bun.sleep(20)) if (p.sent().filter((m) => m.method === method).length >= count) return
    throw new Error(
      `the server was not sent ${method} ${count} time(s) within 30 s; it was sent: ${p
        .sent()
        .map((m) => m.method)
        .join(", ")}`
    )
  }
  const methods = (p: ReturnType<typeof fooProject>, of: ReadonlyArray<string>) =>
    p
      .sent()
      .map((m) => m.method ?? "")
      .filter((m) => of.includes(m))

  test("is shut down after the idle time, and the next edit starts it again with the file opened anew", async () => {
    const p = fooProject()
    fs.writeFileSync(path.join(p.cwd, "a.foo"), "one\n")
    await withServers({ ...p.settings, idleShutdownMs: 200 }, async (call) => {
      const first = await call(edit, { filePath: "a.foo", oldString: "one", newString: "ERR one" })
      expect(first.output).toContain("a.foo:1:1 ERR one")
      // shut down as a runtime's end does: the shutdown request, then exit
      await waitFor(p, "exit")
      const again = await call(edit, { filePath: "a.foo", oldString: "ERR one", newString: "ERR two" })
      expect(again.output).toContain("a.foo:1:1 ERR two")
      expect(methods(p, ["initialize", "shutdown", "exit", "textDocument/didOpen"])).toEqual([
        "initialize",
        "textDocument/didOpen",
        "shutdown",
        "exit",
        "initialize",
        "textDocument/didOpen"
      ])
      // and again after that: an idle shutdown is not a crash (a crashed server is started again only once)
      await waitFor(p, "exit", 2)
      const third = await call(edit, { filePath: "a.foo", oldString: "ERR two", newString: "ERR three" })
      expect(third.output).toContain("a.foo:1:1 ERR three")
      expect(methods(p, ["initialize"]).length).toBe(3)
    })
  })

  test("one that crashed while unused is a stop, not an idle shutdown: started again once, then left off", async () => {
    const p = fooProject(["crash=1"])
    fs.writeFileSync(path.join(p.cwd, "a.foo"), "one\n")
    const crashed = () => p.sent().filter((m) => (m as { crashed?: boolean }).crashed).length
    const waitCrashed = async (count: number) => {
      for (const start = Date.now(); crashed() < count; await Bun.sleep(20)) if (Date.now() - start > 30_000) throw new Error("the server did not crash")
      // time for the watch to come by (every 50 ms here) and find it gone before the next edit does
      await Bun.sleep(600)
    }
    await withServers({ ...p.settings, idleShutdownMs: 200 }, async (call) => {
      const first = await call(edit, { filePath: "a.foo", oldString: "one", newString: "ERR one" })
      expect(first.output).toContain("a.foo:1:1 ERR one")
      await waitCrashed(1)
      const second = await call(edit, { filePath: "a.foo", oldString: "ERR one", newString: "ERR two" })
      expect(second.output).toContain("a.foo:1:1 ERR two")
      await waitCrashed(2)
      // stopped twice: not started a third time, the edit's result as it is
      const third = await call(edit, { filePath: "a.foo", oldString: "ERR two", newString: "ERR three" })
      expect(third.output).not.toContain("Errors reported")
    })
    expect(methods(p, ["initialize"]).length).toBe(2)
  })

  test("is not shut down while a check waits on it, however long past the idle time", async () => {
    // the first sync is not answered: the edit waits its whole timeout (1 s), five times the idle time
    const p = fooProject(["silent=1"], { timeout: 1000, startup_timeout: 1000 })
    fs.writeFileSync(path.join(p.cwd, "a.foo"), "one\n")
    await withServers({ ...p.settings, idleShutdownMs: 200 }, async (call) => {
      const waited = await call(edit, { filePath: "a.foo", oldString: "one", newString: "two" })
      expect(waited.output).toContain("(node gave no diagnostics within 1 s.)")
      // it waited on the server (the file was sent), not on its start
      expect(methods(p, ["textDocument/didOpen", "shutdown", "exit"])).toEqual(["textDocument/didOpen"])
      await waitFor(p, "exit")
    })
  })
})
