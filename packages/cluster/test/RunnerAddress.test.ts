import { describe, expect, test } from "bun:test"
import { Result } from "effect"
import { checkTiming, defaultTiming, formatRunnerAddress, parseRunnerAddress } from "../src/index.ts"

describe("a runner's address (--runner HOST:PORT)", () => {
  test.each([
    ["10.0.0.5:7101", "10.0.0.5", 7101],
    ["runner-1.internal:7101", "runner-1.internal", 7101],
    ["localhost:1", "localhost", 1],
    ["[::1]:7101", "::1", 7101],
    ["[fd00::5]:65535", "fd00::5", 65535],
    ["  10.0.0.5:7101 ", "10.0.0.5", 7101],
    ["my_host:7101", "my_host", 7101],
    ["runner.example.com.:7101", "runner.example.com.", 7101],
    ["[fe80::1%eth0]:7101", "fe80::1%eth0", 7101]
  ])("%p is host %p, port %p", (text, host, port) => {
    const parsed = parseRunnerAddress(text)
    expect(Result.isSuccess(parsed)).toBe(true)
    if (Result.isSuccess(parsed)) {
      expect({ host: parsed.success.host, port: parsed.success.port }).toEqual({ host, port })
      expect(parseRunnerAddress(formatRunnerAddress(parsed.success))).toEqual(parsed)
    }
  })

  test.each([
    ["10.0.0.5", "not a runner address"],
    ["10.0.0.5:", "not a runner address"],
    [":7101", "not a runner address"],
    ["::1:7101", "not a runner address"],
    ["10.0.0.5:0", "from 1 to 65535"],
    ["10.0.0.5:65536", "from 1 to 65535"],
    ["10.0.0.5:7101x", "not a runner address"],
    ["http://10.0.0.5:7101", "not a runner address"],
    ["host name:7101", "not a runner address"],
    [".:7101", "not a host name"],
    ["-x:7101", "not a host name"],
    ["host-:7101", "not a host name"],
    ["a..b:7101", "not a host name"],
    ["1.2.3:7101", "not a host name"],
    ["123:7101", "not a host name"],
    ["999.999.999.999:7101", "not a host name"],
    [`${"a".repeat(63)}.${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(63)}:7101`, "not a host name"],
    ["[:]:7101", "in brackets"],
    ["[::::]:7101", "in brackets"],
    ["[10.0.0.5]:7101", "in brackets"],
    ["0.0.0.0:7101", "unspecified"],
    ["[::]:7101", "unspecified"],
    ["10.0.0.5:007101", "not a runner address"],
    ["", "not a runner address"]
  ])("%p is refused, saying what to write", (text, says) => {
    const parsed = parseRunnerAddress(text)
    expect(Result.isFailure(parsed)).toBe(true)
    if (Result.isFailure(parsed)) {
      expect(parsed.failure).toContain(says)
      expect(parsed.failure).toContain("HOST:PORT")
    }
  })
})

describe("the cluster's timings", () => {
  test("the defaults pass their own check", () => expect(checkTiming(defaultTiming)).toBeUndefined())
  test.each([
    [{ ...defaultTiming, healthCheckMs: 0 }, "healthCheckMs must be a positive"],
    [{ ...defaultTiming, pollMs: Number.NaN }, "pollMs must be a positive"],
    [{ ...defaultTiming, lockRefreshMs: 5_000, lockExpiryMs: 12_000 }, "at least 3 times lockRefreshMs"]
  ])("a timing that cannot work is refused: %#", (timing, says) => expect(checkTiming(timing)).toContain(says))
})
