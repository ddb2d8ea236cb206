import { expect, test } from "bun:test"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { DataDir } from "@reins/domain"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { RetentionLive, spillDirectory, spillFolder, spillPath, sweep, TruncateSettings, defaultSettings } from "../src/index.ts"

const DAY = 86_400_000

test("spill files 10 days old are removed at start and by the hourly sweep; 3 days old are kept", async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "reins-ret-"))
  const dir = spillDirectory(dataDir)
  fs.mkdirSync(dir, { recursive: true })
  const now = Date.UTC(2026, 10, 21, 12)
  const file = (name: string, ageDays: number) => {
    const p = path.join(dir, name)
    fs.writeFileSync(p, name)
    const t = new Date(now - ageDays * DAY)
    fs.utimesSync(p, t, t)
    return p
  }
  const old = file("ses_a_call_1.txt", 10)
  const recent = file("ses_b_call_2.txt", 3)
  const sixDays = file("ses_c_call_3.txt", 6.9)

  await Effect.runPromise(
    Effect.gen(function* () {
      yield* TestClock.setTime(now)
      yield* Effect.scoped(
        Effect.gen(function* () {
          yield* Layer.build(RetentionLive)
          yield* TestClock.adjust("1 millis")
          expect(fs.existsSync(old)).toBe(false)
          expect(fs.existsSync(recent)).toBe(true)
          expect(fs.existsSync(sixDays)).toBe(true)
          // two hours later the 6.9-day file has passed 7 days and the next sweep takes it
          yield* TestClock.adjust("3 hours")
          expect(fs.existsSync(sixDays)).toBe(false)
          expect(fs.existsSync(recent)).toBe(true)
        })
      )
    }).pipe(Effect.provide(Layer.mergeAll(TestClock.layer(), Layer.succeed(DataDir, dataDir), Layer.succeed(TruncateSettings, defaultSettings))))
  )
})

test("per-session folders: old files and folders left empty go; a folder still written to stays with its new file", async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "reins-ret-"))
  const dir = spillDirectory(dataDir)
  const now = Date.UTC(2026, 10, 21, 12)
  const age = (p: string, days: number) => {
    const t = new Date(now - days * DAY)
    fs.utimesSync(p, t, t)
  }
  const put = (session: string, call: string, days: number) => {
    const file = spillPath(dir, session, call)
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(file, call)
    age(file, days)
    return file
  }
  const gone = put("ses_old", "c1", 10)
  const alsoGone = put("ses_old", "c2", 9)
  age(spillFolder(dir, "ses_old"), 9)
  const stale = put("ses_live", "c1", 10)
  const fresh = put("ses_live", "c2", 1)
  age(spillFolder(dir, "ses_live"), 1)
  const flat = path.join(dir, "ses_x_call_1.txt") // the older flat layout
  fs.writeFileSync(flat, "x")
  age(flat, 10)
  expect(sweep(dir, 7 * DAY, now)).toBe(4)
  for (const file of [gone, alsoGone, stale, flat]) expect(fs.existsSync(file)).toBe(false)
  expect(fs.existsSync(spillFolder(dir, "ses_old"))).toBe(false)
  expect(fs.existsSync(fresh)).toBe(true)
  expect(spillPath(dir, "ses_live", "c2")).toBe(path.join(dir, "ses_live", "c2.txt"))
  // a session id can never name the spill directory itself or its parent
  expect(spillFolder(dir, "..")).toBe(path.join(dir, "___"))
})
