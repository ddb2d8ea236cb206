// Issue 13 items 1–3: every variant is asked or denied under `* allow, rm * deny`; ordinary
// commands stay allowed. The tables are in holes.ts (the CLI test runs them too).
import { describe, expect, test } from "bun:test"
import type { ScanRequest } from "../src/BashScan.ts"
import { isReservedName } from "../src/Keywords.ts"
import { check } from "../src/Permission.ts"
import { holesProject } from "./support.ts"
import { awkRunsCode, sedRunsCode } from "../src/Programs.ts"
import { fromConfig } from "../src/Rules.ts"
import { opaqueExecution, ordinary, reservedWords, variablePaths } from "./holes.ts"

const { root, home, rules, scan, judge } = holesProject("reins-holes-")

const denied = (requests: ReadonlyArray<ScanRequest>) => requests.some((r) => check(rules, r).action === "deny")

describe("item 1: reserved words after time, ! and coproc", () => {
  for (const command of reservedWords) {
    test(`not allowed: ${JSON.stringify(command)}`, async () => {
      const { requests, verdict } = await judge(command)
      expect(verdict).not.toBe("allow")
      // the rm inside is found (deny), or the command is opaque
      expect(denied(requests) || requests.some((r) => r.opaque !== undefined)).toBe(true)
    })
  }

  test("the real inner command is judged: time { …; } denies the rm and names it", async () => {
    const { requests, verdict } = await judge("time { rm x; }")
    expect(verdict).toBe("deny")
    expect(requests.filter((r) => r.permission === "bash").map((r) => r.patterns[0])).toEqual(["rm x"])
    expect((await judge("time for i in 1; do rm x; done")).verdict).toBe("deny")
    expect((await judge("! { rm x; }")).verdict).toBe("deny")
  })

  test("a reserved word or punctuation as a command name is opaque", async () => {
    const [request] = await scan("'{' rm x")
    expect(request?.opaque).toBe("`{` is a shell keyword where a command is expected")
    for (const name of ["{", "}", "!", "[[", "then", "done", "esac", "((", "&&"]) expect(isReservedName(name)).toBe(true)
    for (const name of [":", ".", "[", "ls", "time", "coproc", "./x", "-"]) expect(isReservedName(name)).toBe(false)
  })
})

describe("item 2: paths through variables", () => {
  for (const command of variablePaths) {
    test(`asks: ${JSON.stringify(command)}`, async () => {
      const { requests, verdict } = await judge(command)
      expect(verdict).not.toBe("allow")
      expect(requests.some((r) => r.permission === "external_directory")).toBe(true)
    })
  }

  test("a variable assigned earlier in the line names its directory; an unknown one asks for *", async () => {
    const externals = async (command: string) => (await scan(command)).filter((r) => r.permission === "external_directory").flatMap((r) => r.patterns)
    expect(await externals("D=/etc; head $D/passwd")).toEqual(["/etc/*"])
    expect(await externals("cat $HOME/.ssh/id_rsa")).toEqual([`${home}/.ssh/*`])
    expect(await externals("ls $PWD/..")).toEqual([`${root}/*`])
    expect(await externals("cat $X")).toEqual(["*"])
    expect(await externals("dd if=/etc/passwd of=x")).toEqual(["/etc/*"])
    // the variable of a condition, a subshell or a read is not trusted
    expect(await externals("if false; then HOME=.; fi; cat $HOME/.ssh/id_rsa")).toEqual(["*"])
    expect(await externals("D=.; read D; cat $D/x")).toEqual(["*"])
  })
})

describe("item 3: code that runs without being in the words", () => {
  for (const command of opaqueExecution) {
    test(`not allowed: ${JSON.stringify(command)}`, async () => {
      const { requests, verdict } = await judge(command)
      expect(verdict).not.toBe("allow")
      expect(denied(requests) || requests.some((r) => r.permission === "bash" && r.opaque !== undefined)).toBe(true)
    })
  }

  test("opaque requests say why; a rule that names the command still allows it", async () => {
    const reason = async (command: string) => (await scan(command)).find((r) => r.opaque !== undefined)?.opaque
    expect(await reason("printf 'rm x' > s.sh; sh s.sh")).toBe("it runs a file that the same command writes")
    expect(await reason("python3 -c 'import os'")).toBe("python3 -c runs inline code")
    expect(await reason("PAGER='rm x' git log")).toBe("PAGER names a program or code that other programs run")
    expect(await reason("find . -delete")).toBe("find -delete removes files")
    const [request] = await scan("python3 -c 'print(1)'")
    expect(check(fromConfig({ bash: { "python3 *": "allow" } }), request!).action).toBe("allow")
    expect(check(fromConfig({ bash: { "*": "allow" } }), request!).action).toBe("ask")
  })

  test("wrappers that can be read are unwrapped: the rm inside is denied", async () => {
    for (const command of ["toybox rm x", "nsenter -t 1 -m rm x", "unshare -m sh -c 'rm x'", "npx -c 'rm x'", "bwrap --ro-bind / / rm x"]) {
      expect((await judge(command)).verdict).toBe("deny")
    }
  })

  test("sed and awk readers", () => {
    expect(sedRunsCode("s/a/b/g;s/x/y/")).toBeUndefined()
    expect(sedRunsCode("1,/x/{s/a/b/;p}")).toBeUndefined()
    expect(sedRunsCode("$a\\\ntext")).toBeUndefined()
    expect(sedRunsCode("s/a/b/w /dev/stdout")).toBeUndefined()
    expect(sedRunsCode("y/abc/xyz/")).toBeUndefined()
    expect(sedRunsCode("s/a/b/e")).toBeDefined()
    expect(sedRunsCode("/x/e date")).toBeDefined()
    expect(sedRunsCode("s/a/b/w out")).toBeDefined()
    expect(sedRunsCode("s/a")).toBe("the sed script could not be read")
    expect(awkRunsCode("{ print $1 / 2 }")).toBeUndefined()
    expect(awkRunsCode('/a|b/ { print "x|y" }')).toBeUndefined()
    expect(awkRunsCode("$1 > 5 { print ($2 > 3) }")).toBeUndefined()
    expect(awkRunsCode('{ system("x") }')).toBeDefined()
    expect(awkRunsCode('{ print |& "x" }')).toBeDefined()
    expect(awkRunsCode('{ printf("%s", $1) > "f" }')).toBeDefined()
  })
})

describe("ordinary commands stay allowed", () => {
  for (const command of ordinary) {
    test(`allow: ${JSON.stringify(command)}`, async () => {
      const { requests, verdict } = await judge(command)
      expect({ verdict, requests: verdict === "allow" ? [] : requests }).toEqual({ verdict: "allow", requests: [] })
    })
  }
})
