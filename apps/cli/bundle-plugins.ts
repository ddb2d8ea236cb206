// Build plugins shared by the bundle (build.ts) and the standalone executables (scripts/pack-cli.ts).
import * as path from "node:path"

/**
 * Tool and plugin files get the whole Schema namespace (packages/tool/src/plugin/PluginModule.ts). Bun keeps a module
 * whole in one chunk once any importer uses its namespace as a value, and Schema's module is in the chunk every
 * command loads: ~280 KB of it (and its crypto, HTTP and network schemas) was parsed and run at every start for files
 * most projects do not have. The plugin module gets its own copy of Schema's module file instead, beside the real one
 * so that its imports (the AST, the parser, Effect's core) are the same modules: the schemas it makes are the runtime's.
 */
export const pluginSchema = (from: string): import("bun").BunPlugin => {
  const effectDist = path.dirname(Bun.resolveSync("effect/Schema", from))
  return {
    name: "plugin-schema",
    setup(build) {
      build.onResolve({ filter: /^effect\/Schema$/ }, (args) =>
        args.importer.endsWith(path.join("plugin", "PluginModule.ts")) ? { path: path.join(effectDist, "Schema.plugin.js") } : undefined
      )
      build.onLoad({ filter: /[\\/]Schema\.plugin\.js$/ }, async () => ({ contents: await Bun.file(path.join(effectDist, "Schema.js")).text(), loader: "js" }))
    }
  }
}
