// Issue 25 item 3: data that bash evaluates is code. Every variant of holes-eval.ts is asked or
// denied under `* allow, rm * deny`; ordinary commands near these classes stay allowed.
import { describe, expect, test } from "bun:test"
import { check } from "../src/Permission.ts"
import { holesProject } from "./support.ts"
import { arithmeticData, askedHarmless, commandTable, evaluatingBuiltins, evaluationQuiet, pathChanges, programRunners } from "./holes-eval.ts"

const { wt, rules, scan, judge } = holesProject("reins-eval-")

const reason = async (command: string) => (await scan(command)).find((r) => r.opaque !== undefined)?.opaque

const tables = [
  ["class 1: arithmetic, subscripts and names evaluated from data", arithmeticData],
  ["asked though bash runs nothing there", askedHarmless],
  ["class 2: builtins that evaluate strings", evaluatingBuiltins],
  ["class 3: the command table", commandTable],
  ["class 4: runners and program-naming options", programRunners],
  ["class 5: PATH changes", pathChanges]
] as const

for (const [name, table] of tables) {
  describe(name, () => {
    for (const command of table) {
      test(`not allowed: ${JSON.stringify(command)}`, async () => {
        const { requests, verdict } = await judge(command)
        expect(verdict).not.toBe("allow")
        // the rm is found (deny), or a bash request is opaque
        expect(requests.some((r) => check(rules, r).action === "deny" || (r.permission === "bash" && r.opaque !== undefined))).toBe(true)
      })
    }
  })
}

describe("ordinary commands near these classes stay allowed", () => {
  for (const command of evaluationQuiet) {
    test(`allow: ${JSON.stringify(command)}`, async () => {
      const { requests, verdict } = await judge(command)
      expect({ verdict, requests: verdict === "allow" ? [] : requests }).toEqual({ verdict: "allow", requests: [] })
    })
  }
})

describe("what the rules say", () => {
  test("an arithmetic operand is safe when the line knows it holds an integer", async () => {
    expect(await reason("(( n > 1 ))")).toBe("arithmetic evaluates the value of `n` as an expression (a value like a[$(cmd)] runs cmd)")
    expect(await reason("n=4; (( n > 1 ))")).toBeUndefined()
    // a conditional assignment leaves the value from before possible
    expect(await reason("if true; then n=4; fi; (( n > 1 ))")).toBeDefined()
    // arithmetic leaves an integer; data read into the name does not
    expect(await reason("(( n = 0 )); (( n++ )); echo $((n))")).toBeUndefined()
    expect(await reason("n=0; read n < f; (( n ))")).toBeDefined()
    expect(await reason("n=0; n=$(cat f); (( n ))")).toBeDefined()
    expect(await reason("n=$(wc -l < f); (( n ))")).toBeUndefined()
    expect(await reason("echo $(( $(cat f) ))")).toBe("arithmetic evaluates a command's output as an expression (a value like a[$(cmd)] runs cmd)")
    // a child shell does not see the line's integers
    expect(await reason("n=4; bash -c '(( n ))'")).toBeDefined()
  })

  test("names and subscripts builtins take from data", async () => {
    expect(await reason('read "$v"')).toBe(
      "read takes a variable name computed when it runs; bash evaluates a subscript in it as arithmetic (a value like a[$(cmd)] runs cmd)"
    )
    expect(await reason("read 'a[$i]'")).toBeDefined()
    expect(await reason("i=2; read 'a[i]'")).toBeUndefined()
    expect(await reason("declare -A m; read 'm[$k]'")).toBeUndefined()
    expect(await reason("v=$(cat f); echo ${!v}")).toBe(
      "`${!v}` uses a value as a variable name; bash evaluates a subscript in it as arithmetic (a value like a[$(cmd)] runs cmd)"
    )
  })

  test("a literal hash -p or BASH_CMDS entry is followed: the command is judged as the program it names", async () => {
    for (const command of ["hash -p /bin/rm ls; ls v.txt", "BASH_CMDS[ls]=/bin/rm; ls v.txt"]) {
      const { requests, verdict } = await judge(command)
      expect(verdict).toBe("deny")
      expect(requests.some((r) => r.patterns.includes("rm v.txt"))).toBe(true)
    }
  })

  test("after a PATH change bare names are opaque; builtins and paths are judged as before", async () => {
    expect(await reason("PATH=/opt/x/bin:$PATH; ls")).toBe("PATH changed earlier in the line: `ls` may be any program")
    const after = async (command: string) => (await scan(`PATH=/opt/x/bin:$PATH; ${command}`)).filter((r) => r.opaque !== undefined)
    expect(await after("echo hi; cd src; printf x")).toEqual([])
    expect(await after("/usr/bin/env")).toEqual([])
    expect((await judge("PATH=/opt/x/bin:$PATH; /bin/rm x")).verdict).toBe("deny")
    // a PATH for one command only: judged as written unless it names the project or /proc
    expect(await reason("PATH=/opt/x/bin:$PATH make; ls")).toBeUndefined()
    expect(await reason(`PATH=${wt}/bin:$PATH ls`)).toBeDefined()
  })

  test("strings that builtins evaluate are scanned as shell code", async () => {
    expect((await judge("mapfile -C 'rm v' -c 1 a < f")).verdict).toBe("deny")
    expect((await judge("compgen -W '$(rm v)' x")).verdict).toBe("deny")
    expect(await reason('mapfile -C "$cb" a < f')).toBe("mapfile runs shell code built at run time")
    expect((await judge("socat - EXEC:'rm v'")).verdict).toBe("deny")
    expect((await judge("ssh-agent rm v")).verdict).toBe("deny")
    expect(await reason("gcc -wrapper sh,-c,x x.c")).toBe("gcc -wrapper runs the program given in its options")
  })
})
