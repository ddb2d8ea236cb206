// The client alone: framing, and a server (with the tsserver it starts) gone once the scope closes.
import { describe, expect, test } from "bun:test"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { waitFor } from "@reins/testkit"
import { start } from "../src/Client.ts"
import { Decoder, encode } from "../src/Framing.ts"
import { BIN, childrenOf, gone, pathWithServers, tempDir } from "./helpers.ts"

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
