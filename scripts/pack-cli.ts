// Packs the `reins` command for npm (the pattern of esbuild, opencode-ai and @openai/codex): one package
// per platform holding the standalone executable (`bun build --compile`), and `reins`, whose bin is a
// small Node launcher that runs the executable of the platform npm installed (its optionalDependencies
// name them all; `os`/`cpu` make npm install only the matching one). Nothing downloads at install or run time.
//
//   bun scripts/pack-cli.ts [--out DIR]      tarballs into DIR (default dist/npm)
//   REINS_PACK_TARGETS=all | host | linux-x64,darwin-arm64,…   the platforms (default: host, so that
//   `npm i -g dist/npm/*.tgz` installs: npm refuses another platform's package); `host` is this machine's,
//   compiled with the running bun (no download); other targets' runtimes come from the npm registry at
//   build time (a release builds `all`).
//   REINS_PACK_GZIP_LEVEL=1   faster, larger tarballs (default 9; the install test uses 1)
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { noGateway, pluginSchema } from "../apps/cli/bundle-plugins.ts"

const root = path.resolve(import.meta.dir, "..")
const cli = path.join(root, "apps", "cli")

/** A platform a standalone executable is built for: npm's `os`/`cpu` values and bun's compile target. */
interface Target {
  readonly name: string
  readonly os: "linux" | "darwin" | "win32"
  readonly cpu: "x64" | "arm64"
  readonly bun: Bun.Build.CompileTarget
}

// Linux binaries link glibc: Alpine and other musl systems need gcompat (docs/install.md).
// bun-linux-x64 wants a CPU with AVX2 (2013 on); the -baseline runtime would run on older ones, more slowly.
const TARGETS: ReadonlyArray<Target> = [
  { name: "linux-x64", os: "linux", cpu: "x64", bun: "bun-linux-x64" },
  { name: "linux-arm64", os: "linux", cpu: "arm64", bun: "bun-linux-arm64" },
  { name: "darwin-x64", os: "darwin", cpu: "x64", bun: "bun-darwin-x64" },
  { name: "darwin-arm64", os: "darwin", cpu: "arm64", bun: "bun-darwin-arm64" },
  { name: "windows-x64", os: "win32", cpu: "x64", bun: "bun-windows-x64" }
]

const hostName = `${process.platform === "win32" ? "windows" : process.platform}-${process.arch}`

const fail = (message: string): never => {
  console.error(`pack-cli: ${message}`)
  process.exit(1)
}

/** The targets REINS_PACK_TARGETS names; `host` is this machine's, built with the running bun (`runtime: "self"`). */
const chosen = (spec: string | undefined): ReadonlyArray<Target & { readonly runtime?: "self" }> => {
  if (spec === "all") return TARGETS
  return (spec === undefined || spec.trim() === "" ? "host" : spec).split(",").map((raw) => {
    const host = raw.trim() === "host"
    const name = host ? hostName : raw.trim()
    const target =
      TARGETS.find((t) => t.name === name) ??
      fail(`no target ${JSON.stringify(name)} in REINS_PACK_TARGETS: use host, all, or some of ${TARGETS.map((t) => t.name).join(", ")}`)
    return host ? { ...target, runtime: "self" as const } : target
  })
}

const outArg = process.argv.indexOf("--out")
const out = path.resolve(outArg === -1 ? path.join(root, "dist", "npm") : (process.argv[outArg + 1] ?? fail("--out needs a directory")))
const env = process.env
const targets = chosen(env.REINS_PACK_TARGETS)
const version: string = JSON.parse(fs.readFileSync(path.join(cli, "package.json"), "utf8")).version
const stage = fs.mkdtempSync(path.join(os.tmpdir(), "reins-pack-"))
process.on("exit", () => fs.rmSync(stage, { recursive: true, force: true }))
fs.mkdirSync(out, { recursive: true })

const gzipLevel = env.REINS_PACK_GZIP_LEVEL ?? "9"
if (!/^[0-9]$/.test(gzipLevel)) fail(`REINS_PACK_GZIP_LEVEL must be 0 to 9, got ${JSON.stringify(gzipLevel)}`)

/** The tarball of a staged package directory, in `out` (`bun pm pack`); its path. */
const pack = (dir: string) =>
  execFileSync(process.execPath, ["pm", "pack", "--quiet", "--destination", out, "--gzip-level", gzipLevel], { cwd: dir, encoding: "utf8" })
    .trim()
    .split("\n")
    .at(-1)!

const common = {
  version,
  license: "MIT",
  homepage: "https://www.npmjs.com/package/reins"
}

// GrepChild.ts is also imported `with { type: "file" }` (GrepProcess.ts, for bun): as an entry point at the same
// path the bundler would take that import for the entry and run the search at start-up. It imports only Node's
// built-ins, so a copy elsewhere is the same program.
const grepChild = path.join(stage, "entries", "GrepChild.ts")
fs.mkdirSync(path.dirname(grepChild), { recursive: true })
fs.copyFileSync(path.join(root, "packages", "tool", "src", "builtin", "GrepChild.ts"), grepChild)

/** Compiles the CLI for `target` into `<dir>/bin`: the CLI's entry and the helpers it runs as processes (Helper.ts in @reins/sandbox). */
const compile = async (target: Target & { readonly runtime?: "self" }, dir: string) => {
  const exe = path.join(dir, "bin", target.os === "win32" ? "reins.exe" : "reins")
  fs.mkdirSync(path.dirname(exe), { recursive: true })
  const result = await Bun.build({
    entrypoints: [
      path.join(cli, "src", "bin.ts"),
      grepChild,
      path.join(root, "packages", "sandbox", "src", "BridgeMain.ts"),
      path.join(root, "packages", "sandbox", "src", "SandboxHost.ts")
    ],
    // `host`: the running bun's runtime, nothing downloaded; a named target gets Bun's build for it (a release's
    // linux-x64 is then bun-linux-x64 whichever variant the building machine runs)
    compile: {
      ...(target.runtime === "self" ? {} : { target: target.bun }),
      outfile: exe,
      // like the bundle's `bun --no-env-file --config=/dev/null` (build.ts): the .env and bunfig.toml of the
      // directory reins runs in (a cloned repository's) must not set its variables or preload code
      autoloadDotenv: false,
      autoloadBunfig: false,
      autoloadTsconfig: false,
      autoloadPackageJson: false
    },
    // the helpers are found by name beside the entry (apps/cli/src/Helper.ts)
    naming: { entry: "[name].[ext]", chunk: "chunks/[name]-[hash].[ext]" },
    target: "bun",
    splitting: true,
    minify: true,
    // the code compiled ahead (start-up about twice as fast): for this machine's runtime only, as JSC's bytecode is not
    // portable across platforms (Bun refuses it for a cross-compile, or its executable crashes at launch)
    bytecode: target.runtime === "self",
    format: "esm",
    // as in apps/cli/build.ts: the plugin module's own copy of Schema, no AI Gateway provider, no React devtools, React's production build
    plugins: [pluginSchema(cli), noGateway()],
    external: ["react-devtools-core"],
    define: { "process.env.NODE_ENV": JSON.stringify("production") }
  })
  if (!result.success) {
    for (const log of result.logs) console.error(log)
    fail(`compiling for ${target.name} failed`)
  }
  return exe
}

const packages: Array<string> = []
for (const target of targets) {
  const name = `reins-${target.name}`
  const dir = path.join(stage, name)
  const exe = await compile(target, dir)
  fs.chmodSync(exe, 0o755)
  fs.writeFileSync(
    path.join(dir, "package.json"),
    `${JSON.stringify(
      {
        name,
        ...common,
        description: `The reins executable for ${target.name} (installed by the reins package)`,
        os: [target.os],
        cpu: [target.cpu],
        files: ["bin"],
        preferUnplugged: true
      },
      null,
      2
    )}\n`
  )
  fs.copyFileSync(path.join(root, "LICENSE"), path.join(dir, "LICENSE"))
  packages.push(pack(dir))
  console.log(`${name}: ${(fs.statSync(exe).size / 1e6).toFixed(1)} MB executable`)
}

// `reins`: the launcher, naming every platform package (not only those built now) at this exact version
const main = path.join(stage, "reins")
fs.mkdirSync(path.join(main, "bin"), { recursive: true })
fs.copyFileSync(path.join(cli, "npm", "launcher.cjs"), path.join(main, "bin", "reins"))
fs.chmodSync(path.join(main, "bin", "reins"), 0o755)
fs.copyFileSync(path.join(root, "LICENSE"), path.join(main, "LICENSE"))
fs.copyFileSync(path.join(root, "README.md"), path.join(main, "README.md"))
// the config's JSON Schema, for editors that take "$schema" as a path (node_modules/reins/schema/reins.schema.json)
fs.mkdirSync(path.join(main, "schema"))
fs.copyFileSync(path.join(root, "schema", "reins.schema.json"), path.join(main, "schema", "reins.schema.json"))
fs.writeFileSync(
  path.join(main, "package.json"),
  `${JSON.stringify(
    {
      name: "reins",
      ...common,
      description: "An agent runtime for the terminal: runs a model's tool calls with permissions and a sandbox",
      bin: { reins: "bin/reins" },
      files: ["bin", "schema"],
      engines: { node: ">=18" },
      optionalDependencies: Object.fromEntries(TARGETS.map((t) => [`reins-${t.name}`, version]))
    },
    null,
    2
  )}\n`
)
packages.push(pack(main))
for (const file of packages) console.log(path.relative(process.cwd(), file))
