import * as fs from "node:fs"
import * as path from "node:path"
import { noteTemp } from "@reins/domain"

let counter = 0

/**
 * Replaces the content of an existing file so that a crash never leaves it half-written, the way
 * editors do: the new bytes go to a temp file beside the file's real location (through any
 * symlinks, so a link stays a link), which gets the file's mode and owner and is renamed over it.
 * A file with several hard links is rewritten in place instead (a rename would split the links),
 * and so is one whose directory refuses new files.
 */
export const replaceContent = async (target: string, content: string | Uint8Array): Promise<void> => {
  const real = await fs.promises.realpath(target)
  return replaceReal(real, await fs.promises.stat(real), content)
}

/**
 * Writes a file: an existing one through `replaceContent`, a new one (or a dangling link's target)
 * created with its parent directories.
 */
export const writeFileSafely = async (target: string, content: string | Uint8Array): Promise<void> => {
  const real = await fs.promises.realpath(target).catch(() => undefined)
  if (real !== undefined) return replaceReal(real, await fs.promises.stat(real), content)
  await fs.promises.mkdir(path.dirname(target), { recursive: true })
  await fs.promises.writeFile(target, content)
}

const replaceReal = async (real: string, stat: fs.Stats, content: string | Uint8Array): Promise<void> => {
  if (stat.nlink > 1) return fs.promises.writeFile(real, content)
  const temp = path.join(path.dirname(real), `.${path.basename(real)}.reins-${process.pid}-${++counter}`)
  const mode = stat.mode & 0o7777
  noteTemp(temp)
  try {
    await fs.promises.writeFile(temp, content, { flag: "wx", mode })
  } catch (error) {
    // a directory this process may not add files to: the file itself may still be writable
    if ((error as NodeJS.ErrnoException).code === "EACCES" || (error as NodeJS.ErrnoException).code === "EPERM") {
      return fs.promises.writeFile(real, content)
    }
    throw error
  }
  try {
    // writeFile's mode is filtered by the umask; the owner can only be kept where this process may set it
    await fs.promises.chmod(temp, mode)
    await fs.promises.chown(temp, stat.uid, stat.gid).catch(() => undefined)
    await fs.promises.rename(temp, real)
  } catch (error) {
    await fs.promises.rm(temp, { force: true })
    throw error
  }
}
