// Bundles the CLI into dist/: a tiny entry (fast --version) plus lazily loaded chunks.
import * as fs from "node:fs"
import * as path from "node:path"
import { noGateway, pluginSchema } from "./bundle-plugins.ts"

const dir = import.meta.dir

const outdir = path.join(dir, "dist")
fs.rmSync(outdir, { recursive: true, force: true })
const result = await Bun.build({
  entrypoints: [path.join(dir, "src", "bin.ts")],
  outdir,
  target: "bun",
  splitting: true,
  minify: true,
  // the plugin module's own copy of Schema, and no AI Gateway provider (bundle-plugins.ts)
  plugins: [pluginSchema(dir), noGateway()],
  // Ink loads its React devtools bridge only when DEV=true: not shipped
  external: ["react-devtools-core"],
  // React's production build (the development one checks and warns on every render, and is twice the size); the only
  // other reader of NODE_ENV bundled is the AI SDK's gateway error text, for a gateway reins does not use
  define: { "process.env.NODE_ENV": JSON.stringify("production") },
  naming: { entry: "reins.js", chunk: "chunks/[name]-[hash].js" }
})
if (!result.success) {
  for (const log of result.logs) console.error(log)
  process.exit(1)
}
const entry = path.join(outdir, "reins.js")
// --no-env-file and an empty bunfig: bun would otherwise read the .env and bunfig.toml of the directory reins
// runs in — a cloned repository's — and run its preload scripts or set REINS_CONFIG and provider URLs before reins starts
fs.writeFileSync(entry, `#!/usr/bin/env -S bun --no-env-file --config=/dev/null\n${fs.readFileSync(entry, "utf8")}`)
fs.chmodSync(entry, 0o755)
