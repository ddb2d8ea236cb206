// Bundles the CLI into dist/, in two formats:
// - reins.js, the entry, and ChatMain.js, the interactive session (Ink and React), as ES modules with their shared
//   code in chunks/ loaded lazily: `reins --version` answers from the entry alone;
// - main.cjs, every command (effect/cli and the runtime), one CommonJS file with Bun's bytecode beside it
//   (main.cjs.jsc): the code a command runs is compiled already, not parsed and compiled at every start. Bun keeps
//   bytecode for CommonJS files only (ES modules only in a standalone executable), and Ink and Yoga use top-level
//   await, which CommonJS cannot hold: the interactive session stays in the ES modules, and `reins chat` as main
//   parses it goes there (ChatHandoff.ts).
import * as fs from "node:fs"
import * as path from "node:path"
import { processAlive } from "@reins/domain"
import { noGateway, pluginSchema } from "./bundle-plugins.ts"

const dir = import.meta.dir
const dist = path.join(dir, "dist")
// built beside it, and put in its place only once everything below passed: a failed build leaves no dist/ that runs
const outdir = path.join(dir, `dist.building-${process.pid}`)
// --no-env-file and an empty bunfig: bun would otherwise read the .env and bunfig.toml of the directory reins
// runs in — a cloned repository's — and run its preload scripts or set REINS_CONFIG and provider URLs before reins starts
const SHEBANG = "#!/usr/bin/env -S bun --no-env-file --config=/dev/null"

const common = {
  outdir,
  target: "bun",
  minify: true,
  // Ink loads its React devtools bridge only when DEV=true: not shipped
  external: ["react-devtools-core"],
  // React's production build (the development one checks and warns on every render, and is twice the size); the only
  // other reader of NODE_ENV bundled is the AI SDK's gateway error text, for a gateway reins does not use
  define: { "process.env.NODE_ENV": JSON.stringify("production") }
} as const

/** An import of `module` from a file named `importer` is left to run time, as `to` (the other bundle's file). */
const elsewhere = (name: string, importer: string, module: string, to: string): import("bun").BunPlugin => ({
  name,
  setup(build) {
    build.onResolve({ filter: new RegExp(`^\\./${module.replace(".", "\\.")}$`) }, (args) =>
      path.basename(args.importer) === importer ? { path: to, external: true } : undefined
    )
  }
})

/**
 * Effect's environment config provider reads `import.meta?.env` (Vite's), which is not JavaScript in a CommonJS file:
 * under Bun it is `process.env`, which the provider reads beside it, so `undefined` there loses nothing.
 */
const noImportMetaEnv: import("bun").BunPlugin = {
  name: "no-import-meta-env",
  setup(build) {
    build.onLoad({ filter: /[\\/]effect[\\/]dist[\\/]ConfigProvider\.js$/ }, async (args) => ({
      contents: (await Bun.file(args.path).text()).replaceAll("import.meta?.env", "undefined"),
      loader: "js"
    }))
  }
}

/**
 * `import.meta.url` (and `__filename`) in a CommonJS bundle is the source file's, fixed at build time (this machine's
 * path): the files that find their assets by it (the bash parser's wasm, grep's child) get main.cjs's own URL instead,
 * `BUNDLE_URL`, which the bundle's first line sets at run time (its wrapper's `__filename`) — the assets are beside it.
 */
const BUNDLE_URL = "__reinsBundleUrl"
const importMetaUrlAtRunTime: import("bun").BunPlugin = {
  name: "import-meta-url-at-run-time",
  setup(build) {
    const files =
      /[\\/](packages[\\/]permission[\\/]src[\\/]Parser\.ts|packages[\\/]tool[\\/]src[\\/]builtin[\\/]GrepProcess\.ts|web-tree-sitter[\\/]web-tree-sitter\.js)$/
    build.onLoad({ filter: files }, async (args) => ({
      contents: (await Bun.file(args.path).text()).replaceAll("import.meta.url", BUNDLE_URL),
      loader: args.path.endsWith(".ts") ? "ts" : "js"
    }))
  }
}

/** Ends the build: the partial output goes, and so does the dist/ of an earlier build (it is not this source's). */
const fail = (message: string): never => {
  console.error(`build: ${message}`)
  fs.rmSync(outdir, { recursive: true, force: true })
  fs.rmSync(dist, { recursive: true, force: true })
  process.exit(1)
}

const built = (result: Awaited<ReturnType<typeof Bun.build>>, what: string) => {
  if (result.success) return result
  for (const log of result.logs) console.error(log)
  return fail(`${what} failed`)
}

// what a build killed half way left beside dist/ (its process is gone)
for (const name of fs.readdirSync(dir)) {
  const pid = /^dist\.building-(\d+)$/.exec(name)?.[1]
  if (pid === undefined) continue
  if (Number(pid) === process.pid || !processAlive(Number(pid))) fs.rmSync(path.join(dir, name), { recursive: true, force: true })
}

// the ES modules: the entry (bin.ts) and the interactive session's own entry, which main.cjs imports by this name
built(
  await Bun.build({
    ...common,
    entrypoints: [path.join(dir, "src", "bin.ts"), path.join(dir, "src", "ChatMain.ts")],
    splitting: true,
    // the plugin module's own copy of Schema, no AI Gateway provider (bundle-plugins.ts); the commands are main.cjs
    plugins: [pluginSchema(dir), noGateway(), elsewhere("commands-in-cjs", "bin.ts", "main.ts", "./main.cjs")],
    naming: { entry: "[name].js", chunk: "chunks/[name]-[hash].js" }
  }),
  "the ES module bundle (reins.js, ChatMain.js)"
)
const entry = path.join(outdir, "reins.js")
fs.renameSync(path.join(outdir, "bin.js"), entry)
fs.writeFileSync(entry, `${SHEBANG}\n${fs.readFileSync(entry, "utf8")}`)
fs.chmodSync(entry, 0o755)

// the commands: one CommonJS file and its bytecode
const commands = built(
  await Bun.build({
    ...common,
    entrypoints: [path.join(dir, "src", "main.ts")],
    format: "cjs",
    bytecode: true,
    // inside the CommonJS wrapper, where `__filename` is main.cjs's; strict, as the ES modules it was written as are
    banner: `"use strict"; var ${BUNDLE_URL} = require("node:url").pathToFileURL(__filename).href;`,
    plugins: [
      pluginSchema(dir),
      noGateway(),
      noImportMetaEnv,
      importMetaUrlAtRunTime,
      elsewhere("chat-in-esm", "ChatHandoff.ts", "ChatMain.ts", "./ChatMain.js")
    ],
    naming: { entry: "main.cjs" }
  }),
  "the commands' bundle (main.cjs)"
)
// nothing of this checkout's source trees in the bundle: a source file's location fixed at build time is found nowhere
// else (the trees, not the checkout's bare path: a short one, /app, is also ordinary text such as "application/appx")
const main = fs.readFileSync(path.join(outdir, "main.cjs"), "utf8")
const root = path.resolve(dir, "..", "..")
const leaked = ["apps", "packages", "node_modules"].map((tree) => path.join(root, tree) + path.sep).find((tree) => main.includes(tree))
if (leaked !== undefined) fail(`main.cjs holds this checkout's ${leaked}: an import.meta left to the bundler (see importMetaUrlAtRunTime)`)
// Bun writes no bytecode, silently, for a file JSC cannot compile (an `import.meta` left in CommonJS): without it
// every command would parse all of main.cjs at start, slower than the ES modules
if (!commands.outputs.some((o) => o.kind === "bytecode"))
  fail(`no bytecode was written for main.cjs${main.includes("import.meta") ? " (main.cjs still holds import.meta)" : ""}`)

fs.rmSync(dist, { recursive: true, force: true })
fs.renameSync(outdir, dist)
