// Writes schema/reins.schema.json at the repository root from the config schema (`bun run schema` in packages/domain),
// formatted as the repository formats JSON (Biome). test/ConfigSchema.test.ts fails while the committed file says
// anything else than what this writes.
import * as fs from "node:fs"
import * as path from "node:path"
import { configJsonSchemaText } from "../src/ConfigSchema.ts"

const file = path.resolve(import.meta.dir, "../../../schema/reins.schema.json")
fs.mkdirSync(path.dirname(file), { recursive: true })
fs.writeFileSync(file, configJsonSchemaText())
const format = Bun.spawnSync(["bunx", "biome", "format", "--write", file], { stdout: "inherit", stderr: "inherit" })
if (format.exitCode !== 0) process.exit(format.exitCode ?? 1)
console.log(`wrote ${path.relative(process.cwd(), file)}`)
