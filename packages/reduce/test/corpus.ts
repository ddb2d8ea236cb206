// Loads the fixture corpus (see corpus.test.ts for the manifest format); shared with the bench.
import * as fs from "node:fs"
import * as path from "node:path"

export interface Manifest {
  readonly command: string
  readonly kind: "failing" | "passing" | "info"
  readonly source: "real" | "documented"
  readonly tool: string
  readonly reducer: string
  readonly failures: ReadonlyArray<string>
  readonly locations: ReadonlyArray<string>
}

const root = path.join(import.meta.dir, "..", "fixtures")

export const corpus = () =>
  fs
    .readdirSync(root, { recursive: true, encoding: "utf8" })
    // manifests sit beside their .txt; sample projects (with their own package.json) are skipped
    .filter((f) => f.endsWith(".json") && !f.split(/[\\/]/).includes("projects") && fs.existsSync(path.join(root, f.replace(/\.json$/, ".txt"))))
    .sort()
    .map((f) => {
      const manifest = JSON.parse(fs.readFileSync(path.join(root, f), "utf8")) as Manifest
      const text = fs.readFileSync(path.join(root, f.replace(/\.json$/, ".txt")), "utf8")
      return { name: f.replace(/\.json$/, ""), manifest, text }
    })
