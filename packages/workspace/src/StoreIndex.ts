import type { FileState } from "@reins/domain"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"

/**
 * A store's index, saved by a tracker as it closes: `index.json`, what each file of the project was last seen as (with
 * the stat that tells it changed without reading it), so the next process reads only the files whose stat changed;
 * and `recent/`, one file per close with the contents its steps changed from or to (kept `RECENT_MS`), which a prune
 * keeps: a step's recorded change may be stored after the prune read the sessions. One file per close: two processes
 * closing at once never lose each other's.
 */
export interface Seen {
  readonly state: FileState
  readonly stamp: string
}

export interface StoreIndex {
  readonly files: ReadonlyMap<string, Seen>
  /** Written by a reins before the index had `recent/` (a process of it may still run and write no recent changes). */
  readonly older: boolean
}

/** How long the contents a step changed from or to stay in `recent/`: longer than any prune runs. */
export const RECENT_MS = 24 * 3_600_000

const INDEX = "index.json"
const RECENT = "recent"

/** Writes `text` to `file` whole (a temp file renamed: never torn); false when it could not. */
export const writeWhole = (file: string, text: string) => {
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true })
    const tmp = `${file}.${randomUUID()}.tmp`
    fs.writeFileSync(tmp, text)
    fs.renameSync(tmp, file)
    return true
  } catch {
    return false
  }
}

/** The index of `storeDir`: none saved yet is empty; undefined when it cannot be read. */
export const readIndex = (storeDir: string): StoreIndex | undefined => {
  let text: string
  try {
    text = fs.readFileSync(path.join(storeDir, INDEX), "utf8")
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" ? { files: new Map(), older: false } : undefined
  }
  try {
    const data = JSON.parse(text) as unknown
    // the first format: the files only
    if (Array.isArray(data)) return { files: new Map(data as Array<[string, Seen]>), older: true }
    const { files, recent } = data as { files?: unknown; recent?: unknown }
    // one with its recent changes inside: a reins between the two formats
    return Array.isArray(files) ? { files: new Map(files as Array<[string, Seen]>), older: recent !== undefined } : undefined
  } catch {
    return undefined
  }
}

/**
 * Saves `files`, and the contents `changed` (at `now`) as one more file of `recent/`; those of `recent/` older than
 * `RECENT_MS` go. True when all of it was written (a failure leaves the next process reading every file again).
 */
export const saveIndex = (storeDir: string, files: ReadonlyMap<string, Seen>, changed: ReadonlySet<string>, now: number) => {
  const saved = writeWhole(path.join(storeDir, INDEX), JSON.stringify({ files: [...files] }))
  const recent = path.join(storeDir, RECENT)
  // a name no other process makes, of this host or another sharing the data dir
  const noted = changed.size === 0 || writeWhole(path.join(recent, `${randomUUID()}.json`), JSON.stringify({ at: now, hashes: [...changed] }))
  for (const [file, at] of recentFiles(storeDir) ?? []) if (now - at >= RECENT_MS) fs.rmSync(file, { force: true })
  return saved && noted
}

/** The files of `recent/` with when they were written; undefined when one cannot be read. */
const recentFiles = (storeDir: string): Array<[string, number, ReadonlyArray<string>]> | undefined => {
  const dir = path.join(storeDir, RECENT)
  let names: Array<string>
  try {
    names = fs.readdirSync(dir)
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" ? [] : undefined
  }
  const out: Array<[string, number, ReadonlyArray<string>]> = []
  for (const name of names) {
    if (!name.endsWith(".json")) continue
    const file = path.join(dir, name)
    try {
      const { at, hashes } = JSON.parse(fs.readFileSync(file, "utf8")) as { at?: unknown; hashes?: unknown }
      if (typeof at !== "number" || !Array.isArray(hashes)) return undefined
      out.push([file, at, hashes.filter((h): h is string => typeof h === "string")])
    } catch (error) {
      // gone meanwhile (a closer removed it as old): nothing it named is needed
      if ((error as NodeJS.ErrnoException).code === "ENOENT") continue
      return undefined
    }
  }
  return out
}

/**
 * The contents the index of `storeDir` names at `now` (its files, and the changes of the last `RECENT_MS`), and
 * whether an older reins wrote it; undefined when it cannot be read.
 */
export const indexedHashes = (storeDir: string, now: number): { readonly hashes: ReadonlySet<string>; readonly older: boolean } | undefined => {
  const index = readIndex(storeDir)
  const recent = recentFiles(storeDir)
  if (index === undefined || recent === undefined) return undefined
  const hashes = new Set<string>()
  for (const [, at, named] of recent) if (now - at < RECENT_MS) for (const hash of named) hashes.add(hash)
  for (const seen of index.files.values()) if (seen?.state?.kind === "file" && typeof seen.state.hash === "string") hashes.add(seen.state.hash)
  return { hashes, older: index.older }
}
