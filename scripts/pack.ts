// `npm run pack`: every scripts/pack-*.ts in turn (the reins command's packages, the libraries'), each
// writing its tarballs to dist/npm/, which starts empty. Arguments are passed on (`--out DIR`).
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
  const run = spawnSync(process.execPath, [path.join(dir, step), "--out", out], { stdio: "inherit" })
  if (run.status !== 0) {
    console.error(`pack: ${step} failed (${run.signal ?? `exit code ${run.status}`})`)
    process.exit(1)
  }
}
console.log(`tarballs in ${path.relative(process.cwd(), out) || "."}: ${fs.readdirSync(out).join(", ")}`)
