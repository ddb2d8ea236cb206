import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { writeWhole } from "./StoreIndex.ts"

/** Where the data dir keeps its checkpoint stores: one directory per project (a hash of its real path). */
export const checkpointsRoot = (dataDir: string) => path.join(dataDir, "checkpoints")

/**
 * What a checkpoint store says about itself: the project directory it copies (`project`), and the databases whose
 * sessions record changes naming its copies (`databases/<hash>`, each holding the database as `databaseIdentity`
 * shows it): a prune that reads the sessions of one database leaves a store another database uses alone.
 */
const PROJECT = "project"
const DATABASES = "databases"

// unrecorded (it could not be written): a prune leaves the store alone
const writeOnce = (file: string, text: string) => fs.existsSync(file) || writeWhole(file, text)

/** What a store used before its databases were recorded says it was used by: any database, for all a prune knows. */
export const UNRECORDED = "a reins that did not record which database's sessions use it"

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

const recordOf = (storeDir: string, database: string) => path.join(storeDir, DATABASES, createHash("sha256").update(database).digest("hex").slice(0, 16))

/**
 * Records that sessions of `database` (its identity) record changes naming copies in `storeDir`. A store that has
 * copies or an index already and no record yet was used by a reins that recorded none: that is recorded too.
 */
export const recordDatabase = (storeDir: string, database: string) => {
  const used = fs.existsSync(path.join(storeDir, "objects")) || fs.existsSync(path.join(storeDir, "index.json"))
  // unrecorded that way, it is not recorded as this database's either: a prune leaves it alone
  if (!fs.existsSync(path.join(storeDir, DATABASES)) && used && !writeOnce(recordOf(storeDir, UNRECORDED), UNRECORDED)) return
  writeOnce(recordOf(storeDir, database), database)
}

/** The file of the record that `storeDir` was used by a reins that recorded no database (delete it to let it go). */
export const unrecordedFile = (storeDir: string) => recordOf(storeDir, UNRECORDED)

/** The databases recorded as using `storeDir`; undefined when they cannot be read. */
export const databasesOf = (storeDir: string): ReadonlyArray<string> | undefined => {
  const dir = path.join(storeDir, DATABASES)
  try {
    // a temporary file of a record cut off is none
    return fs
      .readdirSync(dir)
      .filter((name) => !name.endsWith(".tmp"))
      .map((name) => fs.readFileSync(path.join(dir, name), "utf8"))
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" ? [] : undefined
  }
}
