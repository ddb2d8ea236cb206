// `npm run pack`: every scripts/pack-*.ts in turn, into dist/npm/, which starts empty: the reins command's
// packages there (`npm i -g dist/npm/*.tgz` installs reins), the libraries' in dist/npm/lib/. `--out DIR`
// writes elsewhere.
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

const dir = import.meta.dir
const outArg = process.argv.indexOf("--out")
const out = outArg === -1 ? path.join(dir, "..", "dist", "npm") : path.resolve(process.argv[outArg + 1] ?? ".")
fs.rmSync(out, { recursive: true, force: true })
fs.mkdirSync(out, { recursive: true })
const steps = fs
  .readdirSync(dir)
  .filter((f) => /^pack-.+\.ts$/.test(f))
  .sort()
for (const step of steps) {
  console.log(`--- ${step}`)
  // the libraries apart: installing them is a program's business, not the command's
  const into = step === "pack-libs.ts" ? path.join(out, "lib") : out
  const run = spawnSync(process.execPath, [path.join(dir, step), "--out", into], { stdio: "inherit" })
  if (run.status !== 0) {
    console.error(`pack: ${step} failed (${run.signal ?? `exit code ${run.status}`})`)
    process.exit(1)
  }
}
const listed = (at: string) => fs.readdirSync(at).filter((f) => f.endsWith(".tgz"))
const where = path.relative(process.cwd(), out) || "."
console.log(`the reins command, in ${where}: ${listed(out).join(", ")}`)
if (fs.existsSync(path.join(out, "lib"))) console.log(`the libraries, in ${path.join(where, "lib")}: ${listed(path.join(out, "lib")).join(", ")}`)
console.log(`install: npm i -g ${path.join(where, "*.tgz")}`)
