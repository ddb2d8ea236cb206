// A file replaced whole: written to a temporary file beside it, then renamed over it, so a reader never sees half a
// file. The temporary file is created anew (O_EXCL; a link or file left at its name is removed first), so nothing
// left there by someone else is written through.
import * as fs from "node:fs"
import { noteTemp } from "./TempFiles.ts"

/** Writes `text` to `file` whole; `mode` (e.g. 0o600 for a secret) is the new file's, kept whatever the umask. */
export const writeFileWhole = (file: string, text: string, mode?: number) => {
  const temp = `${file}.${process.pid}.tmp`
  noteTemp(temp)
  fs.rmSync(temp, { force: true })
  fs.writeFileSync(temp, text, mode === undefined ? { flag: "wx" } : { mode, flag: "wx" })
  if (mode !== undefined) fs.chmodSync(temp, mode)
  fs.renameSync(temp, file)
}
