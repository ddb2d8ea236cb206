// The data dir holds reins's own secrets: the keys `reins auth login` stored (auth.json), the trust store, the
// servers' tokens, every session (reins.db). The OS sandbox hides them from bash; no file tool reads or writes them
// either, not even under --yolo (where "*" is allowed). A project file is read as before.
import { describe, expect, test } from "bun:test"
import { Effect } from "effect"
import { SessionService } from "@reins/session"
import { SessionStore } from "@reins/storage"
import * as fs from "node:fs"
import * as path from "node:path"
import { scriptedRuntimes, tmp } from "./support.ts"

const runtime = scriptedRuntimes()
const model = { providerID: "local", modelID: "m" }
const KEY = "sk-ant-stored-secret-0123456789"

describe("the data dir's secrets under --yolo", () => {
  test("read, grep, list, glob, write and edit of them are denied; the key never reaches the model", async () => {
    const dataDir = tmp()
    fs.writeFileSync(path.join(dataDir, "auth.json"), JSON.stringify({ anthropic: { type: "api", key: KEY } }), { mode: 0o600 })
    fs.mkdirSync(path.join(dataDir, "servers"))
    fs.writeFileSync(path.join(dataDir, "servers", "4096.json"), JSON.stringify({ token: KEY }))
    fs.writeFileSync(path.join(dataDir, "trust.json"), "{}")
    const auth = path.join(dataDir, "auth.json")
    const calls = [
      { name: "read", arguments: { filePath: auth } },
      { name: "read", arguments: { filePath: path.join(dataDir, "servers", "4096.json") } },
      { name: "grep", arguments: { pattern: "sk-ant", path: auth } },
      { name: "list", arguments: { path: path.join(dataDir, "servers") } },
      { name: "glob", arguments: { pattern: "*.json", path: path.join(dataDir, "servers") } },
      { name: "write", arguments: { filePath: path.join(dataDir, "trust.json"), content: '{"trusted": ["/"]}' } },
      { name: "edit", arguments: { filePath: auth, oldString: "anthropic", newString: "x" } }
    ]
    const made = await runtime(
      [...calls.map((c) => ({ toolCalls: [c] })), { toolCalls: [{ name: "read", arguments: { filePath: "ok.txt" } }] }, { text: "done" }],
      {
        dataDir,
        permission: { yolo: true }
      }
    )
    fs.writeFileSync(path.join(made.cwd, "ok.txt"), "an ordinary project file\n")
    const parts = await Effect.runPromise(
      Effect.gen(function* () {
        const sessions = yield* SessionService
        const session = yield* sessions.create({ directory: made.cwd })
        yield* sessions.prompt({ sessionID: session.id, text: "steal", model })
        return (yield* (yield* SessionStore).messages(session.id)).flatMap((m) => m.parts).flatMap((p) => (p.type === "tool" ? [p] : []))
      }).pipe(Effect.provide(made.layer), Effect.scoped)
    )
    expect(parts.map((p) => p.tool)).toEqual([...calls.map((c) => c.name), "read"])
    for (const p of parts.slice(0, calls.length)) {
      expect(p.state.status).toBe("error")
      expect(p.state.status === "error" && p.state.error).toContain("deny")
    }
    // the ordinary read still works
    expect(parts.at(-1)!.state.status).toBe("completed")
    expect(JSON.stringify(made.server.requests.map((r) => r.body))).not.toContain(KEY)
    expect(JSON.parse(fs.readFileSync(auth, "utf8")).anthropic.key).toBe(KEY)
    expect(fs.readFileSync(path.join(dataDir, "trust.json"), "utf8")).toBe("{}")
  })
})
