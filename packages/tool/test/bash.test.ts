import { describe, expect, test } from "bun:test"
import { Effect, Fiber } from "effect"
import { builtinReducers } from "@reins/reduce"
import { waitFor } from "@reins/testkit"
import { Sink } from "@reins/truncate"
import { execSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { ARGV_MAX, bash, onArgv, runCommand } from "../src/builtin/bash.ts"
import { runTool, tempDir } from "./helpers.ts"

/** The `sleep <n>` processes running (a zombie shows as [sleep] and is not one). */
const sleeping = (n: string) =>
  execSync("ps -eo args", { encoding: "utf8" })
    .split("\n")
    .filter((l) => l.trim() === `sleep ${n}`)

describe("bash tool", () => {
  test("runs a real command in the working directory and reports the exit code", async () => {
    const cwd = tempDir()
    const r = await runTool(bash, { command: "pwd; echo err >&2; exit 3" }, { cwd })
    expect(r._tag).toBe("Success")
    expect(r.success.output).toContain(cwd)
    expect(r.success.output).toContain("err")
    expect(r.success.output).toContain("(exit code 3)")
    expect(r.success.metadata.exitCode).toBe(3)
  })
  test("times out and kills the command", async () => {
    // wall time: the timeout is the command's own timer, here against a command that would take an hour
    const r = await runTool(bash, { command: "sleep 3600", timeout: 200 }, { cwd: tempDir() })
    expect(r.success.output).toContain("timed out after 200 ms")
    expect(r.success.metadata.timedOut).toBe(true)
  })
  test("bad arguments give a message for the model", async () => {
    const r = await runTool(bash, { command: 5, timeout: -1 }, { cwd: tempDir() })
    expect(r._tag).toBe("Failure")
    expect(r.failure.reason).toBe("invalid-arguments")
    expect(r.failure.message).toContain("The bash tool was called with invalid arguments: command:")
    expect(r.failure.message).toContain("timeout:")
    expect(r.failure.message).toContain("Please rewrite the input so it satisfies the schema.")
  })
  test("a deny rule stops the command before it runs", async () => {
    const cwd = tempDir()
    const r = await runTool(bash, { command: "touch marker" }, { cwd, rules: [{ permission: "bash", pattern: "touch *", action: "deny" }] })
    expect(r.failure.reason).toBe("permission")
    expect(Bun.file(`${cwd}/marker`).size).toBe(0)
  })
  test("a command with a NUL byte is refused before it runs: bash would drop the byte (r\\0m → rm) past a deny rule, or cut the command", async () => {
    const rules = [
      { permission: "bash", pattern: "*", action: "allow" as const },
      { permission: "bash", pattern: "rm *", action: "deny" as const }
    ]
    const pad = `: ${"x".repeat(20_000)}\n`
    for (const command of ["r\u0000m -f victim", `${pad}r\u0000m -f victim`, "echo ok\u0000; rm -f victim", `${pad}echo ok; r\u0000m -f victim`]) {
      const cwd = tempDir()
      fs.writeFileSync(path.join(cwd, "victim"), "v")
      const r = await runTool(bash, { command }, { cwd, rules })
      expect(r._tag).toBe("Failure")
      // (a visible rm is denied by its rule first)
      expect(r.failure.message).toMatch(/contains a NUL byte|rules deny bash for "rm -f victim"/)
      expect(fs.existsSync(path.join(cwd, "victim"))).toBe(true)
    }
    const bare = await runTool(bash, { command: "echo a\u0000b" }, { cwd: tempDir(), rules })
    expect(bare.failure.message).toBe(
      "The command contains a NUL byte (\\0), which a shell command cannot hold; nothing was run. Remove it (to produce one, write printf '\\0')."
    )
    // printf makes one without the command holding it
    const ok = await runTool(bash, { command: "printf 'a\\0b' | wc -c" }, { cwd: tempDir(), rules })
    expect(ok.success.output).toContain("3")
  })
  test("stdout and stderr interleave in the order they were written", async () => {
    const r = await runTool(bash, { command: "for i in 1 2 3; do echo out$i; echo err$i >&2; done" }, { cwd: tempDir() })
    expect(r.success.output).toBe("out1\nerr1\nout2\nerr2\nout3\nerr3\n\n(exit code 0)")
  })
  test("long unknown output: head and tail, the rest spilled, the exit code kept", async () => {
    const r = await runTool(bash, { command: "seq 1 5000; exit 4" }, { cwd: tempDir() })
    const out: string = r.success.output
    expect(r.success.truncated).toBe(true)
    expect(out.startsWith("[reduced by head_tail:")).toBe(true)
    expect(out).toContain("\n1\n2\n")
    expect(out).toContain("\n4999\n5000\n")
    expect(out).toMatch(/…\d+ lines truncated…/)
    expect(out.endsWith("(exit code 4)")).toBe(true)
    expect(r.success.metadata.reduction).toMatchObject({ reducer: "head_tail", originalBytes: 23_893, reasons: ["middle_dropped"] })
    expect(r.success.metadata.reduction.compactedBytes).toBeLessThan(23_893)
    expect(await Bun.file(r.success.outputPath).text()).toBe(execSync("seq 1 5000", { encoding: "utf8" }))
  })
  test("with reducers off in config, bash keeps the tail", async () => {
    const r = await runTool(bash, { command: "seq 1 5000" }, { cwd: tempDir(), settings: { reducers: false, maxLines: 100 } })
    const out: string = r.success.output
    expect(out).toContain("\n5000\n")
    expect(out).not.toContain("\n17\n")
    expect(out).toContain("the last part is shown")
    expect(r.success.metadata.reduction).toBeUndefined()
  })
  test("200,000 lines: the model sees at most the limits, the spill file holds every line", async () => {
    const r = await runTool(bash, { command: "seq 1 200000" }, { cwd: tempDir() })
    const out: string = r.success.output
    expect(Buffer.byteLength(out)).toBeLessThanOrEqual(51_200)
    expect(out.split("\n").length).toBeLessThanOrEqual(2_000)
    expect(out).toContain(r.success.outputPath)
    expect(out).toContain("200000 lines")
    expect(out).toContain("Use the read tool with offset/limit, or grep, on that file")
    expect(out).toContain("\n199999\n200000\n")
    const spilled = await Bun.file(r.success.outputPath).text()
    expect(spilled).toBe(execSync("seq 1 200000", { encoding: "utf8", maxBuffer: 1 << 24 }))
  })
  test("a real failing bun test run is reduced by bun_test: every failure kept, passes counted", async () => {
    const cwd = tempDir()
    fs.cpSync(path.resolve(import.meta.dir, "../../reduce/fixtures/tests/projects/bun"), cwd, { recursive: true })
    const manifest = JSON.parse(fs.readFileSync(path.resolve(import.meta.dir, "../../reduce/fixtures/tests/bun-test-failing.json"), "utf8"))
    const r = await runTool(bash, { command: `NO_COLOR=1 ${manifest.command}`, timeout: 60_000 }, { cwd })
    const out: string = r.success.output
    expect(r.success.metadata.exitCode).toBe(1)
    expect(r.success.metadata.reduction).toMatchObject({ reducer: "bun_test" })
    expect(r.success.metadata.reduction.reasons).toContain("passing_tests_counted")
    expect(out.startsWith("[reduced by bun_test:")).toBe(true)
    for (const name of manifest.failures) expect(out).toContain(name)
    for (const location of manifest.locations) expect(out).toContain(location)
    expect(out).toMatch(/\d+ passing tests not shown/)
    expect(out.endsWith("(exit code 1)")).toBe(true)
    // the unreduced run is on disk for the model to read
    expect(fs.readFileSync(r.success.outputPath, "utf8")).toContain("(pass)")
  })
  test("an output too large to read back gets a head+tail view from the stream, with evidence", async () => {
    const total = Number(execSync("seq 1 3000000 | wc -c", { encoding: "utf8" }).trim())
    const r = await runTool(bash, { command: "seq 1 3000000", full_output: true }, { cwd: tempDir() })
    const out: string = r.success.output
    expect(r.success.metadata.reduction).toMatchObject({ reducer: "head_tail", originalBytes: total, reasons: ["middle_dropped"] })
    expect(out).toContain(`[full_output was not honoured: ${total} bytes`)
    expect(out).toContain("\n1\n2\n3\n")
    expect(out).toContain("\n2999999\n3000000\n")
    expect(Buffer.byteLength(out)).toBeLessThanOrEqual(51_200)
    expect(fs.statSync(r.success.outputPath).size).toBe(total)
  })
  test("full_output returns everything, unreduced and uncut", async () => {
    const r = await runTool(bash, { command: "seq 1 5000", full_output: true }, { cwd: tempDir() })
    const out: string = r.success.output
    expect(out).toBe(`${execSync("seq 1 5000", { encoding: "utf8" })}\n(exit code 0)`)
    expect(r.success.truncated).toBe(false)
    expect(r.success.metadata).toMatchObject({ fullOutput: true })
    expect(r.success.metadata.reduction).toBeUndefined()
  })
  test("a user reducer registered ahead of the built-ins wins", async () => {
    const mine = {
      name: "count_lines",
      matches: (input: { command?: string }) => input.command?.startsWith("seq") ?? false,
      reduce: (input: { text: string }) => ({ text: `${input.text.split("\n").length - 1} numbers`, reasons: ["counted"] })
    }
    const r = await runTool(bash, { command: "seq 1 9000" }, { cwd: tempDir(), reducers: [mine, ...builtinReducers] })
    expect(r.success.output.startsWith("[reduced by count_lines:")).toBe(true)
    expect(r.success.output).toContain("9000 numbers")
    expect(r.success.metadata.reduction).toMatchObject({ reducer: "count_lines", reasons: ["counted"] })
  })
  test("a full disk while spilling is a clear tool error that still names the exit code", async () => {
    const dataDir = tempDir("reins-data-")
    fs.mkdirSync(path.join(dataDir, "tool-output", "ses_test"), { recursive: true })
    fs.symlinkSync("/dev/full", path.join(dataDir, "tool-output", "ses_test", "call_test.txt"))
    const r = await runTool(bash, { command: "seq 1 300000" }, { cwd: tempDir(), dataDir })
    expect(r._tag).toBe("Failure")
    expect(r.failure.message).toContain("The disk is full")
    expect(r.failure.message).toContain("(exit code 0)")
  })
  test("interrupting kills the process group, children included", async () => {
    const n = `3${Math.floor(Math.random() * 1000)}.5`
    const fiber = Effect.runFork(runCommand(`sleep ${n} & sleep ${n}; echo done`, tempDir(), 60_000, new Sink(path.join(tempDir(), "x"))))
    await waitFor(() => sleeping(n).length === 2, "both sleeps to start")
    await Effect.runPromise(Fiber.interrupt(fiber))
    expect(sleeping(n)).toEqual([])
  })
  test("interrupting returns once the command is gone: its shell collected, nothing of its group alive", async () => {
    const n = `3${Math.floor(Math.random() * 1000)}.25`
    let pid: number | undefined
    const fiber = Effect.runFork(runCommand(`sleep ${n} & sleep ${n}; echo done`, tempDir(), 60_000, new Sink(path.join(tempDir(), "x")), (p) => (pid = p)))
    await waitFor(() => sleeping(n).length === 2, "both sleeps to start")
    await Effect.runPromise(Fiber.interrupt(fiber))
    // at once: the shell is not even a zombie, and no process of its group runs
    expect(fs.existsSync(`/proc/${pid}`)).toBe(false)
    const alive = execSync("ps -eo pgid=,stat=", { encoding: "utf8" })
      .split("\n")
      .map((l) => l.trim().split(/\s+/))
      .filter(([g, stat]) => g === String(pid) && !stat!.startsWith("Z"))
    expect(alive).toEqual([])
  })
  test("a 300 KiB command runs (it is passed on stdin, not as one argument: no E2BIG)", async () => {
    const cwd = tempDir()
    const words = Array.from({ length: 30_000 }, (_, i) => `w${i}`).join(" ")
    const command = `cat <<'EOF' > big.txt\n${words}\nEOF\necho "$(wc -w < big.txt) words"\nexit 5`
    expect(command.length).toBeGreaterThan((300 * 1024) / 2)
    const padded = `${command}\n${"# padding\n".repeat(16_000)}`
    expect(padded.length).toBeGreaterThan(300 * 1024)
    const r = await runTool(bash, { command: `${padded}` }, { cwd })
    expect(r._tag).toBe("Success")
    expect(r.success.output).toBe("30000 words\n\n(exit code 5)")
    expect(fs.readFileSync(path.join(cwd, "big.txt"), "utf8")).toBe(`${words}\n`)
  })
  test("a 300 KiB single echo prints exactly its argument", async () => {
    const text = "x".repeat(300 * 1024)
    const dir = tempDir()
    const sink = new Sink(path.join(dir, "out.txt"))
    const outcome = await Effect.runPromise(runCommand(`echo ${text}`, dir, 60_000, sink))
    const capture = sink.close()
    expect(outcome.exitCode).toBe(0)
    expect(capture.totalBytes).toBe(text.length + 1)
  })
  test("with an empty PATH the command is still read and run (no program is looked up to read it)", async () => {
    const saved = process.env.PATH
    process.env.PATH = ""
    try {
      const sink = new Sink(path.join(tempDir(), "out.txt"))
      const outcome = await Effect.runPromise(runCommand('echo "[$PATH]"; exit 4', tempDir(), 60_000, sink))
      expect(sink.close().text).toBe("[]\n")
      expect(outcome.exitCode).toBe(4)
    } finally {
      process.env.PATH = saved
    }
  })
  test("the user's ~/.bashrc is never read, even when bash would take its socket stdin for sshd's (SHLVL unset)", async () => {
    const saved = { HOME: process.env.HOME, SHLVL: process.env.SHLVL }
    const home = tempDir()
    fs.writeFileSync(path.join(home, ".bashrc"), "echo RC-SOURCED\n")
    fs.writeFileSync(path.join(home, ".bash_profile"), "echo PROFILE-SOURCED\n")
    process.env.HOME = home
    delete process.env.SHLVL
    try {
      const sink = new Sink(path.join(tempDir(), "out.txt"))
      const outcome = await Effect.runPromise(runCommand("echo ran", tempDir(), 60_000, sink))
      expect(sink.close().text).toBe("ran\n")
      expect(outcome.exitCode).toBe(0)
    } finally {
      process.env.HOME = saved.HOME
      if (saved.SHLVL !== undefined) process.env.SHLVL = saved.SHLVL
    }
  })
  test("a long command (on stdin, read with cat) behaves as a short one (an argument)", async () => {
    const pad = `: ${"x".repeat(ARGV_MAX)}`
    expect(onArgv(pad)).toBe(false)
    for (const [command, expected, code] of [
      [`${pad}; cat; echo "rc=$? [$#]"; declare -p __reins_command 2>/dev/null || echo none`, "rc=0 [0]\nnone\n", 0],
      [`${pad}; echo ok; if then`, "line 2: syntax error near unexpected token `then'", 2]
    ] as const) {
      const sink = new Sink(path.join(tempDir(), "out.txt"))
      const outcome = await Effect.runPromise(runCommand(command, tempDir(), 60_000, sink))
      expect(sink.close().text).toContain(expected)
      expect(outcome.exitCode).toBe(code)
    }
  })
  // what passing the command as an argument, or on stdin, must not change
  const same: ReadonlyArray<readonly [string, string, string]> = [
    ["the command's own stdin is empty", "cat; echo rc=$?", "rc=0\n"],
    ["no helper variable is left", "declare -p __reins_command 2>/dev/null || echo none", "none\n"],
    ["cwd is the working directory", 'basename "$PWD"', "<cwd>\n"],
    ["stderr joins stdout in order", "echo a; echo b >&2; echo c", "a\nb\nc\n"],
    ["a syntax error is reported with exit code 2", "echo ok; if then", "<syntax>"],
    ["exit ends the command with its code", "echo before; exit 7; echo after", "before\n"],
    ["trailing newlines and quotes are kept", "printf '%s\\n' \"it's\" 'a \"b\"'\n\n\n", 'it\'s\na "b"\n'],
    ["a heredoc at the very end without a newline", "cat <<X\nhello\nX", "hello\n"],
    ["return outside a function fails as with -c", "return 3; echo after $?", "<return>"],
    ["positional parameters are empty", 'echo "[$#][$*]"', "[0][]\n"],
    // the command is not the shell's last `-c` command (which bash execs in its place): the shell reports the signal
    ["a command killed by a signal ends with 128 + its number", "sh -c 'kill -TERM $$'", "<signal>"]
  ]
  // a long command: padded past ARGV_MAX with trailing comment lines (the command's lines keep their numbers)
  const long = (command: string) => `${command}\n${"#".repeat(ARGV_MAX)}\n`
  for (const [how, name, command, expected] of same.flatMap(([name, command, expected]) => [
    ["as an argument", name, command, expected] as const,
    ["on stdin", name, long(command), expected] as const
  ])) {
    test(`command ${how}: ${name}`, async () => {
      expect(onArgv(command)).toBe(how === "as an argument")
      const dir = tempDir()
      const sink = new Sink(path.join(tempDir(), "out.txt"))
      const outcome = await Effect.runPromise(runCommand(command, dir, 60_000, sink))
      const text = sink.close().text ?? ""
      if (expected === "<syntax>") {
        expect(outcome.exitCode).toBe(2)
        // the offending line alone is quoted, with its line number as before (the `-c` text began with `exec 2>&1`)
        expect(text).toContain("line 2: syntax error near unexpected token `then'")
        expect(text).toContain("line 2: `echo ok; if then'")
      } else if (expected === "<signal>") {
        expect(outcome).toEqual({ exitCode: 143, signal: null, timedOut: false })
        expect(text).toContain("Terminated")
      } else if (expected === "<return>") {
        expect(text).toContain("return")
        expect(text).toContain("line 2: return: can only `return'")
        expect(text).toContain("after 2")
      } else {
        expect(text).toBe(expected.replace("<cwd>", path.basename(dir)))
        expect(outcome.exitCode).toBe(name.startsWith("exit") ? 7 : 0)
      }
    })
  }
})
