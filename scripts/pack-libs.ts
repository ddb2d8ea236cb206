// Builds and packs reins's library packages (every packages/* whose package.json is not private) into installable
// tarballs: `bun scripts/pack-libs.ts [--out DIR]` (default dist/npm/lib). The workspace keeps running from sources
// (`exports` is `./src/index.ts` there); each package is staged in a temporary folder with what is published:
//   dist/index.js    one ES module per package, by Bun.build for target bun; every package import stays an import
//                    (`packages: "external"`), text imports (prompts, SQL migrations) are inlined, a file import of
//                    the package's own (the grep child script) is copied next to it, one of a dependency's file (the
//                    tree-sitter wasm) stays an import that Bun resolves in the installed dependency
//   dist/**/*.d.ts   from one `tsc -p tsconfig.build.json` over every package, relative `.ts` specifiers made `.js`
//                    so that a consumer's plain tsconfig (bundler or nodenext resolution) reads them
//   package.json     the workspace's, with `publishConfig`'s `exports` and `types` applied, `workspace:` versions
//                    made the exact versions, and no scripts or devDependencies
// Every bare import the bundle or the declarations make must be a declared dependency (or a Node/Bun built-in).
import * as fs from "node:fs"
import { builtinModules } from "node:module"
import * as os from "node:os"
import * as path from "node:path"

const root = path.resolve(import.meta.dir, "..")

interface Manifest {
  readonly name: string
  readonly version: string
  readonly private?: boolean
  readonly dependencies?: Record<string, string>
  readonly publishConfig?: Record<string, unknown>
  readonly [key: string]: unknown
}

interface Lib {
  readonly dir: string
  readonly folder: string
  readonly manifest: Manifest
}

const readJson = (file: string) => JSON.parse(fs.readFileSync(file, "utf8")) as Manifest

/** The public packages: packages/* not marked private. */
export const libraries = (): ReadonlyArray<Lib> =>
  fs
    .readdirSync(path.join(root, "packages"))
    .map((folder) => ({ folder, dir: path.join(root, "packages", folder) }))
    .filter(({ dir }) => fs.existsSync(path.join(dir, "package.json")))
    .map(({ folder, dir }) => ({ folder, dir, manifest: readJson(path.join(dir, "package.json")) }))
    .filter(({ manifest }) => manifest.private !== true)
    .sort((a, b) => a.folder.localeCompare(b.folder))

/** A `workspace:` range as the version the tarball pins (`workspace:*` is the exact version). */
const resolveRange = (dep: string, range: string, versions: ReadonlyMap<string, string>) => {
  if (!range.startsWith("workspace:")) return range
  const version = versions.get(dep)
  if (version === undefined) throw new Error(`${dep} is a workspace dependency but not a public package (is it private?)`)
  const rest = range.slice("workspace:".length)
  return rest === "*" || rest === "" ? version : rest === "^" || rest === "~" ? `${rest}${version}` : rest
}

/** The package.json that is published. */
export const publishedManifest = (manifest: Manifest, versions: ReadonlyMap<string, string>) => {
  const { scripts: _s, devDependencies: _d, publishConfig, private: _p, exports: _e, ...rest } = manifest
  const { exports, types, ...config } = publishConfig ?? {}
  if (exports === undefined) throw new Error(`${manifest.name}: publishConfig.exports is missing`)
  const dependencies = Object.fromEntries(Object.entries(manifest.dependencies ?? {}).map(([dep, range]) => [dep, resolveRange(dep, range, versions)]))
  return { ...rest, exports, ...(types === undefined ? {} : { types }), dependencies, publishConfig: config }
}

const BUILTIN = /^(node:|bun:|bun$)/
const NODE_BUILTINS = new Set(builtinModules)

/** The package a bare specifier names (`@scope/name/sub` is `@scope/name`); undefined for a relative one. */
const packageOf = (specifier: string) => {
  if (specifier.startsWith(".") || specifier.startsWith("/")) return undefined
  const parts = specifier.split("/")
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]
}

const transpiler = new Bun.Transpiler({ loader: "js" })

/** The modules a file imports: Bun's scan for the bundle; for declarations, `import … from "…"`, `export … from "…"`, `import("…")`. */
const specifiers = (file: string, text: string) =>
  file.endsWith(".d.ts")
    ? [...text.matchAll(/^\s*(?:import|export)\b[^;"']*?\bfrom\s*["']([^"'\s]+)["']|\bimport\(\s*["']([^"'\s]+)["']\s*\)/gm)].map(
        (m) => (m[1] ?? m[2]) as string
      )
    : transpiler.scanImports(text).map((i) => i.path)

const listFiles = (dir: string): Array<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? listFiles(path.join(dir, e.name)) : [path.join(dir, e.name)]))

/** The first problem with what a staged package imports: a package it does not depend on. */
const undeclaredImports = (stage: string, manifest: Manifest) => {
  const declared = new Set(Object.keys(manifest.dependencies ?? {}))
  const problems: Array<string> = []
  for (const file of listFiles(path.join(stage, "dist")).filter((f) => /\.(js|d\.ts)$/.test(f))) {
    for (const specifier of specifiers(file, fs.readFileSync(file, "utf8"))) {
      const pkg = packageOf(specifier)
      if (pkg === undefined || BUILTIN.test(specifier) || NODE_BUILTINS.has(pkg) || declared.has(pkg)) continue
      problems.push(`${path.relative(stage, file)} imports ${specifier}, which is not in ${manifest.name}'s dependencies`)
    }
  }
  return problems
}

/** Declaration files with relative `.ts` specifiers made `.js` (the package ships .js and .d.ts). */
const rewriteDeclaration = (text: string) => text.replace(/((?:\bfrom\s*|\bimport\s*\(\s*)["'])(\.\.?\/[^"']+)\.ts(["'])/g, "$1$2.js$3")

const run = async (cmd: ReadonlyArray<string>, cwd: string) => {
  const child = Bun.spawn([...cmd], { cwd, stdout: "pipe", stderr: "pipe" })
  const [stdout, stderr, exitCode] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
  if (exitCode !== 0) throw new Error(`${cmd.join(" ")} failed (exit ${exitCode}):\n${stdout}${stderr}`)
  return stdout
}

/**
 * Emits every public package's declarations into `outDir/<folder>/src/`. Node runs tsc when there is one (faster
 * than Bun here); `--noCheck`: `bun run typecheck` checks the sources, this only writes what they declare.
 */
const emitDeclarations = (outDir: string) => {
  const tsc = path.join(root, "node_modules", "typescript", "lib", "tsc.js")
  const runner = Bun.which("node") ?? process.execPath
  return run([runner, tsc, "-p", path.join(root, "tsconfig.build.json"), "--noCheck", "--outDir", outDir], root)
}

const bundle = async (lib: Lib, outdir: string) => {
  const result = await Bun.build({
    entrypoints: [path.join(lib.dir, "src", "index.ts")],
    outdir,
    target: "bun",
    format: "esm",
    packages: "external",
    naming: { entry: "index.js", asset: "[name]-[hash].[ext]" }
  })
  if (!result.success) throw new Error(`${lib.manifest.name}: bundle failed\n${result.logs.map(String).join("\n")}`)
}

const readme = (manifest: Manifest) =>
  `# ${manifest.name}\n\nPart of [reins](https://github.com/reins-dev/reins), an agent runtime for Bun (>= 1.4.5). ` +
  `See docs/library-use.md in the repository for composing a runtime from these packages.\n`

/** Builds, checks and packs every public package; returns the tarballs' paths. */
export const packLibs = async (out: string): Promise<ReadonlyArray<string>> => {
  const libs = libraries()
  const versions = new Map(libs.map((l) => [l.manifest.name, l.manifest.version]))
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "reins-pack-libs-"))
  try {
    const types = path.join(work, "types")
    const stage = (lib: Lib) => path.join(work, "stage", lib.folder)
    // the bundles are made while tsc writes the declarations
    const declared = emitDeclarations(types)
    await Promise.all(libs.map((lib) => bundle(lib, path.join(stage(lib), "dist"))))
    await declared
    fs.mkdirSync(out, { recursive: true })
    const tarballs: Array<string> = []
    for (const lib of libs) {
      const dir = stage(lib)
      const dist = path.join(dir, "dist")
      const declarations = path.join(types, lib.folder, "src")
      for (const file of listFiles(declarations)) {
        const target = path.join(dist, path.relative(declarations, file))
        fs.mkdirSync(path.dirname(target), { recursive: true })
        fs.writeFileSync(target, rewriteDeclaration(fs.readFileSync(file, "utf8")))
      }
      const manifest = publishedManifest(lib.manifest, versions)
      fs.writeFileSync(path.join(dir, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`)
      fs.copyFileSync(path.join(root, "LICENSE"), path.join(dir, "LICENSE"))
      fs.writeFileSync(path.join(dir, "README.md"), readme(lib.manifest))
      const problems = undeclaredImports(dir, lib.manifest)
      if (problems.length > 0) throw new Error(`${lib.manifest.name}:\n  ${problems.join("\n  ")}`)
      const tarball = path.join(out, `${lib.manifest.name.replace(/^@/, "").replace("/", "-")}-${lib.manifest.version}.tgz`)
      fs.rmSync(tarball, { force: true })
      await run([process.execPath, "pm", "pack", "--ignore-scripts", "--quiet", "--destination", out], dir)
      if (!fs.existsSync(tarball)) throw new Error(`${lib.manifest.name}: bun pm pack did not write ${tarball}`)
      tarballs.push(tarball)
    }
    return tarballs
  } finally {
    fs.rmSync(work, { recursive: true, force: true })
  }
}

if (import.meta.main) {
  const at = process.argv.indexOf("--out")
  const out = path.resolve(at > 0 && process.argv[at + 1] !== undefined ? process.argv[at + 1]! : path.join(root, "dist", "npm", "lib"))
  const started = performance.now()
  const tarballs = await packLibs(out).catch((error: unknown) => {
    console.error(`pack-libs: ${error instanceof Error ? error.message : String(error)}`)
    process.exit(1)
  })
  for (const tarball of tarballs) console.log(path.relative(process.cwd(), tarball))
  console.log(`pack-libs: ${tarballs.length} packages in ${((performance.now() - started) / 1000).toFixed(1)} s`)
}
