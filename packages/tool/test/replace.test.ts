import { describe, expect, test } from "bun:test"
import { replaceText, tooLarge } from "../src/builtin/Replace.ts"
import { Haystack, replacers } from "../src/builtin/Replacers.ts"
import { boundedDistance, similarityAtLeast } from "../src/builtin/Similarity.ts"

const run = (content: string, oldString: string, newString: string, replaceAll = false) =>
  replaceText(content, oldString, newString, { file: "f.ts", replaceAll })

/** The replacers that, on their own, find exactly one match (the ones that could solve the edit). */
const solvers = (content: string, oldString: string) =>
  replacers.filter((r) => !r.replaceAllOnly && r.find(new Haystack(content), oldString).length === 1).map((r) => r.name)

const ok = (result: ReturnType<typeof run>) => {
  if (!result.ok) throw new Error(`expected a match, got: ${result.message}`)
  return result
}

describe("the replacer ladder: each rung with a case only it solves", () => {
  test("exact", () => {
    const r = ok(run("const a = 1\nconst b = 2\n", "const b = 2", "const b = 3"))
    expect(r.replacer).toBe("exact")
    expect(r.text).toBe("const a = 1\nconst b = 3\n")
    expect(r.lines).toEqual([2])
  })

  test("line-trimmed: the lines match once trimmed, but their relative indentation differs", () => {
    const content = "  foo(a)\n  bar()\nx = foo(a) bar()\n"
    const oldString = "foo(a)\n    bar()"
    expect(solvers(content, oldString)).toEqual(["line-trimmed"])
    const r = ok(run(content, oldString, "foo(b)\n    baz()"))
    expect(r.replacer).toBe("line-trimmed")
    // newString was written in oldString's indentation: each of its levels becomes the file's (bar's line had the
    // file's two spaces where the model wrote four, and so does baz's)
    expect(r.text).toBe("  foo(b)\n  baz()\nx = foo(a) bar()\n")
  })

  test("block-anchor: first and last lines anchor, the middle gained a line", () => {
    const content = [
      "function total(items) {",
      "  let sum = 0",
      "  // add up the prices",
      "  for (const item of items) sum += item.price",
      "  return sum",
      "}",
      ""
    ].join("\n")
    const oldString = "function total(items) {\n  let sum = 0\n  for (const item of items) sum += item.price\n  return sum\n}"
    expect(solvers(content, oldString)).toEqual(["block-anchor"])
    const r = ok(run(content, oldString, "function total(items) {\n  return items.reduce((s, i) => s + i.price, 0)\n}"))
    expect(r.replacer).toBe("block-anchor")
    expect(r.text).toBe("function total(items) {\n  return items.reduce((s, i) => s + i.price, 0)\n}\n")
  })

  test("whitespace-normalized: `const   x    =     5;` found by `const x = 5;`", () => {
    const content = "let y = 1\nconst   x    =     5;\n"
    expect(solvers(content, "const x = 5;")).toEqual(["whitespace-normalized"])
    const r = ok(run(content, "const x = 5;", "const x = 6;"))
    expect(r.replacer).toBe("whitespace-normalized")
    expect(r.text).toBe("let y = 1\nconst x = 6;\n")
  })

  test("indentation-flexible: only one block has the same relative indentation", () => {
    const content = "    foo()\n      bar()\nfoo()\nbar()\n"
    const oldString = "  foo()\n    bar()"
    expect(solvers(content, oldString)).toEqual(["indentation-flexible"])
    const r = ok(run(content, oldString, "  foo(1)\n    bar(1)"))
    expect(r.replacer).toBe("indentation-flexible")
    // newString was written at oldString's indentation, so it is shifted to the file's.
    expect(r.text).toBe("    foo(1)\n      bar(1)\nfoo()\nbar()\n")
  })

  test("escape-normalized: a literal \\n in oldString against a real newline", () => {
    const content = "const s = [\n  alpha,\n  beta\n]\n"
    const oldString = "  alpha,\\n  beta"
    expect(solvers(content, oldString)).toEqual(["escape-normalized"])
    const r = ok(run(content, oldString, "  alpha,\\n  gamma"))
    expect(r.replacer).toBe("escape-normalized")
    expect(r.text).toBe("const s = [\n  alpha,\n  gamma\n]\n")
  })

  test("trimmed-boundary: the trimmed text is unique where a whitespace-blind search is not", () => {
    const content = "x = foo  bar\ny = foo bar + 1\n"
    const oldString = "\tfoo bar\t"
    expect(solvers(content, oldString)).toEqual(["trimmed-boundary"])
    const r = ok(run(content, oldString, "baz"))
    expect(r.replacer).toBe("trimmed-boundary")
    expect(r.text).toBe("x = foo  bar\ny = baz + 1\n")
  })

  test("context-aware: same line count, half the middle equal, the rest too different for block-anchor", () => {
    const content = [
      "export function load(path) {",
      '  const raw = readFileSync(path, "utf8")',
      '  return JSON.parse(raw, function reviver(key, value) { return typeof value === "string" ? value.trim() : value })',
      "}",
      ""
    ].join("\n")
    const oldString = 'export function load(path) {\n  const raw = readFileSync(path, "utf8")\n  return parse(raw)\n}'
    expect(solvers(content, oldString)).toEqual(["context-aware"])
    const r = ok(run(content, oldString, 'export const load = (path) => JSON.parse(readFileSync(path, "utf8"))'))
    expect(r.replacer).toBe("context-aware")
    expect(r.text).toBe('export const load = (path) => JSON.parse(readFileSync(path, "utf8"))\n')
  })

  test("multi-occurrence: replaceAll reaches occurrences that differ from each other in whitespace", () => {
    const content = "foo(a,\n  b)\nif (x) {\n  foo(a,\n      b)\n}\nfoo(a, b)\n"
    const r = ok(run(content, "foo(a,\n  b)", "foo(a,\n  c)", true))
    expect(r.replacer).toBe("multi-occurrence")
    expect(r.replacements).toBe(2)
    // the exact one and the differently indented one; a one-line `foo(a, b)` is another text
    // newString's levels are mapped to each occurrence's own: c where that occurrence had b
    expect(r.text).toBe("foo(a,\n  c)\nif (x) {\n  foo(a,\n      c)\n}\nfoo(a, b)\n")
    // Without replaceAll the exact match is unique, and is the only one changed.
    const single = ok(run(content, "foo(a,\n  b)", "foo(a,\n  c)"))
    expect(single.replacer).toBe("exact")
    expect(single.text.match(/b\)/g)?.length).toBe(2)
  })
})

describe("the ladder refuses what it must", () => {
  test("anchors whose middle is unrelated are not a match", () => {
    const content = "function a() {\n  return database.connect(options)\n}\n"
    const r = run(content, 'function a() {\n  console.log("hello world")\n}', "x")
    expect(r.ok).toBe(false)
    if (!r.ok) expect(r.reason).toBe("not-found")
  })

  test("a span far larger than the search text is refused", () => {
    const lines = run("call(foo(a,\n\n\n\n b))\n", "foo(a, b)", "foo(c)")
    expect(lines.ok).toBe(false)
    if (!lines.ok) expect(lines.message).toContain("far more than oldString's 1 line")
    const chars = run(`x\na${" ".repeat(600)}\nb\n`, "a\nb", "c")
    expect(chars.ok).toBe(false)
    expect(tooLarge("a\nb", `a${" ".repeat(600)}\nb`)).toBe(true)
    expect(tooLarge("a\nb", "a \nb")).toBe(false)
    expect(tooLarge("one", "one\ntwo\nthree")).toBe(false)
    expect(tooLarge("one", "one\ntwo\nthree\nfour")).toBe(true)
  })

  test("`test` in test/test/different/test without replaceAll: multiple matches with their lines", () => {
    const r = run("test\ntest\ndifferent\ntest", "test", "x")
    expect(r.ok).toBe(false)
    if (!r.ok) {
      expect(r.reason).toBe("multiple")
      expect(r.message).toContain("3 matches")
      expect(r.message).toContain("lines 1, 2, 4")
      expect(r.message).toContain("Add more surrounding context to oldString to make the match unique, or set replaceAll")
    }
  })

  test("replaceAll foo → qux in `foo bar foo baz foo`", () => {
    const r = ok(run("foo bar foo baz foo", "foo", "qux", true))
    expect(r.text).toBe("qux bar qux baz qux")
    expect(r.replacer).toBe("exact")
    expect(r.replacements).toBe(3)
  })

  test("identical strings and a no-op match are refused", () => {
    expect(run("abc", "abc", "abc")).toMatchObject({ ok: false, reason: "identical" })
  })
})

describe("review regressions", () => {
  test("replaceAll does not widen into substrings of unrelated code", () => {
    const r = ok(run("  x = 1\n  x = 1\nmax = 10\n", "  x = 1\n", "  y = 2\n", true))
    expect(r.text).toBe("  y = 2\n  y = 2\nmax = 10\n")
    const tabs = ok(run("\tcount(1)\n\tcount(2)\nlet counter = account\n", "\tcount", "\ttotal", true))
    expect(tabs.text).toBe("\ttotal(1)\n\ttotal(2)\nlet counter = account\n")
  })

  test("loose matchers keep the file's own indentation and newlines", () => {
    expect(ok(run("x\n  foo  bar\n", "  foo bar", "  baz")).text).toBe("x\n  baz\n")
    expect(ok(run("foo  bar\nnext\n", "foo bar\n", "baz\n")).text).toBe("baz\nnext\n")
    expect(ok(run("x=foo;\n", "\n  foo\n", "\n  bar\n")).text).toBe("x=bar;\n")
  })

  test("a loose match does not start or end inside a word", () => {
    expect(run("let counter = 1\n", "count ", "total ")).toMatchObject({ ok: false })
  })

  test("escape-normalized reads newString's escapes too", () => {
    expect(ok(run('const s = "a"\n', 'const s = \\"a\\"', 'const s = \\"b\\"')).text).toBe('const s = "b"\n')
  })

  test("overlapping occurrences are several matches", () => {
    expect(run("aaa", "aa", "X")).toMatchObject({ ok: false, reason: "multiple" })
    expect(run("A\nx\nA\nx\nA\n", "A\nx\nA", "Q")).toMatchObject({ ok: false, reason: "multiple" })
  })

  test("the empty string after a final newline is not a line to match: no line is added", () => {
    expect(ok(run("  foo\n", "foo\n\n", "bar\n\n")).text).toBe("  bar\n")
  })

  test("block-anchor with anchors on every other line gives up instead of stalling", () => {
    const file = Array.from({ length: 3000 }, (_, i) => (i % 2 === 0 ? `  doSomething(${i}, "value number ${i}")` : "}")).join("\n")
    const search = ["}", ...Array.from({ length: 78 }, (_, i) => `  doOtherThing(${i}, "another value ${i}")`), "}"].join("\n")
    const r = run(file, search, "x")
    expect(r.ok).toBe(false)
  })

  test("a similarity of exactly the threshold passes", () => {
    const a = "a".repeat(180)
    const b = "b".repeat(63) + "a".repeat(117)
    expect(similarityAtLeast(a, b, 0.65)).toBeCloseTo(0.65)
  })
})

describe("the not-found message points at the nearest text", () => {
  const source = Array.from({ length: 80 }, (_, i) => {
    if (i === 40) return "export function price(item: Item, qty: number): number {"
    if (i === 41) return "  const base = item.unitPrice * qty"
    if (i === 42) return "  const discount = qty >= 10 ? 0.1 : 0"
    if (i === 43) return "  return Math.round(base * (1 - discount) * 100) / 100"
    if (i === 44) return "}"
    return `const value${i} = compute(${i}) // line ${i + 1}`
  }).join("\n")

  test("a changed middle line: the region's line numbers, the difference, and what to re-read", () => {
    const oldString = [
      "export function price(item: Item, quantity: number): number {",
      "  const base = item.price * qty",
      "  const discount = qty > 10 ? 0.2 : 0",
      "  return Math.round(base * (1 - discount) * 100) / 100",
      "}"
    ].join("\n")
    const r = run(source, oldString, "x")
    expect(r.ok).toBe(false)
    if (r.ok) return
    expect(r.message).toContain("Could not find oldString in f.ts")
    expect(r.message).toContain("lines 41-45")
    expect(r.message).toContain("2 of 5 lines of oldString match")
    expect(r.message).toContain('line 42 differs: you wrote "const base = item.price * qty", the file has "const base = item.unitPrice * qty"')
    expect(r.message).toContain("00042|   const base = item.unitPrice * qty")
    expect(r.message).toContain("00038| ")
    expect(r.message).toContain("00048| ")
    expect(r.message).not.toContain("00037| ")
    expect(r.message).toContain("Re-read lines 38-48 with the read tool (offset 38, limit 11)")
  })

  test("no identical line: the line sharing the most words is the nearest", () => {
    const r = run(source, "  const discount = quantity >= 10 ? 0.15 : 0", "x")
    expect(r.ok).toBe(false)
    if (!r.ok) expect(r.message).toContain("00043|   const discount = qty >= 10 ? 0.1 : 0")
  })

  test("spacing and quote differences are named", () => {
    const r = run("a\nconst s = \u201Chello\u201D\nb\n", 'const s = "hello"', "x")
    expect(r.ok).toBe(false)
    if (!r.ok) expect(r.message).toContain('line 2 differs in quote, dash or space characters: you wrote "const s = \\"hello\\""')
    const spaced = run("const  total=sum(a,b)\nnext()\n", "const total = sum(a, b)\nnext()\nmore()", "x")
    expect(spaced.ok).toBe(false)
    if (!spaced.ok) expect(spaced.message).toContain("line 1 differs in spacing")
  })
})

describe("similarity", () => {
  test("bounded edit distance agrees with the full one inside the bound", () => {
    expect(boundedDistance("kitten", "sitting", 5)).toBe(3)
    expect(boundedDistance("kitten", "sitting", 2)).toBeGreaterThan(2)
    expect(boundedDistance("", "abc", 5)).toBe(3)
    expect(similarityAtLeast("abcdef", "abcdef", 0.65)).toBe(1)
    expect(similarityAtLeast("abcdefghij", "abcdefghiX", 0.65)).toBeCloseTo(0.9)
    expect(similarityAtLeast("abcdefghij", "zyxwvutsrq", 0.65)).toBe(0)
  })
})

describe("newString in the file's indentation, level by level", () => {
  // the model writes spaces (or other widths) where the file has tabs: every level maps, nested lines keep their depth
  const cases: ReadonlyArray<[string, string, string, string, string]> = [
    [
      "tabs in the file, 4 spaces from the model, a line nested deeper than any matched",
      "func f() {\n\tif ok {\n\t\treturn 1\n\t}\n}\n",
      "    if ok {\n        return 1\n    }",
      "    if ok {\n        for x := range xs {\n            use(x)\n        }\n        return 1\n    }",
      "func f() {\n\tif ok {\n\t\tfor x := range xs {\n\t\t\tuse(x)\n\t\t}\n\t\treturn 1\n\t}\n}\n"
    ],
    [
      "tabs in the file, 2 spaces from the model",
      "\tif (a) {\n\t\tb()\n\t}\n",
      "  if (a) {\n    b()\n  }",
      "  if (a) {\n    b()\n    if (c) {\n      d()\n    }\n  }",
      "\tif (a) {\n\t\tb()\n\t\tif (c) {\n\t\t\td()\n\t\t}\n\t}\n"
    ],
    [
      "2 spaces in the file, 4 from the model",
      "def f():\n  if a:\n    b()\n",
      "    if a:\n        b()",
      "    if a:\n        b()\n        if c:\n            d()",
      "def f():\n  if a:\n    b()\n    if c:\n      d()\n"
    ],
    [
      "4 spaces in the file, tabs from the model",
      "class A:\n    def f(self):\n        return 1\n",
      "\tdef f(self):\n\t\treturn 1",
      "\tdef f(self):\n\t\tif x:\n\t\t\treturn 2\n\t\treturn 1",
      "class A:\n    def f(self):\n        if x:\n            return 2\n        return 1\n"
    ],
    [
      "a line shallower than the matched block: one level up in the file's unit",
      "\tif a {\n\t\tb()\n\t}\n",
      "        b()",
      "        b()\n    }\n    c()",
      "\tif a {\n\t\tb()\n\t}\n\tc()\n\t}\n"
    ],
    ["the same indentation: newString as written", "\tx()\n\ty()\n", "\tx()\n\ty()", "\tx()\n\t  z()", "\tx()\n\t  z()\n"],
    [
      "a JSDoc comment added in a tab-indented file: its ' * ' lines keep their one-space offset, the levels stay tabs",
      "class A {\n\tf() {\n\t\treturn 1\n\t}\n}\n",
      "    f() {\n        return 1\n    }",
      "    /**\n     * Foo.\n     */\n    f() {\n        return 1\n    }",
      "class A {\n\t/**\n\t * Foo.\n\t */\n\tf() {\n\t\treturn 1\n\t}\n}\n"
    ],
    [
      "a block matched with a line the model left out (block anchor): only the base is mapped, the nesting stays valid",
      "class Cart:\n  def total(self, items):\n    sum = 0\n    # add up the prices\n    for item in items: sum += item.price\n    return sum\n",
      "    def total(self, items):\n        sum = 0\n        for item in items: sum += item.price\n        return sum",
      "    def total(self, items):\n        sum = 0\n        for item in items:\n            sum += item.price\n        return sum",
      "class Cart:\n  def total(self, items):\n    sum = 0\n    for item in items:\n      sum += item.price\n    return sum\n"
    ]
  ]
  for (const [name, content, oldString, newString, expected] of cases)
    test(name, () => {
      expect(ok(run(content, oldString, newString)).text).toBe(expected)
    })
})
