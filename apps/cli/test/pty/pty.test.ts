// The pty + screen harness itself, against small bash programs: what a test reads must be what a terminal shows.
import { describe, expect, test } from "bun:test"
import { keyBytes } from "./Keys.ts"
import { descendants, isAlive, peakRssBytes, processTree, rssBytes, treeCpuMs, treePeakRssBytes, treeRssBytes } from "./ProcessTree.ts"
import { spawnPty } from "./Pty.ts"

const bash = (script: string, options: Parameters<typeof spawnPty>[1] = {}) => spawnPty(["bash", "--norc", "--noprofile", "-c", script], options)

describe("screen", () => {
  test("colours are drawn, not shown: the screen is the plain text", async () => {
    await using p = bash(String.raw`printf '\e[31mred\e[0m \e[1;4;38;5;208mbold\e[0m plain\n'; read`)
    await p.waitFor("red bold plain")
    expect(p.screen()).toBe("red bold plain")
    expect(p.output()).toContain("\x1b[31m")
  })

  test("cursor movement places text where the terminal would", async () => {
    await using p = bash(String.raw`printf '\e[5;10Hat 5,10\e[2;3Hat 2,3\e[1Gstart\e[Kx'; read`, { cols: 40, rows: 8 })
    await p.waitFor("startx")
    expect(p.lines()).toEqual(["", "startx", "", "", "         at 5,10", "", "", ""])
    expect(p.cursor()).toEqual({ x: 6, y: 1 })
  })

  test("clearing the screen removes what was there", async () => {
    await using p = bash(String.raw`printf 'old one\nold two\n'; read; printf '\e[2J\e[Hnew'; read`)
    await p.waitFor("old two")
    await p.press("enter")
    await p.waitFor("new")
    expect(p.screen()).toBe("new")
  })

  test("lines scrolled off the screen stay in the scrollback", async () => {
    await using p = bash(`for i in $(seq 1 50); do echo "line $i"; done; read`, { rows: 10 })
    await p.waitFor("line 50")
    expect(p.lines()[0]).toBe("line 42")
    expect(p.screen()).not.toContain("line 41")
    expect(p.scrollback().split("\n").slice(0, 2)).toEqual(["line 1", "line 2"])
  })

  test("resize reaches the program's tty (stty size) and the screen", async () => {
    await using p = bash(`stty size; read; stty size; read`, { cols: 80, rows: 24 })
    await p.waitFor("24 80")
    await p.resize(60, 20)
    expect([p.cols, p.rows]).toEqual([60, 20])
    expect(p.lines()).toHaveLength(20)
    await p.press("enter")
    await p.waitFor("20 60")
  })
})

describe("keys", () => {
  test("named keys arrive as the bytes a terminal sends", async () => {
    // Raw mode: every byte reaches the program as is (no line editing, no signals); od prints them in hex.
    await using p = bash(`stty raw -echo; echo ready; head -c 9 | od -An -tx1; read`)
    await p.waitFor("ready")
    await p.press("up", "tab", "shift-enter", "ctrl-d", "esc", "ctrl-c")
    await p.waitFor(/1b 5b 41 09 1b 0d 04 1b 03/)
  })

  test("ctrl-c interrupts the foreground program as a person's would", async () => {
    await using p = bash(`echo waiting; sleep 30`)
    await p.waitFor("waiting")
    await p.press("ctrl-c")
    expect(await p.waitExit()).toBe(130)
  })

  test("typed text reaches the program", async () => {
    await using p = bash(`read -r line; echo "got <$line>"; read`)
    p.type("hello world")
    await p.press("enter")
    await p.waitFor("got <hello world>")
  })

  test("an unknown key name is an error, not text typed into the program", () => {
    expect(() => keyBytes("entr")).toThrow(/unknown key "entr"/)
    expect(keyBytes("ctrl-a")).toBe("\x01")
    expect(keyBytes("alt-x")).toBe("\x1bx")
  })
})

describe("waiting", () => {
  test("a wait that times out says what it waited for and shows the screen", async () => {
    await using p = bash(`echo something else; read`)
    await p.waitFor("something else")
    const err = await p.waitFor("the prompt", 300).then(
      () => undefined,
      (e: Error) => e
    )
    expect(err?.message).toContain(`timed out after 300 ms waiting for "the prompt"`)
    expect(err?.message).toContain("│something else")
  })

  test("a wait fails as soon as the program exits without showing the text (not at its timeout)", async () => {
    const p = bash(`echo bye; exit 3`)
    const err = await p.waitFor(/never/).then(
      () => undefined,
      (e: Error) => e
    )
    expect(err?.message).toContain("the program exited (code 3) while waiting for /never/")
    expect(err?.message).toContain("│bye")
    await p.close()
  })

  test("a process left holding the pty does not keep a wait from seeing the exit", async () => {
    // the background sleep still holds the pty when bash exits, for longer than a wait's hang guard (Bun ends the pty at
    // the exit; the harness does not rely on it)
    const p = bash(`(sleep 600 & echo "holder $!"); echo bye; exit 4`)
    try {
      const err = await p.waitFor("never").then(
        () => undefined,
        (e: Error) => e
      )
      expect(err?.message).toContain("the program exited (code 4)")
      expect(await p.waitExit()).toBe(4)
    } finally {
      const holder = Number(/holder (\d+)/.exec(p.screen())?.[1])
      if (holder > 0) process.kill(holder, "SIGKILL")
      await p.close()
    }
  })
})

describe("process", () => {
  test("CI markers are removed from the child's environment; TERM is set", async () => {
    await using p = spawnPty(["env"], { env: { PATH: process.env.PATH, CI: "true", CI_JOB_ID: "1", CONTINUOUS_INTEGRATION: "1", KEEP: "me" } })
    await p.waitExit()
    await p.settle()
    const vars = p.scrollback().split("\n")
    expect(vars).toContain("KEEP=me")
    expect(vars).toContain("TERM=xterm-256color")
    expect(vars.filter((v) => /^(CI|CI_JOB_ID|CONTINUOUS_INTEGRATION)=/.test(v))).toEqual([])
  })

  test("the program's stdin, stdout and stderr are the pty", async () => {
    await using p = bash(`[ -t 0 ] && [ -t 1 ] && [ -t 2 ] && echo all-tty; read`)
    await p.waitFor("all-tty")
  })

  test("close kills the program and everything it started; the tree is read from /proc", async () => {
    const p = bash(`sleep 100 & sleep 100 & echo started; wait`)
    await p.waitFor("started")
    expect(processTree(p.pid)[0]).toBe(p.pid)
    const children = descendants(p.pid)
    expect(children).toHaveLength(2)
    expect(treeRssBytes(p.pid)).toBeGreaterThan(1024 * 1024)
    expect(treePeakRssBytes(p.pid)).toBeGreaterThan(1024 * 1024)
    // bash itself sits in `wait`: its peak is at least what it holds now (the children may still be exec'ing sleep)
    expect(peakRssBytes(p.pid)).toBeGreaterThanOrEqual(rssBytes(p.pid))
    expect(treeCpuMs(p.pid)).toBeGreaterThanOrEqual(0)
    expect(children.every(isAlive)).toBe(true)
    await p.close()
    expect(children.filter(isAlive)).toEqual([])
    expect(isAlive(p.pid)).toBe(false)
  })
})
