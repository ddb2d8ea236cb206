// Python's unittest: recognised by its command and by its output alone, failures kept with their
// tracebacks, passing tests counted, library frames trimmed; fixtures are real `python3 -m
// unittest` runs of fixtures/tests/projects/unittest*.
import { describe, expect, test } from "bun:test"
import { MAX_BYTES, MAX_LINES } from "@reins/truncate"
import * as fs from "node:fs"
import * as path from "node:path"
import { builtinReducers, runReducers } from "../src/index.ts"
import type { ReduceInput } from "../src/Reducer.ts"
import { unittest } from "../src/reducers/tests/unittest.ts"

const dir = path.join(import.meta.dir, "..", "fixtures", "tests")
const fixture = (name: string) => fs.readFileSync(path.join(dir, `${name}.txt`), "utf8")
const input = (text: string, command?: string): ReduceInput => ({ text, command, maxLines: MAX_LINES, maxBytes: MAX_BYTES })
const reduce = (text: string, command?: string) => runReducers(builtinReducers, input(text, command), { minBytes: 0 })
const ruler = (c: string) => c.repeat(70)

describe("unittest: choosing the reducer", () => {
  test.each([
    "python3 -m unittest -v",
    "python -m unittest",
    "python3.12 -m unittest discover -s tests -p 'test_*.py'",
    "python -W error -m unittest tests.test_cart",
    "poetry run python -m unittest",
    "python manage.py test shop",
    "cd site && ./manage.py test"
  ])("by command: %s", (command) => {
    expect(unittest.matches(input("nothing recognisable", command))).toBe(true)
  })

  test.each(["python3 app.py", "python -m pytest", "python -m unittest_helpers", "cat manage.py", "echo python -m unittest"])(
    "not by command: %s",
    (command) => {
      expect(unittest.matches(input("nothing recognisable", command))).toBe(false)
    }
  )

  test("by the output alone, verbose or not, whatever the command says", () => {
    for (const name of ["unittest-failing", "unittest-failing-quiet", "unittest-passing", "unittest-errors-failing"]) {
      expect(reduce(fixture(name))?.evidence.reducer).toBe("unittest")
      expect(reduce(fixture(name), "make test")?.evidence.reducer).toBe("unittest")
    }
  })

  test("Python 3.10 and earlier name the test by its class only", () => {
    const passes = Array.from({ length: 30 }, (_, i) => `test_row_${i} (tests.test_table.TableTests) ... ok`)
    const text = [
      ...passes,
      "",
      ruler("="),
      "FAIL: test_broken (tests.test_table.TableTests)",
      ruler("-"),
      "Traceback (most recent call last):",
      '  File "/p/tests/test_table.py", line 9, in test_broken',
      "    self.assertEqual(1, 2)",
      "AssertionError: 1 != 2",
      "",
      ruler("-"),
      "Ran 31 tests in 0.004s",
      "",
      "FAILED (failures=1)",
      ""
    ].join("\n")
    const r = reduce(text)!
    expect(r.evidence.reducer).toBe("unittest")
    expect(r.text.split("\n")[0]).toBe("unittest: 30 passing tests not shown; 1 failure kept")
    expect(r.text).toContain('  File "/p/tests/test_table.py", line 9, in test_broken\n    self.assertEqual(1, 2)\nAssertionError: 1 != 2')
  })

  test("declines prose and other runners' output", () => {
    expect(unittest.reduce(input("Lorem ipsum dolor sit amet\n".repeat(400), "python3 -m unittest"))).toBeUndefined()
    expect(unittest.reduce(input(fixture("pytest-failing"), "python3 -m unittest"))).toBeUndefined()
  })
})

describe("unittest: what is kept", () => {
  test("python3 -m unittest -v: every failure and error with its traceback, passing tests counted, the summary", () => {
    const text = fixture("unittest-failing")
    const r = reduce(text, "python3 -m unittest -v")!
    expect(r.evidence.reducer).toBe("unittest")
    expect(r.evidence.reasons.slice(0, 2)).toEqual(["passing_tests_counted", "failures_kept"])
    expect(r.text.split("\n")[0]).toBe("unittest: 405 passing tests not shown; 2 skipped not shown; 6 failures kept")
    // no passing test and no progress line is left
    expect(r.text).not.toContain("test_row_")
    expect(r.text).not.toContain(" ... ok")
    // a failure: its name, traceback, assertion and diff, in order
    const fail = r.text.indexOf("FAIL: test_format_price_uses_decimal_comma (tests.test_cart.CartTests.test_format_price_uses_decimal_comma)")
    expect(fail).toBeGreaterThanOrEqual(0)
    expect(r.text.slice(fail)).toStartWith(
      [
        "FAIL: test_format_price_uses_decimal_comma (tests.test_cart.CartTests.test_format_price_uses_decimal_comma)",
        "Traceback (most recent call last):",
        '  File "/tmp/reduce-capture/unittest/tests/test_cart.py", line 32, in test_format_price_uses_decimal_comma',
        '    self.assertEqual(format_price(123450), "€1.234,50")',
        "AssertionError: '€1234.50' != '€1.234,50'",
        "- €1234.50",
        "?      ^",
        "+ €1.234,50"
      ].join("\n")
    )
    // an error through the code under test keeps both frames and the exception
    expect(r.text).toContain(
      'shop.py", line 29, in stock_level\n    return inventory[sku]["on_hand"] - inventory[sku]["reserved"]\n           ~~~~~~~~~^^^^^\nKeyError: \'NEW-0001\''
    )
    // a subtest's parameters and a docstring stay with their failure
    expect(r.text).toContain("ERROR: test_every_family_parses (tests.test_cart.CartTests.test_every_family_parses) (family='q1x')")
    expect(r.text).toContain("(tests.test_cart.CartTests.test_total_applies_bulk_discount_at_10_items)\nTen items or more get 10% off.\nTraceback")
    // the long list diff keeps the differing rows, not the 120 equal ones
    expect(r.text).toContain("-  'ROW-0061 ok',")
    expect(r.text).toContain("+  'ROW-0061 low',")
    expect(r.text).not.toContain("'ROW-0030 ok'")
    expect(r.text).toEndWith("Ran 413 tests in 0.028s\nFAILED (failures=3, errors=3, skipped=2, expected failures=1)\n")
    expect(r.evidence.compactedBytes / r.evidence.originalBytes).toBeLessThan(0.12)
  })

  test("without -v the dots are counted the same", () => {
    const r = reduce(fixture("unittest-failing-quiet"), "python3 -m unittest")!
    expect(r.text.split("\n")[0]).toBe("unittest: 405 passing tests not shown; 2 skipped not shown; 6 failures kept")
    expect(r.text).not.toMatch(/^[.FEsx]{10,}/m)
  })

  test("a passing run is its count and verdict", () => {
    const r = reduce(fixture("unittest-passing"), "python3 -m unittest -v tests.test_slugify")!
    expect(r.text).toBe("unittest: 4 passing tests not shown\n\nRan 4 tests in 0.001s\nOK\n")
  })

  test("import errors, setUpClass errors and unexpected successes are failures; the standard library's frames go", () => {
    const r = reduce(fixture("unittest-errors-failing"), "python3 -m unittest -v")!
    // a test's own output pushed its status to the next line: still counted
    expect(r.text.split("\n")[0]).toBe("unittest: 3 passing tests not shown; 4 failures kept")
    expect(r.evidence.reasons).toContain("stack_trimmed")
    expect(r.text).not.toContain("unittest/loader.py")
    expect(r.text).not.toContain("json/decoder.py")
    // a library frame goes with its source and caret lines
    expect(r.text).not.toMatch(/internal frames?\n\s+[~^]+\n/)
    expect(r.text).toContain('  … 2 internal frames\n  File "/tmp/reduce-capture/unittest-errors/tests/test_orders.py", line 3, in <module>')
    expect(r.text).toContain(
      'settings.py", line 6, in load\n    return json.loads(text)\n           ^^^^^^^^^^^^^^^^\n  … 3 internal frames\njson.decoder.JSONDecodeError:'
    )
    expect(r.text).toContain("ERROR: setUpClass (tests.test_settings.DatabaseTests)")
    expect(r.text).toContain("UNEXPECTED SUCCESS: test_rejects_trailing_commas")
    expect(r.text).toEndWith("FAILED (errors=3, unexpected successes=1)\n")
  })

  test("CRLF line ends give the same result", () => {
    const text = fixture("unittest-failing")
    expect(reduce(text.replace(/\n/g, "\r\n"), "python3 -m unittest -v")!.text).toBe(reduce(text, "python3 -m unittest -v")!.text)
  })
})

describe("unittest: a failing doctest", () => {
  test("the lines after the doctest's own ruler are kept: where the example is, the example, what was expected and what came", () => {
    const passing = Array.from({ length: 400 }, (_, i) => `test_case_${i} (tests.test_gen.TestGen.test_case_${i}) ... ok`)
    const text = [
      ...passing,
      "add (mymod)",
      "Doctest: mymod.add ... FAIL",
      "",
      ruler("="),
      "FAIL: add (mymod)",
      "Doctest: mymod.add",
      ruler("-"),
      "Traceback (most recent call last):",
      '  File "/usr/lib/python3.11/doctest.py", line 2221, in runTest',
      "    raise self.failureException(self.format_failure(new.getvalue()))",
      "AssertionError: Failed doctest test for mymod.add",
      '  File "/work/proj/mymod.py", line 1, in add',
      "",
      ruler("-"),
      'File "/work/proj/mymod.py", line 5, in mymod.add',
      "Failed example:",
      "    add(1, 2)",
      "Expected:",
      "    4",
      "Got:",
      "    3",
      "",
      "",
      ruler("-"),
      "Ran 401 tests in 0.031s",
      "",
      "FAILED (failures=1)",
      ""
    ].join("\n")
    const r = reduce(text, "python -m unittest -v")!
    expect(r.evidence.reducer).toBe("unittest")
    expect(r.text).toContain('File "/work/proj/mymod.py", line 5, in mymod.add\nFailed example:\n    add(1, 2)\nExpected:\n    4\nGot:\n    3\n')
    expect(r.text).toEndWith("Ran 401 tests in 0.031s\nFAILED (failures=1)\n")
    expect(r.text).not.toContain("test_case_12")
  })
})

describe("unittest: --durations (Python 3.12)", () => {
  const failing = (durations: ReadonlyArray<string>, hidden = false) =>
    [
      "test_fast (tests.test_cart.CartTests.test_fast) ... ok",
      "test_total (tests.test_cart.CartTests.test_total) ... FAIL",
      "",
      ruler("="),
      "FAIL: test_total (tests.test_cart.CartTests.test_total)",
      ruler("-"),
      "Traceback (most recent call last):",
      '  File "/p/tests/test_cart.py", line 12, in test_total',
      "    self.assertEqual(cart.total(), 30)",
      "AssertionError: 25 != 30",
      "",
      "Slowest test durations",
      ruler("-"),
      ...durations,
      "",
      ...(hidden ? ["(durations < 0.001s were hidden; use -v to show these durations)"] : []),
      ruler("-"),
      "Ran 2 tests in 0.702s",
      "",
      "FAILED (failures=1)"
    ].join("\n")

  test("the durations are listed apart, not folded into the last failure's traceback", () => {
    const text = failing(["0.501s     test_total (tests.test_cart.CartTests.test_total)", "0.200s     test_fast (tests.test_cart.CartTests.test_fast)"])
    const out = reduce(text, "python3 -m unittest -v --durations 5")!
    expect(out.evidence.reducer).toBe("unittest")
    const failure = out.text.slice(out.text.indexOf("test_total"), out.text.indexOf("AssertionError: 25 != 30") + "AssertionError: 25 != 30".length)
    expect(failure).not.toContain("Slowest")
    expect(out.text).toContain("AssertionError: 25 != 30")
    const tail = out.text.slice(out.text.indexOf("AssertionError: 25 != 30"))
    expect(tail).toContain("Slowest test durations\n0.501s     test_total (tests.test_cart.CartTests.test_total)\n0.200s     test_fast")
    expect(out.text).toContain("FAILED (failures=1)")
    expect(out.text).toContain("1 passing test not shown; 1 failure kept")
  })

  test("a long list keeps the slowest ten and counts the rest; the hidden-durations note goes", () => {
    const many = Array.from({ length: 40 }, (_, i) => `${(0.9 - i * 0.01).toFixed(3)}s     test_${i} (tests.test_many.T.test_${i})`)
    const out = reduce(failing(many, true), "python -m unittest --durations 0")!
    expect(out.text).toContain("test_9 (tests.test_many.T.test_9)")
    expect(out.text).not.toContain("test_10 (tests.test_many.T.test_10)")
    expect(out.text).toContain("(30 faster tests not listed)")
    expect(out.text).not.toContain("were hidden")
    expect(out.text).toContain("AssertionError: 25 != 30")
  })
})
