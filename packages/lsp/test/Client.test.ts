// The client alone: framing, and a server (with the tsserver it starts) gone once the scope closes.
import { describe, expect, test } from "bun:test"
import { Effect, Fiber } from "effect"
import { edit } from "@reins/tool"
import * as fs from "node:fs"
import * as path from "node:path"
import { waitFor } from "@reins/testkit"
import { start } from "../src/Client.ts"
import { open } from "../src/Connection.ts"
import { Decoder, encode, MAX_MESSAGE_BYTES } from "../src/Framing.ts"
import { BIN, childrenOf, gone, pathWithServers, tempDir, withServers } from "./helpers.ts"

const RECORDER = path.join(import.meta.dir, "fixtures", "recording-server.cjs")

describe("framing", () => {
  test("messages split across chunks and several in one chunk are decoded in order", () => {
    const a = encode({ id: 1, result: "é" })
    const b = encode({ method: "x", params: [1, 2] })
    const whole = Buffer.concat([a, b])
    const decoder = new Decoder()
    const got = [
      ...decoder.push(whole.subarray(0, 7)).messages,
      ...decoder.push(whole.subarray(7, a.length + 3)).messages,
      ...decoder.push(whole.subarray(a.length + 3)).messages
    ]
    expect(got).toEqual([
      { id: 1, result: "é" },
      { method: "x", params: [1, 2] }
    ])
  })

  test("a 15 MiB message in 64 KiB chunks is decoded whole (chunks kept, joined once); one over 16 MiB is refused", () => {
    const big = encode({ id: 1, result: "x".repeat(15 * 1024 * 1024) })
    const decoder = new Decoder()
    const got: Array<unknown> = []
    for (let at = 0; at < big.length; at += 64 * 1024) got.push(...decoder.push(big.subarray(at, at + 64 * 1024)).messages)
    expect(got.length).toBe(1)
    expect((got[0] as { result: string }).result.length).toBe(15 * 1024 * 1024)
    expect(MAX_MESSAGE_BYTES).toBe(16 * 1024 * 1024)
    const over = new Decoder().push(Buffer.from(`Content-Length: ${MAX_MESSAGE_BYTES + 1}\r\n\r\n`))
    expect(over.error).toBe(`a message of ${MAX_MESSAGE_BYTES + 1} bytes`)
  })

  test("a header without Content-Length ends the stream with a reason", () => {
    const decoded = new Decoder().push(Buffer.from("Content-Type: x\r\n\r\n{}"))
    expect(decoded.messages).toEqual([])
    expect(decoded.error).toContain("without Content-Length")
  })
})

describe("client", () => {
  test("closing the scope shuts typescript-language-server down, its tsserver too", async () => {
    const root = tempDir()
    fs.writeFileSync(path.join(root, "tsconfig.json"), "{}")
    const file = path.join(root, "a.ts")
    fs.writeFileSync(file, "export const n: number = 1\n")
    const tsserver = path.join(import.meta.dir, "..", "node_modules", "typescript", "lib", "tsserver.js")
    const seen = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const client = yield* start(
            {
              name: "typescript-language-server",
              root,
              parentPid: process.pid,
              languageId: () => "typescript",
              initializationOptions: { tsserver: { path: tsserver } }
            },
            { file: path.join(BIN, "typescript-language-server"), args: ["--stdio"], env: { PATH: pathWithServers() }, cwd: root },
            60_000
          )
          const synced = yield* client.sync(file, "export const n: number = 'x'\n", 60_000)
          expect(synced?.problems.map((p) => p.code)).toEqual(["TS2322"])
          const pid = client.pid!
          return { pid, children: childrenOf(pid) }
        })
      )
    )
    expect(seen.children.length).toBeGreaterThan(0)
    expect(gone(seen.pid)).toBe(true)
    // killed with its group; reaped by init when it gets to it
    await waitFor(() => seen.children.every(gone), "tsserver to end")
  })
})

describe("connection", () => {
  test("an interrupted request is forgotten and cancelled with $/cancelRequest", async () => {
    const cwd = tempDir()
    const log = path.join(cwd, "sent.log")
    const sent = () =>
      fs.existsSync(log)
        ? fs
            .readFileSync(log, "utf8")
            .trim()
            .split("\n")
            .map((l) => JSON.parse(l))
        : []
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const connection = yield* open(
            "recorder",
            { file: process.execPath, args: [RECORDER, log], env: { PATH: pathWithServers() }, cwd },
            { notification: () => {}, request: () => undefined }
          )
          const asking = yield* Effect.forkChild(connection.request("x/never", {}, 600_000))
          const asked = yield* Effect.promise(() => waitFor(() => sent().find((m) => m.method === "x/never"), "the request to arrive"))
          yield* Fiber.interrupt(asking)
          yield* Effect.promise(() =>
            waitFor(() => sent().find((m) => m.method === "$/cancelRequest" && m.params.id === asked.id), "the request to be cancelled")
          )
        })
      )
    )
  })

  test("a server that crashes has its process group killed at once, not when the runtime closes", async () => {
    const cwd = tempDir()
    const childPid = path.join(cwd, "child.pid")
    const config = { foo: { command: ["node", RECORDER, path.join(cwd, "sent.log"), `child=${childPid}`], extensions: [".foo"] } }
    fs.writeFileSync(path.join(cwd, "a.foo"), "a\n")
    await withServers({ cwd, config, env: { PATH: pathWithServers() }, projectCode: true }, async (call) => {
      await call(edit, { filePath: "a.foo", oldString: "a", newString: "b" })
      const pid = Number(fs.readFileSync(childPid, "utf8"))
      // still inside the runtime's scope
      await waitFor(() => gone(pid), "the crashed server's child to be killed")
    })
  })
})
