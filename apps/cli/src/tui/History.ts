// The prompts typed in a project, newest last, kept in the data dir so Up finds them next time too.
import * as fs from "node:fs/promises"
import * as path from "node:path"

/** How many prompts a project keeps. */
const KEEP = 500

/** The file of a project's prompt history: <dataDir>/history/<sha1 of the directory>.json. */
export const historyFile = (dataDir: string, cwd: string) =>
  path.join(dataDir, "history", `${process.getBuiltinModule("node:crypto").createHash("sha1").update(cwd).digest("hex").slice(0, 16)}.json`)

/** The project's prompts, oldest first; none when the file is missing or unreadable. */
export const loadHistory = async (file: string): Promise<ReadonlyArray<string>> => {
  const parsed: unknown = await fs
    .readFile(file, "utf8")
    .then((text) => JSON.parse(text) as unknown)
    .catch(() => [])
  return Array.isArray(parsed) ? parsed.filter((e): e is string => typeof e === "string") : []
}

/** The history with `entry` added last (an immediate repeat is not kept twice). */
export const remember = (history: ReadonlyArray<string>, entry: string): ReadonlyArray<string> =>
  entry.trim() === "" || history.at(-1) === entry ? history : [...history, entry].slice(-KEEP)

/** Writes the history (atomically: a temp file renamed over it). */
export const saveHistory = async (file: string, history: ReadonlyArray<string>) => {
  await fs.mkdir(path.dirname(file), { recursive: true })
  const tmp = `${file}.${process.pid}.tmp`
  await fs.writeFile(tmp, JSON.stringify(history))
  await fs.rename(tmp, file)
}

/**
 * Walking the history with Up / Down: `index` is how far back (0 = the draft being typed), and the
 * draft is kept so that Down past the newest entry gives it back.
 */
export interface HistoryCursor {
  readonly index: number
  readonly draft: string
}

export const startCursor: HistoryCursor = { index: 0, draft: "" }

/** One step back (-1 = Up, older) or forward (+1 = Down); undefined when there is nothing further. */
export const step = (history: ReadonlyArray<string>, cursor: HistoryCursor, current: string, direction: -1 | 1) => {
  const index = cursor.index - direction
  if (index < 0 || index > history.length) return undefined
  const draft = cursor.index === 0 ? current : cursor.draft
  const text = index === 0 ? draft : history[history.length - index]!
  return { cursor: { index, draft }, text }
}
