// A `reins serve` always wants a token: without --token it makes one and leaves it where only the same
// user can read it — `<data dir>/servers/<port>.json`, mode 0600 — for `reins run --attach` to find.
// Any local process of another user gets 401 (the class of opencode's CVE-2026-22812).
import * as fs from "node:fs"
import * as path from "node:path"
import { writeFileWhole } from "@reins/domain"

/** What a running server leaves for its clients. */
export interface ServerRecord {
  readonly url: string
  readonly token: string
  readonly pid: number
  readonly directory: string
}

/** A new token: 32 random bytes, hex. */
export const newToken = () => process.getBuiltinModule("node:crypto").randomBytes(32).toString("hex")

/** The file of the server on `port`. */
export const serverFile = (dataDir: string, port: number) => path.join(dataDir, "servers", `${port}.json`)

/** Writes the server's record (its folder 0700, the file 0600; replaced whole). */
export const writeServerRecord = (dataDir: string, port: number, record: ServerRecord) => {
  const file = serverFile(dataDir, port)
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
  writeFileWhole(file, `${JSON.stringify(record)}\n`, 0o600)
  return file
}

/** Removes the record if it is still this process's (a newer server on the port keeps its own). */
export const removeServerRecord = (dataDir: string, port: number) => {
  const file = serverFile(dataDir, port)
  try {
    const record = JSON.parse(fs.readFileSync(file, "utf8")) as ServerRecord
    if (record.pid === process.pid) fs.rmSync(file)
  } catch {
    // gone already
  }
}

const LOOPBACK = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\]|::1)$/

/**
 * The token of the server at `url`, from the record a server of this user left on the data dir: the
 * record for its port whose host is the same (or both loopback names). Undefined when there is none.
 */
export const tokenFor = (dataDir: string, url: string): string | undefined => {
  const target = URL.parse(url)
  if (target === null) return undefined
  const port = Number(target.port || (target.protocol === "https:" ? 443 : 80))
  try {
    const record = JSON.parse(fs.readFileSync(serverFile(dataDir, port), "utf8")) as ServerRecord
    const host = URL.parse(record.url)?.hostname
    if (host === undefined) return undefined
    const same = host === target.hostname || (LOOPBACK.test(host) && LOOPBACK.test(target.hostname))
    return same && typeof record.token === "string" ? record.token : undefined
  } catch {
    return undefined
  }
}
