import { expect, test } from "bun:test"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { DataDir } from "@reins/domain"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { RetentionLive, spillDirectory, TruncateSettings, defaultSettings } from "../src/index.ts"

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
    }).pipe(
      Effect.provide(Layer.mergeAll(TestClock.layer(), Layer.succeed(DataDir, dataDir), Layer.succeed(TruncateSettings, defaultSettings)))
    )
  )
})
