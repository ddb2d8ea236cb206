// Unit tests of the test-runner reducers beyond the corpus: how a reducer is chosen (command or
// sniffing), declining what it does not understand, go test -json, stack trimming, huge blocks,
// CRLF, and speed on large or hostile input.
import { describe, expect, test } from "bun:test"
import { MAX_BYTES, MAX_LINES } from "@reins/truncate"
import * as fs from "node:fs"
import * as path from "node:path"
import type { ReduceInput, Reducer } from "../src/index.ts"
import { builtinReducers, runReducers } from "../src/index.ts"
import { bunTest } from "../src/reducers/tests/bunTest.ts"
import { cargoTest } from "../src/reducers/tests/cargoTest.ts"
import { goTest } from "../src/reducers/tests/goTest.ts"
import { testReducers } from "../src/reducers/tests/index.ts"
import { jest } from "../src/reducers/tests/jest.ts"
import { nodeTest } from "../src/reducers/tests/nodeTest.ts"
import { pytest } from "../src/reducers/tests/pytest.ts"
import { unittest } from "../src/reducers/tests/unittest.ts"
import { vitest } from "../src/reducers/tests/vitest.ts"

const dir = path.join(import.meta.dir, "..", "fixtures", "tests")
const fixture = (name: string) => fs.readFileSync(path.join(dir, `${name}.txt`), "utf8")
const manifest = (name: string) => JSON.parse(fs.readFileSync(path.join(dir, `${name}.json`), "utf8")) as { command: string; reducer: string }
const fixtures = fs
  .readdirSync(dir)
  .filter((f) => f.endsWith(".json"))
  .map((f) => f.slice(0, -5))
  .sort()

const input = (text: string, command?: string): ReduceInput => ({ text, command, maxLines: MAX_LINES, maxBytes: MAX_BYTES })
const reduce = (text: string, command?: string) => runReducers(builtinReducers, input(text, command), { minBytes: 0 })
const all: ReadonlyArray<Reducer> = [goTest, cargoTest, pytest, unittest, vitest, jest, bunTest, nodeTest]

describe("choosing a reducer", () => {
  test("every reducer is in testReducers, under its documented name", () => {
    expect(testReducers.map((r) => r.name).sort()).toEqual(["bun_test", "cargo_test", "go_test", "jest", "node_test", "pytest", "unittest", "vitest"])
  })

  test.each([
    [goTest, "cd services/api && go test ./... 2>&1"],
    [goTest, "go test -json -run TestCart ./cart/"],
    [cargoTest, "cargo test --workspace"],
    [cargoTest, "cd crate && cargo +nightly test"],
    [pytest, "python -m pytest -x tests/"],
    [pytest, "uv run pytest -q"],
    [unittest, "python3 -m unittest -v"],
    [unittest, "cd api && python -m unittest discover -s tests"],
    [unittest, "uv run python -m unittest tests.test_cart"],
    [unittest, "./manage.py test shop"],
    [vitest, "npx vitest run"],
    [jest, "npx jest --ci src/cart"],
    [bunTest, "bun test --bail"],
    [nodeTest, "node --test test/"],
    [nodeTest, "npx mocha 'test/**/*.js'"]
  ] as const)("%o matches the command %s whatever the text", (reducer, command) => {
    expect(reducer.matches(input("no recognisable output", command))).toBe(true)
    expect(reducer.matches(input("no recognisable output"))).toBe(false)
  })

  test.each(["go build ./...", "cargo build --release", "git status", "tsc --noEmit", "ls -la test/", "cat pytest.ini"])(
    "no test reducer matches `%s` on plain text",
    (command) => {
      for (const reducer of all) expect(reducer.matches(input("src/a.ts:3:1 - error TS2322: Type 'x' is not assignable\n", command))).toBe(false)
    }
  )

  // the corpus runs with the manifest's command; here the command is unknown or misleading, so
  // only sniffing the content can pick the reducer
  for (const name of fixtures) {
    test(`${name} is recognised by its content alone`, () => {
      const { reducer } = manifest(name)
      const text = fixture(name)
      expect(reduce(text)?.evidence.reducer).toBe(reducer)
      expect(reduce(text, "npm test")?.evidence.reducer).toBe(reducer)
      expect(reduce(text, "make check 2>&1 | tee log.txt")?.evidence.reducer).toBe(reducer)
    })
  }
})

describe("declining", () => {
  const prose = "Lorem ipsum dolor sit amet\n".repeat(400)

  test.each(all.map((r) => [r.name, r] as const))("%s declines text it does not understand, even when the command says it is its runner", (_, reducer) => {
    expect(reducer.reduce(input(prose, "npm test"))).toBeUndefined()
  })

  test("cargo test that fails to compile is left to the build reducers", () => {
    const text = [
      "   Compiling shop v0.1.0 (/home/dev/shop)",
      "error[E0308]: mismatched types",
      "  --> src/lib.rs:12:5",
      "   |",
      '12 |     "x"',
      "   |     ^^^ expected `u32`, found `&str`",
      "",
      "error: could not compile `shop` (lib test) due to 1 previous error",
      ""
    ].join("\n")
    expect(cargoTest.matches(input(text, "cargo test"))).toBe(true)
    expect(cargoTest.reduce(input(text, "cargo test"))).toBeUndefined()
    expect(reduce(text, "cargo test")?.evidence.reducer).not.toBe("cargo_test")
  })

  test("a reducer given another runner's output declines instead of claiming it", () => {
    expect(jest.reduce(input(fixture("mocha-failing"), "npx jest"))).toBeUndefined()
    expect(cargoTest.reduce(input(fixture("pytest-failing"), "cargo test"))).toBeUndefined()
    expect(goTest.reduce(input(fixture("jest-failing"), "go test ./..."))).toBeUndefined()
  })
})

describe("what is kept", () => {
  // each runner's own count of passing tests, from its summary line, against the header's
  test.each([
    ["bun-test-failing", 460],
    ["jest-failing", 660],
    ["vitest-failing", 560],
    ["vitest-failing-default", 560],
    ["node-test-spec-failing", 460],
    ["node-test-tap-failing", 460],
    ["mocha-failing", 760],
    ["cargo-test-failing", 460],
    ["pytest-failing", 440],
    ["pytest-failing-quiet", 440],
    ["unittest-failing", 405],
    ["unittest-failing-quiet", 405],
    ["go-test-v-failing", 293],
    ["go-test-json-failing", 293]
  ] as const)("%s counts %i passing tests (suites not counted as tests)", (name, passed) => {
    const r = reduce(fixture(name), manifest(name).command)!
    expect(r.text.split("\n")[0]).toContain(`${passed} passing tests not shown`)
    expect(r.evidence.reasons).toContain("passing_tests_counted")
    expect(r.evidence.reasons).toContain("failures_kept")
  })

  test("passing test names are gone, failing ones kept once with their diff", () => {
    const r = reduce(fixture("jest-failing"), "npx jest --ci --verbose")!
    expect(r.text).not.toContain("row 17 subtotal")
    expect(r.text.match(/● cart › summary lists every line/g)?.length).toBe(1)
    expect(r.text).toContain('-   "total": 1440,')
    expect(r.text).toContain('+   "total": 1600,')
    expect(r.text).toContain("Tests:       5 failed, 660 passed, 665 total")
  })

  test("node --test spec: the closing 'failing tests' section is kept, the inline copies dropped", () => {
    const r = reduce(fixture("node-test-spec-failing"), "node --test")!
    expect(r.text.match(/✖ total applies the bulk discount at 10 items/g)?.length).toBe(1)
    expect(r.text).toContain("test at test/cart.mjs:19:3")
  })

  test("stack frames in node internals are trimmed, frames in the user's files kept", () => {
    const r = reduce(fixture("node-test-spec-failing"), "node --test")!
    expect(r.evidence.reasons).toContain("stack_trimmed")
    expect(r.text).not.toContain("node:internal/test_runner")
    expect(r.text).toContain("src/cart.mjs:14:17")
    expect(r.text).toContain("test/cart.mjs:32:22")
    expect(r.text).toMatch(/… \d+ internal frames/)
  })

  test("node_modules frames are trimmed in jest blocks, user frames kept", () => {
    const text = [
      "FAIL src/cart.test.ts",
      "  ● cart › loads prices",
      "",
      "    Error: connect ECONNREFUSED 127.0.0.1:5432",
      "",
      "      at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1555:16)",
      "      at Client.connect (node_modules/pg/lib/client.js:132:11)",
      "      at loadPrices (src/prices.ts:41:9)",
      "      at Object.<anonymous> (src/cart.test.ts:12:5)",
      "      at Promise.then.completed (node_modules/jest-circus/build/utils.js:298:28)",
      "",
      "Tests:       1 failed, 1 total",
      ""
    ].join("\n")
    const r = jest.reduce(input(text))!
    expect(r.reasons).toContain("stack_trimmed")
    expect(r.text).not.toContain("node_modules/pg")
    expect(r.text).not.toContain("jest-circus")
    expect(r.text).toContain("src/prices.ts:41:9")
    expect(r.text).toContain("src/cart.test.ts:12:5")
    expect(r.text).toContain("Error: connect ECONNREFUSED 127.0.0.1:5432")
  })

  test("cargo backtraces keep the crate's frames and drop std/core ones", () => {
    const r = reduce(fixture("cargo-test-failing-backtrace"))!
    expect(r.evidence.reasons).toContain("stack_trimmed")
    expect(r.text).not.toContain("core::panicking")
    expect(r.text).not.toContain("/rustc/")
    expect(r.text).toContain("shop::tier_price")
    expect(r.text).toContain("at ./src/lib.rs:125:20")
  })

  test("a go panic stays under its test, runtime and testing frames trimmed", () => {
    const r = reduce(fixture("go-test-v-failing"))!
    const block = r.text.slice(r.text.indexOf("--- FAIL: TestTierPrice"))
    expect(block.startsWith("--- FAIL: TestTierPrice (0.00s)\npanic: runtime error: index out of range [3] with length 3")).toBe(true)
    expect(r.text).not.toContain("testing.tRunner")
    expect(r.text).not.toContain("/usr/local/go/src/")
    expect(r.text).toContain("/home/dev/shop/cart/cart.go:70")
    // the parent of a failing subtest has no output of its own: only the subtest is shown
    expect(r.text).not.toContain("--- FAIL: TestFormatPrice (0.00s)")
    expect(r.text).toContain("--- FAIL: TestFormatPrice/euros (0.00s)")
  })

  test("a huge failure block is cut in the middle, keeping its name and locations", () => {
    const lines = ["(pass) a > ok [0.1ms]"]
    const diff = Array.from({ length: 500 }, (_, i) => (i % 50 === 25 ? `- row ${i} expected\n+ row ${i} received` : `  row ${i}`))
    lines.push(
      "error: expect(received).toEqual(expected)",
      "",
      ...diff,
      "",
      "      at <anonymous> (/repo/big.test.ts:88:20)",
      "(fail) big > table is unchanged [3.00ms]"
    )
    lines.push("", " 1 pass", " 1 fail", "Ran 2 tests across 1 file. [10.00ms]")
    const text = lines.join("\n")
    const r = bunTest.reduce(input(text, "bun test"))!
    expect(r.text).toContain("(fail) big > table is unchanged")
    expect(r.text).toContain("big.test.ts:88:20")
    expect(r.text).toContain("error: expect(received).toEqual(expected)")
    expect(r.text).toContain("- row 25 expected")
    expect(r.reasons).toContain("middle_dropped")
    expect(r.text.split("\n").length).toBeLessThan(130)
    expect(r.text.length).toBeLessThan(text.length / 3)
  })

  test("CRLF and colour make no difference to what is kept", () => {
    const plain = reduce(fixture("pytest-failing"), "pytest -v")!.text
    const crlf = reduce(fixture("pytest-failing").replace(/\n/g, "\r\n"), "pytest -v")!.text
    expect(crlf).toBe(plain)
    expect(crlf).not.toContain("\r")
    const coloured = reduce(fixture("bun-test-failing-colour"))!.text
    expect(coloured).not.toContain("\x1b[")
    expect(coloured).toContain("✗ cart > inventory report is unchanged")
    expect(coloured).toContain("- ROW-0061 low")
  })

  test("jest's `● Console` section is dropped, a suite that failed to run is kept", () => {
    const r = reduce(fixture("jest-errors-failing"))!
    expect(r.text).not.toContain("loading 3 fixtures")
    expect(r.text).not.toContain("● Console")
    expect(r.text).toContain("● Test suite failed to run")
    expect(r.text).toContain("Cannot find module '../src/missing.js' from '__tests__/broken.js'")
    expect(r.text).not.toContain("jest-resolve")
  })

  test("vitest: Failed Suites and Unhandled Errors are kept, `❯` frames in node internals trimmed", () => {
    const r = reduce(fixture("vitest-errors-failing"))!
    expect(r.text).toContain(" FAIL  tests/broken.ts [ tests/broken.ts ]")
    expect(r.text).toContain("Uncaught Exception")
    expect(r.text).toContain("❯ Timeout._onTimeout tests/leak.ts:3:28")
    expect(r.text).not.toContain("node:internal/timers")
    expect(r.text).toContain("Errors  1 error")
    expect(r.evidence.reasons).toContain("stack_trimmed")
  })

  test("pytest: with -v the short summary keeps one line per failure, not the repeated diff", () => {
    const r = reduce(fixture("pytest-failing"), "pytest -v")!
    expect(r.text.match(/'total': 1440,/g)?.length).toBe(1)
    expect(r.text).toContain("FAILED tests/test_cart.py::test_summary_lists_every_line - AssertionError")
  })

  test("pytest: library frames of a collection error are trimmed, the user's kept", () => {
    const r = reduce(fixture("pytest-errors-failing"))!
    expect(r.text).not.toContain("importlib/__init__.py")
    expect(r.text).toContain("tests/test_import.py:1: in <module>")
    expect(r.text).toContain("E   ModuleNotFoundError: No module named 'shop'")
    expect(r.text).toContain("DeprecationWarning: price_table() is deprecated")
  })

  test("pytest -q -x: the interruption banner and the bare closing counts are kept", () => {
    const text = [
      `F${".".repeat(60)}                                    [ 50%]`,
      "=================================== FAILURES ===================================",
      "___________________________________ test_a ____________________________________",
      "",
      "    def test_a():",
      ">       assert 1 == 2",
      "E       assert 1 == 2",
      "",
      "tests/test_a.py:2: AssertionError",
      "=========================== short test summary info ============================",
      "FAILED tests/test_a.py::test_a - assert 1 == 2",
      "!!!!!!!!!!!!!!!!!!!!!!!!!! stopping after 1 failures !!!!!!!!!!!!!!!!!!!!!!!!!!!",
      "1 failed, 60 passed in 0.12s",
      ""
    ].join("\n")
    const r = pytest.reduce(input(text, "pytest -q -x"))!
    expect(r.text).toContain("stopping after 1 failures")
    expect(r.text).toContain("1 failed, 60 passed in 0.12s")
    expect(r.text.split("\n")[0]).toBe("pytest: 60 passing tests not shown; 1 failure kept")
  })

  test("go: past ten packages the ok lines are counted", () => {
    const oks = Array.from({ length: 15 }, (_, i) => `ok  \texample.com/shop/p${i}\t0.01${i}s`)
    const text = ["--- FAIL: TestX (0.00s)", "    x_test.go:3: nope", "FAIL", "FAIL\texample.com/shop/x\t0.002s", ...oks, "FAIL", ""].join("\n")
    const r = goTest.reduce(input(text, "go test ./..."))!
    expect(r.text).toContain("example.com/shop/p9\t")
    expect(r.text).not.toContain("example.com/shop/p10\t")
    expect(r.text).toContain("… and 5 more packages ok")
    expect(r.text).toContain("x_test.go:3: nope")
  })

  test("skipped tests are counted apart from passing ones", () => {
    const text = ["(pass) a > one", "(skip) a > two", "(todo) a > three", "(fail) a > four", "", " 1 pass", " 1 skip", " 1 todo", " 1 fail", ""].join("\n")
    const r = bunTest.reduce(input(text))!
    expect(r.text.split("\n")[0]).toBe("bun test: 1 passing test not shown; 2 skipped not shown; 1 failure kept")
  })
})

describe("go test -json", () => {
  const event = (e: Record<string, unknown>) => JSON.stringify({ Time: "2024-05-14T10:21:03Z", Package: "example.com/x", ...e })
  const stream = [
    event({ Action: "start" }),
    event({ Action: "run", Test: "TestA" }),
    event({ Action: "output", Test: "TestA", Output: "=== RUN   TestA\n" }),
    event({ Action: "output", Test: "TestA", Output: "--- PASS: TestA (0.00s)\n" }),
    event({ Action: "pass", Test: "TestA", Elapsed: 0 }),
    event({ Action: "run", Test: "TestB" }),
    event({ Action: "output", Test: "TestB", Output: "=== RUN   TestB\n" }),
    // test2json may split one line over two events
    event({ Action: "output", Test: "TestB", Output: "    b_test.go:12: got 3, " }),
    event({ Action: "output", Test: "TestB", Output: "want 4\n" }),
    event({ Action: "output", Test: "TestB", Output: "--- FAIL: TestB (0.01s)\n" }),
    event({ Action: "fail", Test: "TestB", Elapsed: 0.01 }),
    event({ Action: "output", Output: "FAIL\n" }),
    event({ Action: "output", Output: "FAIL\texample.com/x\t0.015s\n" }),
    event({ Action: "fail", Elapsed: 0.015 }),
    // before Go 1.24 build errors went to stderr as plain text, between the events
    "# example.com/y",
    "y/y.go:3:2: undefined: z",
    ""
  ].join("\n")

  test("the events' output is read like -v text", () => {
    const r = goTest.reduce(input(stream))!
    expect(r.text.split("\n")[0]).toBe("go test -json: 1 passing test not shown; 2 failures kept")
    expect(r.text).toContain("--- FAIL: TestB (0.01s)\n    b_test.go:12: got 3, want 4")
    expect(r.text).toContain("FAIL\texample.com/x\t0.015s")
    expect(r.text).not.toContain('"Action"')
    expect(r.text).not.toContain("=== RUN")
    expect(r.text).toContain("# example.com/y\ny/y.go:3:2: undefined: z")
  })

  test("it is sniffed without the command", () => {
    expect(goTest.matches(input(stream))).toBe(true)
    expect(reduce(stream)?.evidence.reducer).toBe("go_test")
  })

  test("a build failure reported as build-output events is kept", () => {
    const text = [
      JSON.stringify({ ImportPath: "example.com/x [example.com/x.test]", Action: "build-output", Output: "# example.com/x [example.com/x.test]\n" }),
      JSON.stringify({ ImportPath: "example.com/x [example.com/x.test]", Action: "build-output", Output: "./x_test.go:9:2: undefined: Frob\n" }),
      JSON.stringify({ ImportPath: "example.com/x [example.com/x.test]", Action: "build-fail" }),
      event({ Action: "start" }),
      event({ Action: "output", Output: "FAIL\texample.com/x [build failed]\n" }),
      event({ Action: "fail", Elapsed: 0, FailedBuild: "example.com/x [example.com/x.test]" }),
      ""
    ].join("\n")
    const r = goTest.reduce(input(text, "go test -json ./..."))!
    expect(r.text).toContain("./x_test.go:9:2: undefined: Frob")
    expect(r.text).toContain("FAIL\texample.com/x [build failed]")
  })
})

// Speed is measured in bench/reduce.ts; these check that large and hostile inputs complete
// with the right result.
describe("large inputs", () => {
  test.each([
    ["bun test", (i: number) => `(pass) table > row ${i} [0.01ms]`, "(fail) table > broken [0.1ms]\n 1 fail"],
    [
      "go test -v ./...",
      (i: number) => `=== RUN   TestTable/row_${i}\n    --- PASS: TestTable/row_${i} (0.00s)`,
      "--- FAIL: TestBroken (0.00s)\n    x_test.go:9: boom\nFAIL\tx\t1.0s"
    ],
    [
      "pytest -v",
      (i: number) => `tests/test_table.py::test_row[${i}] PASSED                     [ 50%]`,
      "FAILED tests/test_table.py::test_broken\n=== 1 failed, 9 passed in 1.00s ==="
    ],
    ["cargo test", (i: number) => `test tests::row_${i} ... ok`, "test tests::broken ... FAILED\ntest result: FAILED. 9 passed; 1 failed"],
    ["npx jest --verbose", (i: number) => `    ✓ row ${i} (1 ms)`, "  ● table › broken\n\n    boom\n\nTests:       1 failed, 9 passed, 10 total"],
    ["node --test", (i: number) => `  ✔ row ${i} (0.1ms)`, "  ✖ broken (0.1ms)\n    Error: boom\nℹ tests 10"],
    [
      "python3 -m unittest -v",
      (i: number) => `test_row_${i} (tests.test_table.TableTests.test_row_${i}) ... ok`,
      `\n${"=".repeat(70)}\nFAIL: test_broken (tests.test_table.TableTests.test_broken)\n${"-".repeat(70)}\nAssertionError: boom\n\n${"-".repeat(70)}\nRan 10 tests in 1.000s\n\nFAILED (failures=1)`
    ]
  ] as const)("10 MB of `%s` output is reduced to its failure and summary", (command, line, end) => {
    const lines: Array<string> = []
    let size = 0
    for (let i = 0; size < 10_000_000; i++) {
      const l = line(i)
      lines.push(l)
      size += l.length + 1
    }
    const text = `${lines.join("\n")}\n${end}\n`
    const result = runReducers(testReducers, input(text, command))
    expect(result).toBeDefined()
    expect(result!.evidence.compactedBytes).toBeLessThan(2000)
    // the failing test or the failure count survives
    expect(result!.text).toMatch(/broken|1 failed/i)
  })

  test("a single 5 MB line with no newline does not hang any reducer", () => {
    const text = `${"a".repeat(2_500_000)}.ts:1 ${"(x ".repeat(800_000)}`
    for (const reducer of all) {
      reducer.matches(input(text, "npm test"))
      const r = reducer.reduce(input(text, `${reducer.name.replace("_", " ")}`))
      if (r) expect(r.text.length).toBeLessThan(text.length)
    }
  })
})

describe("failures alike: a parametrized test failing for every value", () => {
  const block = (n: number) => [
    `${"_".repeat(30)} test_price[${n}] ${"_".repeat(30)}`,
    "",
    `n = ${n}`,
    "",
    '    @pytest.mark.parametrize("n", range(45))',
    "    def test_price(n):",
    ">       assert price(n) == n * 10",
    `E       assert ${n * 10 + 1} == ${n * 10}`,
    `E        +  where ${n * 10 + 1} = price(${n})`,
    "",
    "tests/test_price.py:7: AssertionError"
  ]
  const output = (count: number, other = false) =>
    [
      `${"F".repeat(count)}${other ? "F" : ""} [100%]`,
      `${"=".repeat(35)} FAILURES ${"=".repeat(35)}`,
      ...Array.from({ length: count }, (_, n) => block(n)).flat(),
      ...(other
        ? [
            `${"_".repeat(30)} test_tax ${"_".repeat(30)}`,
            "",
            "    def test_tax():",
            ">       assert tax(100) == 20",
            "E       assert 19 == 20",
            "",
            "tests/test_tax.py:4: AssertionError"
          ]
        : []),
      `${"=".repeat(27)} short test summary info ${"=".repeat(27)}`,
      ...Array.from({ length: count }, (_, n) => `FAILED tests/test_price.py::test_price[${n}] - assert ${n * 10 + 1} == ${n * 10}`),
      ...(other ? ["FAILED tests/test_tax.py::test_tax - assert 19 == 20"] : []),
      `${count + (other ? 1 : 0)} failed in 0.31s`
    ].join("\n")

  test("45 near-identical failures: one in full, the others by what differs; smaller, and every name and value kept", () => {
    const text = output(45, true)
    const out = runReducers(builtinReducers, { text, command: "pytest -q", maxLines: 2000, maxBytes: 51_200 }, { minBytes: 0 })!
    expect(out.evidence.reducer).toBe("pytest")
    expect(out.text.length).toBeLessThan(text.length * 0.7)
    expect(out.text).toContain("(44 more failures like this one: only their lines that differ from it are shown)")
    for (let n = 0; n < 45; n++) {
      expect(out.text).toContain(`test_price[${n}]`)
      expect(out.text).toContain(`E       assert ${n * 10 + 1} == ${n * 10}`)
      expect(out.text).toContain(`where ${n * 10 + 1} = price(${n})`)
    }
    // the lines they share are shown once, with the first
    expect(out.text.split("tests/test_price.py:7: AssertionError").length - 1).toBe(1)
    // a different failure is never folded in
    expect(out.text).toContain("E       assert 19 == 20")
    expect(out.text).toContain("tests/test_tax.py:4: AssertionError")
  })

  test("two alike failures are both shown whole", () => {
    // called directly: so short a run is not worth reducing (runReducers keeps it as it is)
    const out = pytest.reduce({ text: output(2), command: "pytest -q", maxLines: 2000, maxBytes: 51_200 })!
    expect(out.text).not.toContain("more failures like this one")
    expect(out.text.split("tests/test_price.py:7: AssertionError").length - 1).toBe(2)
  })
})
