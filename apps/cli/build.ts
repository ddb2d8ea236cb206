// Bundles the CLI into dist/: a tiny entry (fast --version) plus lazily loaded chunks.
import * as fs from "node:fs"
import * as path from "node:path"

const dir = import.meta.dir

// Tool and plugin files get the whole Schema namespace (packages/tool/src/plugin/PluginModule.ts). Bun keeps a module
// whole in one chunk once any importer uses its namespace as a value, and Schema's module is in the chunk every command
// loads: ~280 KB of it (and its crypto, HTTP and network schemas) was parsed and run at every start for files most
// projects do not have. The plugin module gets its own copy of Schema's module file instead, beside the real one so
// that its imports (the AST, the parser, Effect's core) are the same modules: the schemas it makes are the runtime's.
const effectDist = path.dirname(Bun.resolveSync("effect/Schema", dir))
const pluginSchema: import("bun").BunPlugin = {
  name: "plugin-schema",
  setup(build) {
    build.onResolve({ filter: /^effect\/Schema$/ }, (args) =>
      args.importer.endsWith(path.join("plugin", "PluginModule.ts")) ? { path: path.join(effectDist, "Schema.plugin.js") } : undefined
    )
    build.onLoad({ filter: /[\\/]Schema\.plugin\.js$/ }, async () => ({ contents: await Bun.file(path.join(effectDist, "Schema.js")).text(), loader: "js" }))
  }
}
const outdir = path.join(dir, "dist")
fs.rmSync(outdir, { recursive: true, force: true })
const result = await Bun.build({
  entrypoints: [path.join(dir, "src", "bin.ts")],
  outdir,
  target: "bun",
  splitting: true,
  minify: true,
  plugins: [pluginSchema],
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
