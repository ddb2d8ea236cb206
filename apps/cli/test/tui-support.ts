// Helpers of the interactive-session tests: start `reins` under a real pty in a scripted project, and
// turn a screen into a stable plain-text snapshot.
import { expect } from "bun:test"
import * as fs from "node:fs"
import * as path from "node:path"
import { descendants, spawnPty, type Pty } from "./pty/index.ts"
import { BIN, type Project } from "./support.ts"

/** What the prompt shows when it waits for input. */
export const READY = "Enter send"

/** `reins <args>` under a 100×30 pty in the project, waiting until its prompt is ready. */
export const openTui = async (p: Project, args: ReadonlyArray<string> = [], size = { cols: 100, rows: 30 }): Promise<Pty> => {
  const pty = spawnPty([BIN, ...args], { cwd: p.cwd, env: { ...p.env, TERM: "xterm-256color" }, ...size })
  await pty.waitFor(READY)
  return pty
}

/**
 * Waits for the turn to be over and its text on screen in one frame: the prompt ready again and every
 * text shown. Waiting for a text and then for the prompt can see two different frames — the answer
 * printed above the live area and the ready prompt arrive in separate writes — and a snapshot taken
 * between them lacks the answer.
 */
export const settled = (pty: Pty, ...texts: ReadonlyArray<string>) =>
  pty.waitUntil(
    (s) => s.includes(READY) && texts.every((t) => s.includes(t)),
    `the prompt ready with ${texts.map((t) => JSON.stringify(t)).join(", ")} on screen`
  )

/** Types a line and presses Enter (separate writes, as a person would). */
export const send = async (pty: Pty, text: string) => {
  pty.type(text)
  await pty.settle()
  await pty.press("enter")
}

/**
 * The screen with what changes from run to run replaced: the temp directories, session and message
 * ids, clock times and elapsed seconds, spinner frames, and the footer's input token counts (they
 * follow the size of the system prompt and tool descriptions, which are not what a screen shows).
 */
export const normalise = (screen: string, p: Project) => {
  // ids and dates keep their width, so boxes stay aligned; the footer's gap before the directory (which
  // depends on the temp dir's length) is one wide
  return screen
    .replaceAll(p.cwd, "<cwd>")
    .replaceAll(p.dataDir, "<data>")
    .replace(/ {2,}<cwd>/g, "    <cwd>")
    .replace(/\b(ses|msg|prt|per|call)_([A-Za-z0-9]+)/g, (_, kind: string, id: string) => `${kind}_${"#".repeat(id.length)}`)
    .replace(/\b\d{4}-\d{2}-\d{2} \d{2}:\d{2}\b/g, "####-##-## ##:##")
    .replace(/\((master|main)\)/g, "(branch)")
    .replace(/\b\d+(\.\d+)?(ms|s)\b/g, "<t>")
    .replace(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/g, "*")
    .replace(/\bcontext [\d.]+k?\/([\d.]+k?) \(\d+%\)/g, "context <n>/$1 (<p>%)")
    .replace(/\bsession [\d.]+k? in\b/g, "session <n> in")
    .split("\n")
    .map((l) => l.trimEnd())
    .join("\n")
}

/** Compares a normalised screen with `__screens__/<name>.txt`, writing it the first time (or with UPDATE_SCREENS=1). */
export const expectScreen = (name: string, screen: string) => {
  const file = path.join(import.meta.dir, "__screens__", `${name}.txt`)
  if (!fs.existsSync(file) || process.env.UPDATE_SCREENS === "1") {
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(file, `${screen}\n`)
    return
  }
  expect(`${screen}\n`).toBe(fs.readFileSync(file, "utf8"))
}

/** The processes below `pid` whose command line contains `needle`. */
export const descendantsRunning = (pid: number, needle: string): Array<number> =>
  descendants(pid).filter((d) => {
    const file = `/proc/${d}/cmdline`
    const cmd = fs.existsSync(file) ? fs.readFileSync(file, "utf8").replaceAll("\0", " ") : ""
    return cmd.includes(needle)
  })

/** A process's /proc stat line (pid, name, state, ppid, pgrp, session…), for a failure message. */
export const procStat = (pid: number) => {
  const file = `/proc/${pid}/stat`
  return fs.existsSync(file) ? fs.readFileSync(file, "utf8").split(" ").slice(0, 6).join(" ") : `${pid} gone`
}
