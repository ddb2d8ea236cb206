import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"

/** Where the data dir keeps its checkpoint stores: one directory per project (a hash of its real path). */
export const checkpointsRoot = (dataDir: string) => path.join(dataDir, "checkpoints")

/**
 * What a checkpoint store says about itself: the project directory it copies (`project`), and the databases whose
 * sessions record changes naming its copies (`databases/<hash>`, each holding the database as `databaseIdentity`
 * shows it): a prune that reads the sessions of one database leaves a store another database uses alone.
 */
const PROJECT = "project"
const DATABASES = "databases"

const writeOnce = (file: string, text: string) => {
  try {
    if (fs.existsSync(file)) return
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(file, text)
  } catch {
    // unrecorded: a prune leaves the store alone
  }
}

/** Records that `storeDir` copies the files of `root`. */
export const recordProject = (storeDir: string, root: string) => writeOnce(path.join(storeDir, PROJECT), root)

/** The project directory `storeDir` copies, when recorded. */
export const projectOfStore = (storeDir: string): string | undefined => {
  try {
    return fs.readFileSync(path.join(storeDir, PROJECT), "utf8")
  } catch {
    return undefined
  }
}

/** Records that sessions of `database` (its identity) record changes naming copies in `storeDir`. */
export const recordDatabase = (storeDir: string, database: string) =>
  writeOnce(path.join(storeDir, DATABASES, createHash("sha256").update(database).digest("hex").slice(0, 16)), database)

/** The databases recorded as using `storeDir`; undefined when they cannot be read. */
export const databasesOf = (storeDir: string): ReadonlyArray<string> | undefined => {
  const dir = path.join(storeDir, DATABASES)
  try {
    return fs.readdirSync(dir).map((name) => fs.readFileSync(path.join(dir, name), "utf8"))
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" ? [] : undefined
  }
}
