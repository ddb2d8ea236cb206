// examples/embed as a user gets it: the public packages packed (scripts/pack-libs.ts), the example installed from
// those tarballs in a folder outside the workspace (third-party packages from Bun's cache), type-checked by its own
// tsc with a plain tsconfig, and run with Bun against the scripted server. Also what the tarballs carry besides
// code: the tree-sitter wasm the bash scan loads, the SQL migrations, the grep tool's child script.
import { afterAll, beforeAll, expect, test } from "bun:test"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { startScriptedServer } from "@reins/testkit"

const repo = path.resolve(import.meta.dir, "..", "..")
const example = path.join(repo, "examples", "embed")
const work = fs.mkdtempSync(path.join(os.tmpdir(), "reins-embed-"))
const app = path.join(work, "app")

const run = async (cmd: ReadonlyArray<string>, cwd: string, env: Record<string, string> = {}) => {
  const child = Bun.spawn([...cmd], { cwd, env: { ...process.env, NO_COLOR: "1", ...env }, stdout: "pipe", stderr: "pipe" })
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
  return { stdout, stderr, code }
}

const ok = async (cmd: ReadonlyArray<string>, cwd: string, env: Record<string, string> = {}) => {
  const result = await run(cmd, cwd, env)
  if (result.code !== 0) throw new Error(`${cmd.join(" ")} exited ${result.code}\n${result.stdout}\n${result.stderr}`)
  return result.stdout
}

const tarballs: Record<string, string> = {}

beforeAll(async () => {
  const npm = path.join(work, "npm")
  await ok([process.execPath, path.join(repo, "scripts", "pack-libs.ts"), "--out", npm], repo)
  // @reins/runtime-0.1.0.tgz's package name is in its manifest; the file name is reins-runtime-0.1.0.tgz
  for (const file of fs.readdirSync(npm).filter((f) => f.endsWith(".tgz"))) {
    const name = `@reins/${file.replace(/^reins-/, "").replace(/-\d+\.\d+\.\d+.*\.tgz$/, "")}`
    tarballs[name] = `file:${path.join(npm, file)}`
  }
  fs.cpSync(example, app, { recursive: true, filter: (source) => !source.includes("node_modules") })
  const manifest = JSON.parse(fs.readFileSync(path.join(app, "package.json"), "utf8"))
  for (const deps of [manifest.dependencies, manifest.devDependencies]) {
    for (const dep of Object.keys(deps)) if (dep.startsWith("@reins/")) deps[dep] = tarballs[dep]
  }
  // the packages' own dependencies on each other (exact versions) from the tarballs too, never the registry
  manifest.overrides = tarballs
  fs.writeFileSync(path.join(app, "package.json"), JSON.stringify(manifest, null, 2))
  await ok([process.execPath, "install", "--prefer-offline", "--no-summary"], app)
}, 170_000)

afterAll(() => fs.rmSync(work, { recursive: true, force: true }))

test("every public package is packed, the example's @reins dependencies among them", () => {
  expect(Object.keys(tarballs)).toEqual(expect.arrayContaining(["@reins/runtime", "@reins/session", "@reins/storage", "@reins/tool", "@reins/plugin"]))
  expect(Object.keys(tarballs)).not.toContain("@reins/testkit")
  const manifest = JSON.parse(fs.readFileSync(path.join(example, "package.json"), "utf8"))
  const deps = Object.keys({ ...manifest.dependencies, ...manifest.devDependencies }).filter((d) => d.startsWith("@reins/"))
  expect(deps).toContain("@reins/plugin")
  for (const dep of deps) expect(tarballs[dep]).toBeDefined()
})

test("the installed packages are the tarballs' built copies, not links into the workspace", () => {
  const installed = fs.readdirSync(path.join(app, "node_modules", "@reins"))
  expect(installed).toEqual(expect.arrayContaining(["runtime", "session", "storage", "tool", "domain", "permission"]))
  for (const name of installed) {
    const dir = path.join(app, "node_modules", "@reins", name)
    expect(fs.realpathSync(dir).startsWith(repo)).toBe(false)
    expect(fs.existsSync(path.join(dir, "src"))).toBe(false)
    expect(fs.existsSync(path.join(dir, "dist", "index.js"))).toBe(true)
    expect(fs.existsSync(path.join(dir, "dist", "index.d.ts"))).toBe(true)
    const manifest = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"))
    expect(JSON.stringify(manifest.dependencies ?? {})).not.toContain("workspace:")
    expect(manifest.exports["."].types).toBe("./dist/index.d.ts")
  }
})

test("the example and its custom tool file type-check with its own tsc and a plain tsconfig (strict, nodenext resolution)", async () => {
  const tsc = path.join(app, "node_modules", "typescript", "lib", "tsc.js")
  const out = await run([Bun.which("node") ?? process.execPath, tsc, "-p", "."], app)
  expect(out.stdout + out.stderr).toBe("")
  expect(out.code).toBe(0)
}, 120_000)

test("the example runs a turn with its custom tools (in code, and a .reins/tools file) and the grep tool against a model server on 127.0.0.1", async () => {
  const server = await startScriptedServer([
    {
      toolCalls: [
        { name: "shout", arguments: { text: "hi from the example" } },
        { name: "greet", arguments: { name: "file tool" } },
        { name: "grep", arguments: { pattern: "Upper-cases", include: "*.ts" } }
      ]
    },
    { text: "Done: HI FROM THE EXAMPLE" }
  ])
  try {
    const out = await run([process.execPath, "main.ts", "Shout hi"], app, { MODEL_BASE_URL: server.url })
    expect(out.stderr).not.toContain("rror")
    expect(out.code).toBe(0)
    expect(out.stdout.trim()).toBe("Done: HI FROM THE EXAMPLE")
    expect(server.requests).toHaveLength(2)
    expect(server.requests[0]!.body.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(expect.arrayContaining(["shout", "greet"]))
    const results = JSON.stringify(server.requests[1]!.body.messages)
    // the custom tool ran; the grep tool's child process (a file inside @reins/tool's dist) found the example's source
    expect(results).toContain("HI FROM THE EXAMPLE")
    // the tool file's import of @reins/plugin is the loader's module, with the installed package beside it
    expect(results).toContain("hello file tool")
    expect(results).toContain("main.ts")
  } finally {
    server.stop()
  }
}, 60_000)

test("the bash parser's wasm and the SQLite migrations load from the installed packages", async () => {
  const db = path.join(work, "data", "reins.db")
  fs.writeFileSync(
    path.join(app, "assets.ts"),
    `import { Effect } from "effect"
import { loadParser } from "@reins/permission"
import { openDatabase } from "@reins/storage"
const parser = await loadParser()
console.log(parser.parse("echo hi | grep h")?.rootNode.type)
const tags = await Effect.runPromise(Effect.scoped(Effect.map(openDatabase(${JSON.stringify(db)}), (client) => client.query("SELECT tag FROM __reins_migrations").all())))
console.log(JSON.stringify(tags))
`
  )
  const out = await ok([process.execPath, "assets.ts"], app)
  const [tree, tags] = out.trim().split("\n")
  expect(tree).toBe("program")
  expect((JSON.parse(tags!) as Array<{ tag: string }>).length).toBeGreaterThanOrEqual(3)
}, 30_000)
