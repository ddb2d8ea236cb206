import type { FileState } from "@reins/domain"
import * as fs from "node:fs"
import * as path from "node:path"

/**
 * A store's `index.json`, saved by a tracker as it closes: what each file of the project was last seen as (with the
 * stat that tells it changed without reading it), so the next process reads only the files whose stat changed; and
 * the contents the steps of recent processes changed from or to (`recent`, kept `RECENT_MS`), which a prune keeps:
 * a step's recorded change may be stored after the prune read the sessions.
 */
export interface Seen {
  readonly state: FileState
  readonly stamp: string
}

export interface StoreIndex {
  readonly files: ReadonlyMap<string, Seen>
  /** Content hash → when a process last recorded a change from or to it (ms). */
  readonly recent: ReadonlyMap<string, number>
}

/** How long a content a step changed from or to stays in `recent`: longer than any prune runs. */
export const RECENT_MS = 24 * 3_600_000

const fileOf = (storeDir: string) => path.join(storeDir, "index.json")

const parse = (text: string): StoreIndex => {
  const data = JSON.parse(text) as unknown
  // the first format: the files only
  if (Array.isArray(data)) return { files: new Map(data as Array<[string, Seen]>), recent: new Map() }
  const { files, recent } = data as { files?: unknown; recent?: unknown }
  if (!Array.isArray(files) || !Array.isArray(recent)) throw new Error("not an index")
  return { files: new Map(files as Array<[string, Seen]>), recent: new Map(recent as Array<[string, number]>) }
}

/** The index of `storeDir`: none saved yet is empty; undefined when it cannot be read. */
export const readIndex = (storeDir: string): StoreIndex | undefined => {
  let text: string
  try {
    text = fs.readFileSync(fileOf(storeDir), "utf8")
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" ? { files: new Map(), recent: new Map() } : undefined
  }
  try {
    return parse(text)
  } catch {
    return undefined
  }
}

/**
 * Saves `files` with the contents `changed` (at `now`) added to the recent ones of the index as it is on disk now
 * (another process may have saved since this one read it); those older than `RECENT_MS` drop. A temp file renamed:
 * never torn. A failure is ignored: the next process reads every file again.
 */
export const saveIndex = (storeDir: string, files: ReadonlyMap<string, Seen>, changed: Iterable<string>, now: number) => {
  const recent = new Map<string, number>()
  for (const [hash, at] of readIndex(storeDir)?.recent ?? []) if (typeof at === "number" && now - at < RECENT_MS) recent.set(hash, at)
  for (const hash of changed) recent.set(hash, now)
  try {
    const file = fileOf(storeDir)
    const tmp = `${file}.${process.pid}.tmp`
    fs.writeFileSync(tmp, JSON.stringify({ files: [...files], recent: [...recent] }))
    fs.renameSync(tmp, file)
  } catch {
    // the next process reads every file again
  }
}

/**
 * The contents the index of `storeDir` names at `now` (its files, and the changes of the last `RECENT_MS`); undefined
 * when it cannot be read.
 */
export const indexedHashes = (storeDir: string, now: number): ReadonlySet<string> | undefined => {
  const index = readIndex(storeDir)
  if (index === undefined) return undefined
  const hashes = new Set<string>()
  for (const [hash, at] of index.recent) if (now - at < RECENT_MS) hashes.add(hash)
  for (const seen of index.files.values()) if (seen?.state?.kind === "file" && typeof seen.state.hash === "string") hashes.add(seen.state.hash)
  return hashes
}
