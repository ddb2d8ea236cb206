// Benchmark: the bash permission scan. Parser load time (first scan, in a fresh process), then
// scan + evaluate per command over 1,000 varied commands, against parse alone as the baseline.
// `reins --version` is measured beside a bare `bun` start. Usage: bun bench/permission.ts
import { check, defaultRules, fromConfig, loadParser, scanWith } from "@reins/permission"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { BIN, machine, measure, median, root, table } from "./support.ts"

const pct = (xs: ReadonlyArray<number>, p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!

// 1. load: each run is a new process, so nothing is cached
const loadScript = path.join(os.tmpdir(), `reins-bench-load-${process.pid}.ts`)
fs.writeFileSync(
  loadScript,
  `import { loadParser, scanWith } from ${JSON.stringify(path.join(root, "packages/permission/src/index.ts"))}\n` +
    `const t = performance.now(); scanWith(await loadParser(), "git status && ls", { cwd: process.cwd() }); console.log(performance.now() - t)\n`
)
const loads: Array<number> = []
for (let i = 0; i < 7; i++)
  loads.push(Number((await measure(["bun", loadScript], path.join(root, "packages/permission"), { PATH: process.env.PATH ?? "" })).stdout.trim()))
fs.rmSync(loadScript)

// 2. 1,000 varied commands from templates
const words = ["src", "test", "main", "feature/x", "a.txt", "build", "dist", "README.md", "pkg", "web"]
const templates: Array<(w: string, n: number) => string> = [
  (w) => `git status && git diff ${w}`,
  (w) => `git checkout -b ${w} && git push origin ${w}`,
  (w, n) => `npm run ${w} -- --port ${3000 + n}`,
  (w) => `ls -la ${w} | grep -v node_modules | wc -l`,
  (w) => `cd ${w} && bun test --timeout 5000`,
  (w) => `find . -name "*.ts" -path "*${w}*" -exec grep -l TODO {} \\;`,
  (w) => `echo "$(date) building ${w}" >> build.log 2>&1`,
  (w) => `sudo -u root systemctl restart ${w}`,
  (w) => `FOO=1 BAR=2 timeout 30 nice -n 5 pytest tests/${w} -x -q`,
  (w) => `bash -c 'cd ${w} && make -j4 all'`,
  (w) => `for f in ${w}/*.json; do jq .name "$f"; done`,
  (w) => `if [ -f ${w} ]; then cat ${w}; else echo missing; fi`,
  (w) => `docker compose up -d ${w} && docker compose logs --tail 50 ${w}`,
  (w) => `curl -sSL https://example.com/${w}.tar.gz | tar xz -C ${w}`,
  (w) => `xargs -n1 rm -f < ${w}.list`,
  (w) => `eval "$(ssh-agent -s)" && ssh-add ~/.ssh/${w}`,
  (w) => `diff <(sort ${w}) <(sort ${w}.orig) > ${w}.diff || true`,
  (w) => `cat <<EOF > ${w}.cfg\nname=${w}\nEOF`,
  (w) => `kubectl get pods -n ${w} -o json | jq '.items[].metadata.name'`,
  (w) => `cargo build --release && ./target/release/${w} --help`
]
const commands = Array.from({ length: 1000 }, (_, i) => templates[i % templates.length]!(words[Math.floor(i / templates.length) % words.length]!, i))
const rules = [...defaultRules, ...fromConfig({ bash: { "*": "allow", "rm *": "deny", "git push *": "ask", "sudo *": "ask" }, edit: { "*.lock": "deny" } })]
const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "reins-bench-scan-"))
const parser = await loadParser()
// warm up: one full pass, so the timed pass measures steady state (the first scan is in "load")
for (const c of commands) for (const r of scanWith(parser, c, { cwd })) check(rules, r)
Bun.gc(true)
// three timed passes; the pass with the median p99 is reported (one GC pause on a shared VM
// should not decide the figure), every pass's p99 is printed below the table
const passes: Array<{ scan: Array<number>; parseOnly: Array<number> }> = []
let requests = 0
for (let pass = 0; pass < 3; pass++) {
  const parseOnly: Array<number> = []
  const scan: Array<number> = []
  requests = 0
  for (const c of commands) {
    let t = performance.now()
    parser.parse(c)?.delete()
    parseOnly.push(performance.now() - t)
    t = performance.now()
    const found = scanWith(parser, c, { cwd })
    for (const r of found) check(rules, r)
    scan.push(performance.now() - t)
    requests += found.length
  }
  passes.push({ scan, parseOnly })
}
const byP99 = [...passes].sort((a, b) => pct(a.scan, 0.99) - pct(b.scan, 0.99))
const { scan, parseOnly } = byP99[1]!
fs.rmSync(cwd, { recursive: true, force: true })

// 3. start-up: reins --version beside a bare bun start
const version: Array<number> = []
const bare: Array<number> = []
for (let i = 0; i < 11; i++) {
  version.push((await measure([BIN, "--version"], root, { PATH: process.env.PATH ?? "" }, "reins v")).wallMs)
  bare.push((await measure(["bun", "-e", "0"], root, { PATH: process.env.PATH ?? "" })).wallMs)
}

const ms = (x: number) => `${x.toFixed(3)} ms`
const load = median(loads)
console.log(`\npermission — bash scan (1,000 commands, ${requests} requests; targets: load ≤ 60 ms, median ≤ 0.2 ms, p99 ≤ 2 ms)`)
console.log(`machine: ${machine()}\n`)
console.log(
  table(
    ["measure", "value", "baseline", "target", "met"],
    [
      ["parser load (first scan, fresh process, median of 7)", `${load.toFixed(1)} ms`, "-", "≤ 60 ms", load <= 60 ? "yes" : "NO"],
      ["scan + evaluate, median", ms(median(scan)), `parse only ${ms(median(parseOnly))}`, "≤ 0.2 ms", median(scan) <= 0.2 ? "yes" : "NO"],
      ["scan + evaluate, p99", ms(pct(scan, 0.99)), `parse only ${ms(pct(parseOnly, 0.99))}`, "≤ 2 ms", pct(scan, 0.99) <= 2 ? "yes" : "NO"],
      [
        "reins --version, median of 11",
        `${median(version).toFixed(0)} ms`,
        `bun -e 0: ${median(bare).toFixed(0)} ms`,
        "no slower than before (24 ms in issue 3)",
        "-"
      ]
    ]
  )
)
console.log(`\nload runs (ms): ${loads.map((x) => x.toFixed(1)).join(", ")}; p99 per pass (ms): ${passes.map((p) => pct(p.scan, 0.99).toFixed(3)).join(", ")}`)
