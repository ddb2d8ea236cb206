import { describe, expect, test } from "bun:test"
import { MAX_BYTES, MAX_LINES } from "@reins/truncate"
import * as fs from "node:fs"
import * as path from "node:path"
import { builtinReducers, runReducers } from "../src/index.ts"
import type { ReduceInput, Reducer } from "../src/Reducer.ts"
import { buildDiagnostics } from "../src/reducers/build/index.ts"

const dir = path.join(import.meta.dir, "..", "fixtures", "build")
const fixture = (name: string) => fs.readFileSync(path.join(dir, `${name}.txt`), "utf8")
const input = (text: string, command?: string): ReduceInput => ({ text, command, maxLines: MAX_LINES, maxBytes: MAX_BYTES })
const reduce = (text: string, command?: string) => buildDiagnostics.reduce(input(text, command))

describe("build_diagnostics matching", () => {
  test.each([
    "cd app && npx tsc --noEmit 2>&1",
    "tsc -p tsconfig.json",
    "npx eslint src --max-warnings 0",
    "cargo build --release",
    "cargo clippy --all-targets",
    "make -j4 all",
    "gcc -Wall -c main.c",
    "go vet ./...",
    "javac -d out Main.java",
    "./mvnw -B package",
    "npm run build",
    "pnpm run lint"
  ])("by command: %s", (command) => {
    expect(buildDiagnostics.matches(input("anything", command))).toBe(true)
  })

  test.each(["ls -la", "cat Makefile", "go test ./...", "cargo test", "echo tsc"])("not by command: %s", (command) => {
    expect(buildDiagnostics.matches(input("hello\nworld\n", command))).toBe(false)
  })

  test("by content when the command is unknown, also when the errors are at the end", () => {
    expect(buildDiagnostics.matches(input(fixture("rustc")))).toBe(true)
    expect(buildDiagnostics.matches(input(fixture("clang")))).toBe(true)
    const late = `${"generating assets\n".repeat(2000)}src/a.c:3:5: error: expected ';' before '}' token\n`
    expect(buildDiagnostics.matches(input(late))).toBe(true)
    expect(buildDiagnostics.matches(input("all good\n".repeat(50)))).toBe(false)
  })

  test("declines output it does not recognise", () => {
    expect(reduce("some unrelated\nprogram output\n".repeat(200), "make")).toBeUndefined()
  })
})

describe("build_diagnostics reduction", () => {
  test("eslint: every warning location is listed under its message, per file", () => {
    const text = fixture("eslint-stylish")
    const reduced = reduce(text, "npx eslint src")!.text
    const lines = reduced.split("\n")
    let file = ""
    let checked = 0
    for (const line of text.split("\n")) {
      if (line.startsWith("/")) file = line
      const m = /^\s+(\d+:\d+)\s+(error|warning)\s+(.*?)\s{2,}(\S+)$/.exec(line)
      if (!m) continue
      const single = `${file}:${m[1]}  ${m[2]}  ${m[3]}  ${m[4]}`
      if (reduced.includes(single)) {
        checked++
        continue
      }
      // grouped: under the "<severity>  <message>  <rule>  — N locations:" line, a "  <file>:a b c" line
      const at = lines.findIndex((l) => l.startsWith(`${m[2]}  ${m[3]}  ${m[4]}  — `))
      expect(at).toBeGreaterThanOrEqual(0)
      let i = at + 1
      while (i < lines.length && lines[i]!.startsWith("  ") && !lines[i]!.startsWith(`  ${file}:`)) i++
      expect(lines[i]!.slice(`  ${file}:`.length).split(" ")).toContain(m[1]!)
      checked++
    }
    expect(checked).toBe(546)
  })

  test("make: compile commands go, errors first with their snippets, notes and functions, then the warnings", () => {
    const r = reduce(fixture("make-gcc"), "make -k")!
    expect(r.reasons).toEqual(["noise_dropped", "repeats_grouped", "snippets_kept"])
    expect(r.text).not.toMatch(/^cc /m)
    expect(r.text).toContain("… 364 noise lines dropped …")
    const lines = r.text.split("\n")
    const error = lines.indexOf("src/broken/parser.c:25:20: error: ‘struct token’ has no member named ‘txt’; did you mean ‘text’?")
    expect(lines.slice(error - 1, error + 5)).toEqual([
      "src/broken/parser.c: In function ‘token_len’:",
      "src/broken/parser.c:25:20: error: ‘struct token’ has no member named ‘txt’; did you mean ‘text’?",
      "   25 |     return end - t.txt;",
      "      |                    ^~~",
      "      |                    text",
      "make: *** [Makefile:15: build/broken/parser.o] Error 1"
    ])
    const undeclared = lines.indexOf("src/broken/report.c:11:20: error: ‘precision’ undeclared (first use in this function)")
    expect(lines[undeclared - 1]).toBe("src/broken/report.c: In function ‘scaled’:")
    expect(lines[undeclared + 3]).toStartWith("src/broken/report.c:11:20: note: each undeclared identifier")
    // every warning comes after the last error, without the function or include chain it is in
    const firstWarning = lines.findIndex((l) => / warning: /.test(l))
    expect(firstWarning).toBeGreaterThan(undeclared)
    expect(r.text).not.toContain("In function ‘legacy_scale’")
    expect(r.text).not.toContain("In file included from")
    // the header warning is printed once per including file: kept once
    expect(r.text.match(/include\/legacy\.h:5:9: warning/g)).toHaveLength(1)
    expect(lines.slice(-3)).toEqual(["make: *** [Makefile:15: build/broken/report.o] Error 1", "make: Target 'app' not remade because of errors.", ""])
  })

  test("gcc invoked directly: errors first with their notes, each repeated kind of warning as one line", () => {
    const text = fixture("gcc-direct")
    const command = "gcc -std=c11 -Wall -Wextra -Iinclude -c src/legacy_report.c src/totals.c"
    expect(buildDiagnostics.matches(input(text, command))).toBe(true)
    expect(buildDiagnostics.matches(input(text))).toBe(true)
    const r = reduce(text, command)!
    // 41 functions' worth of warnings and their "In function" lines are most of the 34 KB
    expect(r.text.length / text.length).toBeLessThan(0.1)
    const lines = r.text.split("\n")
    // the errors, whole, before any warning; the note from a header keeps its include chain
    expect(lines.slice(0, 13)).toEqual([
      "src/totals.c: In function ‘row_total’:",
      "src/totals.c:5:20: error: too few arguments to function ‘clamp’",
      "    5 |     int discount = clamp(r->qty / 10);",
      "      |                    ^~~~~",
      "In file included from src/totals.c:2:",
      "include/report.h:10:5: note: declared here",
      "   10 | int clamp(int value, int lo, int hi);",
      "      |     ^~~~~",
      // a warning took this function's line in the output: the error still says where it is
      "src/totals.c: In function ‘rounded_total’:",
      "src/totals.c:12:18: error: ‘precision’ undeclared (first use in this function)",
      "   12 |     return sum * precision;",
      "      |                  ^~~~~~~~~",
      "src/totals.c:12:18: note: each undeclared identifier is reported only once for each function it appears in"
    ])
    const lastError = lines.findLastIndex((l) => / error: /.test(l))
    const firstWarning = lines.findIndex((l) => / warning: |^warning: /.test(l))
    expect(lastError).toBeLessThan(firstWarning)
    // one line per repeated kind, with its count and a few locations, those in the file with errors first
    for (const flag of ["-Wsign-compare", "-Wunused-variable", "-Wunused-parameter", "-Wreturn-type"]) {
      expect(r.text.split(`[${flag}]`)).toHaveLength(2)
    }
    expect(r.text).toContain(
      "warning: comparison of integer expressions of different signedness: ‘int’ and ‘unsigned int’ [-Wsign-compare]  — 41 times: src/totals.c:11:23, src/legacy_report.c:6:23, src/legacy_report.c:15:23, … 38 more"
    )
    // 40 different unused variables: one line for the message, then each variable (never one standing for the others)
    expect(r.text).toContain(
      "warning: unused variable … [-Wunused-variable]  — 40 times, 40 different:\n  ‘scratch_01’ src/legacy_report.c:4:9; ‘scratch_02’ src/legacy_report.c:13:9;"
    )
    for (let i = 1; i <= 40; i++) expect(r.text).toContain(`‘scratch_${String(i).padStart(2, "0")}’`)
    // one parameter unused 40 times, another once: each named, with how often
    expect(r.text).toContain(
      "warning: unused parameter … [-Wunused-parameter]  — 41 times, 2 different:\n  ‘n’ src/totals.c:9:50; ‘flags’ ×40 src/legacy_report.c:3:50"
    )
    // a warning seen once keeps its snippet; no function line of the warnings is left
    expect(r.text).toContain("src/totals.c:17:22: warning: format ‘%d’ expects argument of type ‘int’, but argument 3 has type ‘double’ [-Wformat=]\n   17 |")
    expect(r.text).not.toContain("In function ‘report_")
    expect(r.text).not.toContain("In function ‘print_totals’")
    expect(r.reasons).toEqual(["noise_dropped", "repeats_grouped", "snippets_kept"])
  })

  test("clang's format: repeated warnings of one flag collapse the same way, a few of a kind stay as they were", () => {
    const warning = (i: number) => `src/gen.c:${10 * i}:9: warning: unused variable 'tmp_${i}' [-Wunused-variable]\n    int tmp_${i} = 0;\n        ^\n`
    const few = (i: number) =>
      `src/gen.c:${10 * i + 5}:5: warning: implicit conversion loses integer precision: 'long' to 'int' [-Wshorten-64-to-32]\n    return total_${i};\n    ~~~~~~ ^~~~~~~~\n`
    const text =
      `${Array.from({ length: 30 }, (_, i) => warning(i + 1)).join("")}${few(1)}${few(2)}` +
      "src/main.c:4:12: error: use of undeclared identifier 'config'\n    return config.port;\n           ^\n31 warnings and 1 error generated.\n" +
      `${Array.from({ length: 30 }, (_, i) => warning(i + 1)).join("")}32 warnings generated.\n`
    const r = reduce(text, "clang -Wall -Wextra -Wshorten-64-to-32 -c src/gen.c src/main.c")!
    expect(r.text).toStartWith("src/main.c:4:12: error: use of undeclared identifier 'config'\n    return config.port;\n           ^\n")
    // a second compile printing the same 30 warnings again is not counted twice
    expect(r.text).toContain("warning: unused variable … [-Wunused-variable]  — 30 times, 30 different:\n  'tmp_1' src/gen.c:10:9; 'tmp_2' src/gen.c:20:9;")
    for (let i = 1; i <= 30; i++) expect(r.text).toContain(`'tmp_${i}'`)
    // two of a kind: the first whole, the other's location listed under it
    expect(r.text).toContain("[-Wshorten-64-to-32]\n    return total_1;\n    ~~~~~~ ^~~~~~~~\n  … the same message at 1 more location:\n    src/gen.c:25:5\n")
    expect(r.text).toEndWith("31 warnings and 1 error generated.\n32 warnings generated.\n")
  })

  test("the same message at many locations becomes one entry listing every location", () => {
    const text =
      Array.from({ length: 50 }, (_, i) => `src/m${i % 7}.ts(${i + 1},3): error TS2304: Cannot find name 'logger'.`).join("\n") +
      "\nsrc/x.ts(1,1): error TS2307: Cannot find module './y' or its corresponding type declarations.\n"
    const r = reduce(text, "tsc")!
    expect(r.reasons).toContain("repeats_grouped")
    expect(r.text.match(/Cannot find name 'logger'/g)).toHaveLength(1)
    expect(r.text).toContain("error TS2304: Cannot find name 'logger'.  — 50 locations:")
    for (let i = 0; i < 50; i++) expect(r.text).toContain(`src/m${i % 7}.ts(${i + 1},3)`)
    expect(r.text).toContain("src/x.ts(1,1): error TS2307")
  })

  test("clippy: two different truncation warnings of one kind are each named, never one under the other", () => {
    const cast = (from: string, to: string, line: number) =>
      `warning: casting \`${from}\` to \`${to}\` may truncate the value\n  --> src/io.rs:${line}:9\n   |\n${line} |         n as ${to}\n   |         ^^^^^^^^\n   |\n   = help: for further information visit https://rust-lang.github.io/rust-clippy/master/index.html#cast_possible_truncation\n\n`
    const text = `${Array.from({ length: 12 }, (_, i) => cast("u64", "u32", 10 + i)).join("")}${Array.from({ length: 9 }, (_, i) => cast("i64", "i16", 40 + i)).join("")}warning: \`io\` (lib) generated 21 warnings\n`
    const r = reduce(text, "cargo clippy --all-targets")!
    expect(r.text).toContain("warning: casting … to … may truncate the value  — 21 times, 2 different:")
    expect(r.text).toContain("`u64` `u32` ×12 src/io.rs:10:9 src/io.rs:11:9 src/io.rs:12:9 …")
    expect(r.text).toContain("`i64` `i16` ×9 src/io.rs:40:9 src/io.rs:41:9 src/io.rs:42:9 …")
    expect(r.text.length).toBeLessThan(text.length)
  })

  test("rustc repeats keep three snippets (their labels differ) and list the rest", () => {
    const one = (line: number, found: string) =>
      `error[E0308]: mismatched types\n --> src/main.rs:${line}:9\n  |\n${line} |     let x: i32 = v;\n  |            ---   ^ expected \`i32\`, found \`${found}\`\n\n`
    const text = `${["u8", "u16", "u32", "u64", "String"].map((t, i) => one(10 + i, t)).join("")}error: could not compile \`app\` (bin "app") due to 5 previous errors\n`
    const r = reduce(text, "cargo build")!
    expect(r.text.match(/^error\[E0308\]: mismatched types$/gm)).toHaveLength(3)
    for (const t of ["u8", "u16", "u32"]) expect(r.text).toContain(`found \`${t}\``)
    expect(r.text).toContain("  … the same message at 2 more locations:\n    src/main.rs:13:9, src/main.rs:14:9")
    expect(r.text).toEndWith('error: could not compile `app` (bin "app") due to 5 previous errors\n')
  })

  test("mvn: the recap after 'Failed to execute goal' does not repeat the errors", () => {
    const r = reduce(fixture("mvn-compile"), "mvn -B compile")!
    expect(r.text.match(/Main\.java:\[12,9\] cannot find symbol/g)).toHaveLength(1)
    expect(r.text.match(/Invoice\.java:\[7,48\] cannot find symbol/g)).toHaveLength(1)
    expect(r.text).not.toContain("Downloading from")
    expect(r.text).not.toContain("[Help 1]")
    expect(r.text).toContain("[INFO] BUILD FAILURE")
  })

  test("javac: a snippet at column 0 stays with its diagnostic", () => {
    const text = "Foo.java:1: error: class Bar is public, should be declared in a file named Bar.java\npublic class Bar {\n       ^\n1 error\n"
    const r = reduce(`${text}${"[INFO] Downloading from central: https://repo/x.pom\n".repeat(20)}`, "javac Foo.java")!
    expect(r.text).toStartWith(text.split("1 error")[0]!)
    expect(r.reasons).toEqual(["noise_dropped", "snippets_kept"])
  })

  test("passing verbose builds keep only their verdict", () => {
    expect(reduce(fixture("cargo-build-passing"), "cargo build -v")!.text).toMatch(/^… 6 noise lines dropped …\n {4}Finished `dev` profile/)
    const mvn = reduce(fixture("mvn-compile-passing"), "mvn -B compile")!.text
    expect(mvn).toContain("[INFO] BUILD SUCCESS")
    expect(mvn).toContain("[INFO] Total time:")
  })

  test("CRLF line ends and ANSI colours give the same result", () => {
    const plain = fixture("make-gcc")
    const coloured = plain.replace(/: (error|warning|note): /g, ": \x1b[01;31m\x1b[K$1:\x1b[m\x1b[K ").replace(/\n/g, "\r\n")
    expect(reduce(coloured, "make")!.text).toBe(reduce(plain, "make")!.text)
  })

  test("progress redrawn with carriage returns is dropped", () => {
    const text =
      "    Building [=====>     ] 3/10: core\r    Building [========>  ] 8/10: app\r\n" +
      " 45%\n 90%\nerror[E0425]: cannot find value `x` in this scope\n --> src/lib.rs:3:5\n  |\n3 |     x\n  |     ^ not found in this scope\n\n"
    const r = reduce(text, "cargo build")!
    expect(r.reasons).toContain("progress_dropped")
    expect(r.text).not.toContain("Building [")
    expect(r.text).not.toContain("%")
    expect(r.text).toContain(" --> src/lib.rs:3:5")
  })

  test("long runs of unrecognised lines are cut, but unlocated errors inside them stay", () => {
    const other = Array.from({ length: 200 }, (_, i) => `asset chunk-${i}.js ${i * 3} KiB [emitted]`)
    other.splice(120, 0, "ERROR in ./src/app.ts 3:5-20", "/usr/bin/ld: main.o: in function `main':")
    const text = `> app@1.0.0 build\n> webpack\n\n${other.join("\n")}\nwebpack compiled with 1 error\n`
    const r = reduce(text, "npm run build")!
    expect(r.reasons).toEqual(["noise_dropped", "middle_dropped"])
    expect(r.text).toContain("\nERROR in ./src/app.ts 3:5-20\n/usr/bin/ld: main.o: in function `main':\n")
    expect(r.text).toContain("asset chunk-0.js 0 KiB [emitted]")
    expect(r.text).toContain("webpack compiled with 1 error")
    expect(r.text).not.toContain("chunk-60.js")
    expect(r.text).toMatch(/…\d+ lines truncated…/)
  })

  test("runReducers picks build_diagnostics for the fixtures without a command", () => {
    for (const name of ["make-gcc", "gcc-direct", "tsc-pretty", "cargo-build", "javac", "mvn-compile", "clang"]) {
      const r = runReducers(builtinReducers, input(fixture(name)), { minBytes: 0 })
      expect(r?.evidence.reducer).toBe("build_diagnostics")
    }
  })

  // speed is measured in bench/reduce.ts
  test("deterministic on 10 MB", () => {
    const text = fixture("make-gcc").repeat(160)
    const a = reduce(text, "make")!
    expect(reduce(text, "make")!.text).toBe(a.text)
    expect(a.text.length).toBeLessThan(text.length / 20)
  })
})

describe("runReducers never makes the output larger", () => {
  test("a reduction smaller than the text but not once its evidence line is put before it is dropped", () => {
    const text = "x".repeat(9000)
    const saving = (bytes: number): Reducer => ({
      name: "tiny",
      matches: () => true,
      reduce: () => ({ text: text.slice(bytes), reasons: ["repeats_grouped"] })
    })
    expect(runReducers([saving(20)], input(text), { minBytes: 0 })).toBeUndefined()
    const kept = runReducers([saving(2000)], input(text), { minBytes: 0 })!
    expect(kept.evidence.compactedBytes).toBe(7000)
  })
})
