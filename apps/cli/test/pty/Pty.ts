// A program under a real pseudo-terminal (Bun.spawn's `terminal`), its output fed to a headless xterm so a test reads
// the screen a person would see, as plain text. No fallback: a machine that cannot give a pty fails the test.
import { HANG_MS, waitFor as waitForProbe } from "@reins/testkit"
import { Terminal } from "@xterm/headless"
import { keyBytes } from "./Keys.ts"
import { isAlive, processTree } from "./ProcessTree.ts"

export interface PtyOptions {
  readonly cols?: number
  readonly rows?: number
  readonly cwd?: string
  /** The child's environment (default: this process's). CI markers are always removed: Ink renders nothing live under CI. */
  readonly env?: Record<string, string | undefined>
  /** Lines xterm keeps above the screen (default 5000), read with `.scrollback()`. */
  readonly scrollback?: number
}

export interface Pty {
  readonly pid: number
  /** The exit code (128 + signal number when killed by a signal). */
  readonly exited: Promise<number>
  readonly cols: number
  readonly rows: number
  /** The visible screen: one string per row, trailing spaces trimmed, trailing blank rows dropped, joined by "\n". */
  screen(): string
  /** The visible rows, every one of them, trailing spaces trimmed. */
  lines(): Array<string>
  /** Everything in xterm's buffer, scrolled-off lines first, then the screen, trailing blank rows dropped. */
  scrollback(): string
  /** Where the cursor is on the screen, 0-based. */
  cursor(): { readonly x: number; readonly y: number }
  /** All bytes the program wrote, decoded as UTF-8 (escape sequences included). */
  output(): string
  /**
   * Resolves once the screen shows `match` (a substring, or a RegExp tested against `screen()`); rejects after
   * `timeoutMs` (a hang guard, HANG_MS by default), or when the program exits without showing it, with the screen in
   * the message.
   */
  waitFor(match: string | RegExp, timeoutMs?: number): Promise<void>
  /** Resolves once `check(screen)` holds, as `waitFor`; `what` names it in the failure message. */
  waitUntil(check: (screen: string) => boolean, what: string, timeoutMs?: number): Promise<void>
  /** Resolves once every byte received so far has been drawn on the screen. */
  settle(): Promise<void>
  /** Sends named keys (`enter`, `ctrl-c`, `esc`, `up`, `tab`, `shift-enter`, …), each as its own write, `gapMs` apart. */
  press(...keys: Array<string>): Promise<void>
  /** Types text as one write (a program sees it as typed quickly or pasted). */
  type(text: string): void
  /** Resizes the pty (the program gets SIGWINCH) and the screen model. */
  resize(cols: number, rows: number): Promise<void>
  /** Calls `listener` each time a chunk of output has been drawn; returns the unsubscribe. */
  onDrawn(listener: () => void): () => void
  /** Waits for the exit and for all it printed to be drawn, rejecting after `timeoutMs` with the screen in the message. */
  waitExit(timeoutMs?: number): Promise<number>
  kill(signal?: NodeJS.Signals | number): void
  /** Kills the program and everything below it (SIGKILL) if still running, and frees the terminal. */
  close(): Promise<void>
  [Symbol.asyncDispose](): Promise<void>
}

/**
 * Pause between keys of one `press`, so a program reads each as its own keypress: wall time, as a person's typing has
 * (the program's reads are not observable from here).
 */
const gapMs = 30

/** is-in-ci (used by Ink) treats CI, CONTINUOUS_INTEGRATION and any CI_* variable as "running in CI". */
const withoutCi = (env: Record<string, string | undefined>): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined || k === "CI" || k === "CONTINUOUS_INTEGRATION" || k.startsWith("CI_")) continue
    out[k] = v
  }
  out.TERM ??= "xterm-256color"
  return out
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

/** Starts `cmd` under a `cols`×`rows` pty (default 100×30). */
export const spawnPty = (cmd: ReadonlyArray<string>, options: PtyOptions = {}): Pty => {
  let cols = options.cols ?? 100
  let rows = options.rows ?? 30
  const term = new Terminal({ cols, rows, scrollback: options.scrollback ?? 5000, allowProposedApi: true })
  const decoder = new TextDecoder()
  let raw = ""
  let pending = 0
  let eof = false
  const listeners = new Set<() => void>()
  const notify = () => {
    for (const l of [...listeners]) l()
  }
  let onEof: () => void = () => {}
  const eofSeen = new Promise<void>((resolve) => (onEof = resolve))

  const proc = Bun.spawn([...cmd], {
    cwd: options.cwd,
    env: withoutCi(options.env ?? process.env),
    terminal: {
      cols,
      rows,
      data: (_t, bytes) => {
        raw += decoder.decode(bytes, { stream: true })
        pending++
        term.write(bytes, () => {
          pending--
          notify()
        })
      },
      exit: () => {
        eof = true
        onEof()
        notify()
      }
    }
  })
  const pty = proc.terminal
  if (!pty) throw new Error(`Bun.spawn gave ${cmd.join(" ")} no pty: this test needs a real pseudo-terminal`)
  // Answers to the program's queries (cursor position, device attributes) go back as a terminal would send them.
  term.onData((d) => {
    if (!pty.closed) pty.write(d)
  })

  let exitCode: number | undefined
  // A process the program left behind may hold the pty open: 300 ms after the exit, EOF is not waited for any more
  // (wall time: no event says that a process outside the program's tree still holds it).
  let exitLongAgo = false
  const exited = proc.exited.then((code) => {
    exitCode = code
    notify()
    setTimeout(() => {
      exitLongAgo = true
      notify()
    }, 300).unref()
    return code
  })
  // The program has exited, the pty reached EOF (or the exit is long enough ago), and all output is drawn.
  const finished = () => exitCode !== undefined && (eof || exitLongAgo) && pending === 0

  const lines = () => {
    const buf = term.buffer.active
    return Array.from({ length: rows }, (_, i) => (buf.getLine(buf.baseY + i)?.translateToString(true) ?? "").trimEnd())
  }
  const dropBlankTail = (ls: Array<string>) => {
    let end = ls.length
    while (end > 0 && ls[end - 1] === "") end--
    return ls.slice(0, end).join("\n")
  }
  const screen = () => dropBlankTail(lines())
  const frame = (what: string, why: string) =>
    `${why} waiting for ${what} in \`${cmd.join(" ")}\` (${cols}x${rows}); the screen:\n` +
    `┌${"─".repeat(cols)}┐\n${lines()
      .map((l) => `│${l.padEnd(cols)}│`)
      .join("\n")}\n└${"─".repeat(cols)}┘`

  const waitUntil = (check: (s: string) => boolean, what: string, timeoutMs = HANG_MS) =>
    new Promise<void>((resolve, reject) => {
      const stack = new Error().stack?.split("\n").slice(2).join("\n") ?? ""
      const done = (err?: string) => {
        clearTimeout(timer)
        listeners.delete(test)
        if (err === undefined) return resolve()
        const e = new Error(err)
        e.stack = `Error: ${err}\n${stack}`
        reject(e)
      }
      const test = () => {
        if (check(screen())) return done()
        if (finished()) done(frame(what, `the program exited (code ${exitCode}) while`))
      }
      const timer = setTimeout(() => done(frame(what, `timed out after ${timeoutMs} ms`)), timeoutMs)
      listeners.add(test)
      test()
    })

  const waitFor = (match: string | RegExp, timeoutMs = HANG_MS) =>
    waitUntil(
      (s) => (typeof match === "string" ? s.includes(match) : match.test(s)),
      typeof match === "string" ? JSON.stringify(match) : String(match),
      timeoutMs
    )

  const settle = () => new Promise<void>((resolve) => term.write("", () => resolve()))

  const write = (bytes: string) => {
    if (pty.closed) throw new Error(`cannot send ${JSON.stringify(bytes)}: the pty of \`${cmd.join(" ")}\` is closed (exit code ${exitCode})`)
    pty.write(bytes)
  }

  const close = async () => {
    if (exitCode === undefined) {
      const tree = processTree(proc.pid)
      for (const p of tree.reverse()) {
        try {
          process.kill(p, "SIGKILL")
        } catch {
          // already gone
        }
      }
      await exited
      await waitForProbe(() => !tree.some(isAlive), `the processes of \`${cmd.join(" ")}\` to be gone after SIGKILL`)
    }
    // the pty's EOF, unless a process outside the tree holds it: then it is closed anyway (a bound, not an expectation)
    await Promise.race([eofSeen, sleep(200)])
    if (!pty.closed) pty.close()
    term.dispose()
  }

  return {
    pid: proc.pid,
    exited,
    get cols() {
      return cols
    },
    get rows() {
      return rows
    },
    screen,
    lines,
    scrollback: () => {
      const buf = term.buffer.active
      return dropBlankTail(Array.from({ length: buf.length }, (_, i) => (buf.getLine(i)?.translateToString(true) ?? "").trimEnd()))
    },
    cursor: () => ({ x: term.buffer.active.cursorX, y: term.buffer.active.cursorY }),
    output: () => raw,
    waitFor,
    waitUntil,
    settle,
    press: async (...keys) => {
      const bytes = keys.map(keyBytes)
      for (const [i, b] of bytes.entries()) {
        if (i > 0) await sleep(gapMs)
        write(b)
      }
    },
    type: write,
    resize: async (c, r) => {
      cols = c
      rows = r
      pty.resize(c, r)
      term.resize(c, r)
      await settle()
    },
    onDrawn: (listener) => {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    waitExit: (timeoutMs = HANG_MS) =>
      new Promise<number>((resolve, reject) => {
        const done = (settle: () => void) => {
          clearTimeout(timer)
          listeners.delete(look)
          settle()
        }
        // the exit, then everything it printed drawn (the pty's EOF, and xterm's writes done): looked at on each change
        const look = () => {
          if (finished()) done(() => resolve(exitCode!))
        }
        const timer = setTimeout(() => done(() => reject(new Error(frame("the exit", `timed out after ${timeoutMs} ms`)))), timeoutMs)
        listeners.add(look)
        look()
      }),
    kill: (signal) => proc.kill(signal),
    close,
    [Symbol.asyncDispose]: close
  }
}
