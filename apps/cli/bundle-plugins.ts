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

/**
 * The AI SDK imports its AI Gateway provider (`@ai-sdk/gateway`, with `@vercel/oidc`: ~150 KB) for a model named by a
 * bare string and to tell the gateway's errors apart. reins always gives a provider's model object and has no gateway
 * provider, so the bundle gets a small module in its place: no error is the gateway's, and using it says why not. Every
 * run that calls a model parsed the real one before its first request.
 */
export const noGateway = (): import("bun").BunPlugin => ({
  name: "no-gateway",
  setup(build) {
    build.onResolve({ filter: /^@ai-sdk\/gateway$/ }, () => ({ path: "reins-no-gateway", namespace: "reins-no-gateway" }))
    build.onLoad({ filter: /.*/, namespace: "reins-no-gateway" }, () => ({
      loader: "js",
      contents: `class NotTheGateway extends Error {
  static isInstance() { return false }
}
export const GatewayError = NotTheGateway
export const GatewayAuthenticationError = NotTheGateway
export function createGateway() {
  throw new Error("The AI Gateway provider is not part of reins: configure a provider in reins.json.")
}
export const gateway = new Proxy(createGateway, { get: (_target, key) => (key === "then" ? undefined : createGateway) })
`
    }))
  }
})
