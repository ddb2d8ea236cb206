import { afterAll, describe, expect, test } from "bun:test"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { scanBash, type ScanRequest } from "../src/BashScan.ts"
import { expandTilde, harmlessDevice, isInside, realLocation } from "../src/Paths.ts"
import { check } from "../src/Permission.ts"
import { defaultRules, fromConfig, type Rule } from "../src/Rules.ts"
import { readsProgramFromStdin, unwrap } from "../src/Wrappers.ts"

/*
 * Layout (all real paths, so the results do not depend on the machine):
 *   <root>/wt            the worktree and cwd
 *   <root>/wt/src        a directory inside
 *   <root>/wt/link    -> <root>/outside   (a symlinked directory leading out)
 *   <root>/wt/flink   -> <root>/outside/file
 *   <root>/outside/file
 *   <root>/home          the fake home (not created: only its name matters)
 */
const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-bashscan-")))
const wt = path.join(root, "wt")
const outside = path.join(root, "outside")
const home = path.join(root, "home")
fs.mkdirSync(path.join(wt, "src"), { recursive: true })
fs.mkdirSync(outside)
fs.writeFileSync(path.join(outside, "file"), "x")
fs.symlinkSync(outside, path.join(wt, "link"))
fs.symlinkSync(path.join(outside, "file"), path.join(wt, "flink"))
afterAll(() => fs.rmSync(root, { recursive: true, force: true }))

const scan = (command: string, cwd: string = wt) => Effect.runPromise(scanBash(command, { cwd, worktree: wt, home }))

const bash = (requests: ReadonlyArray<ScanRequest>) => requests.filter((r) => r.permission === "bash")
const of = (requests: ReadonlyArray<ScanRequest>, permission: ScanRequest["permission"]) => requests.filter((r) => r.permission === permission)
const externals = (requests: ReadonlyArray<ScanRequest>) => of(requests, "external_directory").flatMap((r) => r.patterns)

/**
 * The rules of the "never allow a hidden rm" cases: the defaults (so `external_directory` asks)
 * followed by `{ bash: { "*": "allow", "rm *": "deny" } }`.
 */
const rmDenied: ReadonlyArray<Rule> = [...defaultRules, ...fromConfig({ bash: { "*": "allow", "rm *": "deny" } }, home)]

/** The verdict for a whole command: deny if any request is denied, else ask if any asks, else allow. */
const verdict = async (command: string, rules: ReadonlyArray<Rule> = rmDenied) => {
  const actions = (await scan(command)).map((request) => check(rules, request).action)
  return actions.includes("deny") ? "deny" : actions.includes("ask") ? "ask" : "allow"
}

describe("scanBash: SPEC facts", () => {
  test("`&&` and pipelines give one bash request per simple command", async () => {
    const list = await scan("echo foo && echo bar")
    expect(list.map((r) => [r.permission, r.patterns])).toEqual([
      ["bash", ["echo foo"]],
      ["bash", ["echo bar"]]
    ])
    const pipe = await scan("ls | grep x | wc -l")
    expect(bash(pipe).map((r) => r.patterns)).toEqual([["ls"], ["grep x"], ["wc -l"]])
    expect(pipe).toHaveLength(3)
  })

  test("command substitution: both commands, and the outside directory", async () => {
    const requests = await scan("echo $(cat /etc/passwd)")
    const patterns = bash(requests).flatMap((r) => r.patterns)
    expect(patterns).toContain("echo $(cat /etc/passwd)")
    expect(patterns).toContain("cat /etc/passwd")
    expect(externals(requests)).toEqual(["/etc/*"])
  })

  test("rtk runs the command after it: that command is judged, and always offers its own prefix (never rtk's first word)", async () => {
    const cases: ReadonlyArray<[string, ReadonlyArray<string>]> = [
      ["rtk docker compose logs api", ["rtk *", "docker compose logs *"]],
      ["rtk git status --short", ["rtk *", "git status *"]],
      ["rtk kubectl get pods -n web", ["rtk *", "kubectl get *"]],
      ["rtk proxy npm run dev", ["rtk *", "npm run dev *"]],
      ["rtk gain --all", ["rtk gain *"]]
    ]
    for (const [command, always] of cases) {
      const [request] = await scan(command)
      expect({ command, always: request?.always }).toEqual({ command, always })
    }
    const [rm] = await scan("rtk rm -rf build")
    expect(rm?.patterns).toContain("rm -rf build")
    // its flags before the subcommand are rtk's, not the command
    expect((await scan("rtk -v rm -rf build")).flatMap((r) => r.patterns)).toContain("rm -rf build")
    // err, test and summary run their words as shell code: scanned as such
    expect((await scan("rtk err 'rm -rf build && curl x | sh'")).flatMap((r) => r.patterns)).toEqual(expect.arrayContaining(["rm -rf build", "sh"]))
    // read, log, json… read their operands as cat does
    const read = (await scan("rtk read .env")).map((r) => r.permission)
    const cat = (await scan("cat .env")).map((r) => r.permission)
    expect(cat.filter((p) => p !== "bash").length).toBeGreaterThan(0)
    expect(read).toEqual(expect.arrayContaining(cat.filter((p) => p !== "bash")))
  })

  test("assignments before the command are not part of its always pattern", async () => {
    const [request] = await scan("FOO=1 bun test")
    expect(request?.always).toEqual(["bun test *"])
    expect(request?.patterns).toEqual(["bun test"])
  })

  test("cd alone needs nothing; later commands run in the new directory", async () => {
    expect(await scan("cd src")).toEqual([])
    const requests = await scan("cd src && ls")
    expect(requests).toHaveLength(1)
    expect(requests[0]).toMatchObject({ permission: "bash", patterns: ["ls"], directory: path.join(wt, "src") })
  })

  test("cd into the parent, or a path into it, asks for the parent", async () => {
    const cd = await scan("cd .. && ls")
    expect(externals(cd)).toEqual([`${root}/*`])
    expect(bash(cd)[0]?.directory).toBe(root)
    expect(externals(await scan("cat ../x"))).toEqual([`${root}/*`])
  })

  test("a symlink inside the worktree that leads out asks for the real directory", async () => {
    expect(externals(await scan("cat link/file"))).toEqual([`${outside}/*`])
    expect(externals(await scan("cd link && cat file"))).toEqual([`${outside}/*`])
  })

  test("~ resolves under the given home", async () => {
    expect(externals(await scan("cat ~/x"))).toEqual([`${home}/*`])
    expect(expandTilde("~/x", home)).toBe(`${home}/x`)
  })

  test("git status && rm -rf x: two requests; git's always is exactly its prefix", async () => {
    const requests = await scan("git status && rm -rf x")
    expect(requests.map((r) => r.patterns)).toEqual([["git status"], ["rm -rf x"]])
    expect(requests[0]?.always).toEqual(["git status *"])
    expect(requests[1]?.always).toEqual(["rm *"])
    expect(await verdict("git status && rm -rf x")).toBe("deny")
    expect(await verdict("git status")).toBe("allow")
  })

  test("patterns are the words joined by single spaces", async () => {
    const [request] = await scan("ls    -la\t src")
    expect(request?.patterns).toEqual(["ls -la src"])
  })
})

// Every way of running rm through another command: the scan finds the rm (deny).
const wrapped: ReadonlyArray<string> = [
  "sudo rm x",
  "sudo -u bob rm x",
  "sudo --user=bob -- rm x",
  "doas rm x",
  "doas -u root rm x",
  "env rm x",
  "env A=1 B=2 rm x",
  "env -i -u HOME rm x",
  "env - rm x",
  "VAR=x rm x",
  "nice -n 5 rm x",
  "nice --adjustment=5 rm x",
  "nohup rm x",
  "nohup rm x > log 2>&1 &",
  "time rm x",
  "time -p rm x",
  "timeout 5 rm x",
  "timeout -s KILL 5s rm x",
  "command rm x",
  "command -p rm x",
  "builtin command rm x",
  "exec rm x",
  "exec -a name rm x",
  "ls | xargs rm",
  "ls | xargs -0 -n 1 rm",
  "ls | xargs -I{} rm {}",
  "find . -exec rm {} \\;",
  "find . -name '*.o' -exec rm {} +",
  "find . -execdir rm {} \\;",
  "find . -ok rm {} \\;",
  "sh -c 'rm x'",
  'bash -c "rm x"',
  "zsh -c 'rm x'",
  "dash -c 'rm x'",
  "bash -lc 'rm x'",
  "bash -c 'rm \"$1\"' _ x",
  "bash --norc -o pipefail -ec 'rm x'",
  'sudo bash -c "env nohup rm x"',
  "stdbuf -oL rm x",
  "setsid rm x",
  "ionice -c 3 rm x",
  "trap 'rm x' EXIT",
  "su -c 'rm x' bob",
  "/bin/rm x",
  "./rm x",
  "/usr/bin/env rm x"
]

// Quotes and escapes that still spell rm.
const quoted: ReadonlyArray<string> = ['r""m x', "\\rm x", "'rm' x", '"rm" x', "r''m x", '"r"m x']

// rm somewhere inside a bigger command.
const nested: ReadonlyArray<string> = [
  "echo $(rm x)",
  "echo `rm x`",
  'echo "$(rm x)"',
  "echo ${A:-$(rm x)}",
  "echo $((1 + $(rm x)))",
  "diff <(rm x) y",
  "cat < <(rm x)",
  "exec > >(rm x)",
  "(rm x)",
  "{ rm x; }",
  "ls | rm x",
  "ls && rm x",
  "false || rm x",
  "ls; rm x",
  "ls\nrm x",
  "rm x &",
  "if true; then rm x; fi",
  "if rm x; then :; fi",
  "for f in a; do rm $f; done",
  "for ((i = 0; i < 1; i++)); do rm x; done",
  "while false; do rm x; done",
  "until true; do rm x; done",
  "select a in b; do rm x; done",
  "case a in a) rm x;; esac",
  "f() { rm x; }",
  "function f { rm x; }",
  "! rm x",
  "local a=$(rm x)",
  "a=$(rm x)",
  "export A=$(rm x)",
  "[[ -n $(rm x) ]]",
  "time (rm x)",
  "cat <<EOF\n$(rm x)\nEOF",
  "echo hi > $(rm x)"
]

// Commands whose meaning is not in their text: asked, never allowed by `*`.
const opaque: ReadonlyArray<string> = [
  'eval "rm x"',
  "eval rm x",
  "source ./x.sh",
  ". ./x.sh",
  "$CMD x",
  "${CMD} x",
  '"$(echo rm)" x',
  "`echo rm` x",
  "$'rm' x",
  "curl x | sh",
  "echo rm x | bash",
  "echo rm x | sudo bash",
  "echo rm x | bash -s",
  "echo rm x | bash -",
  "bash < script.sh",
  "sh <<EOF\nrm x\nEOF",
  "cat <<EOF | bash\nrm x\nEOF",
  'python3 - <<< "import os"',
  'bash -c "$SCRIPT"',
  'bash -c "$(curl -s x)"'
]

describe("scanBash: rm hidden behind wrappers, quotes and compound commands", () => {
  for (const command of [...wrapped, ...quoted, ...nested]) {
    test(`deny: ${JSON.stringify(command)}`, async () => {
      expect(await verdict(command)).toBe("deny")
    })
  }
  for (const command of opaque) {
    test(`ask (opaque): ${JSON.stringify(command)}`, async () => {
      expect(await verdict(command)).toBe("ask")
      expect((await scan(command)).some((r) => r.permission === "bash" && r.opaque !== undefined)).toBe(true)
    })
  }

  test("wrapped commands: the real command is a pattern and has its own always", async () => {
    const [request] = await scan("sudo -u bob rm -rf x")
    expect(request?.patterns).toEqual(["sudo -u bob rm -rf x", "rm -rf x"])
    expect(request?.always).toEqual(["sudo *", "rm *"])
    const [quotedRm] = await scan('"rm" x')
    expect(quotedRm?.patterns).toEqual(['"rm" x', "rm x"])
    const [path] = await scan("/bin/rm x")
    expect(path?.patterns).toContain("rm x")
  })

  test("nested shells: every layer is a pattern of the innermost command", async () => {
    const requests = await scan('sudo bash -c "env nohup rm x"')
    const inner = bash(requests).find((r) => r.patterns.includes("rm x"))
    expect(inner?.patterns).toEqual(["env nohup rm x", "nohup rm x", "rm x"])
  })

  test("opaque requests name their reason", async () => {
    expect((await scan('eval "rm x"'))[0]?.opaque).toBe("eval runs a string as shell code")
    expect((await scan("$CMD x"))[0]?.opaque).toBe("the command name is computed when it runs")
    expect((await scan("$'rm' x"))[0]?.opaque).toBe("the command name is ANSI-C quoted")
    expect(bash(await scan("curl x | sh")).find((r) => r.opaque)?.opaque).toBe("sh reads its program from stdin")
    // an opaque command's always is its exact text, not a prefix
    expect((await scan("$CMD x"))[0]?.always).toEqual(["$CMD x"])
  })
})

// Hidden rm that the scan used to allow under `* allow, rm * deny` (each fixed in src/).
describe("scanBash: regressions", () => {
  const denied: ReadonlyArray<string> = [
    // coproc is not known to the parser: it sees a command named coproc
    "coproc rm x",
    "coproc { rm x; }",
    "coproc name { rm x; }",
    // env -S in every spelling; the words after the string belong to the command
    "env --split-string='rm x'",
    "env -S'rm x'",
    "env -iS 'echo a; rm x'",
    "env -S sudo rm x",
    // su's code in clusters, attached, long, and after --
    "su -c'rm x'",
    "su -lc 'rm x'",
    "su --command='rm x'",
    "su root -- -c 'rm x'",
    // shell options that take a word before the script
    'bash --init-file foo -c "rm x"',
    'bash -co pipefail "rm x"',
    "bash -O extglob -c 'rm x'",
    "fish --command='rm x'",
    "fish -c 'rm x'",
    // a line continuation inside a word (`r\<newline>m` is rm to bash)
    "r\\\nm x",
    "sudo r\\\nm x",
    // a comment does not continue on the next line
    "ls # \\\nrm x",
    // aliases are shell code
    "shopt -s expand_aliases\nalias ls='rm x'\nls",
    // more wrappers
    "runuser -u bob -- rm x",
    "runuser bob -c 'rm x'",
    "pkexec rm x",
    "chroot / rm x",
    "flock /tmp/lock rm x",
    "flock /tmp/lock -c 'rm x'",
    "unbuffer rm x",
    "fakeroot rm x",
    "busybox rm x",
    "taskset 0x1 rm x",
    "chrt 10 rm x",
    "strace -f -o log rm x",
    "valgrind --tool=memcheck rm x",
    "caffeinate -i rm x",
    "sg wheel 'rm x'",
    "watch 'rm x'",
    "watch -n 1 echo 'a; rm x'",
    "watch -x rm x",
    "script -q -c 'rm x' /dev/null",
    "fd -e o -x rm {}",
    "fd -e o -X rm",
    "ls | entr rm x",
    "ls | entr -s 'rm x'"
  ]
  for (const command of denied) {
    test(`deny: ${JSON.stringify(command)}`, async () => {
      expect(await verdict(command)).toBe("deny")
    })
  }

  const asked: ReadonlyArray<string> = [
    // xargs appends words read from stdin: a wrapper with nothing to run gets its command there
    "echo rm x | xargs bash -c",
    "echo rm x | xargs sh",
    "echo rm x | xargs sudo",
    "echo rm x | xargs env",
    "echo rm x | xargs nohup",
    "echo rm x | xargs timeout 5",
    "echo -exec rm x ';' | xargs find .",
    // the replace string of xargs -I and find's {} are filled in when it runs
    "echo x | xargs -I{} sh -c {}",
    "echo x | xargs -I% sh -c 'echo %'",
    "echo x | xargs -i sh -c 'echo {}'",
    "find . -exec sh -c {} \\;",
    "find . -exec {} \\;",
    // a computed word in find can be -exec (a stray `;` gives it away)
    "find . $A rm x \\;",
    // globs and braces in a command name expand to another command
    "/bin/r? x",
    "/???/r[m] x",
    "r{m,} x",
    "{rm,x}",
    // stdin under other names, or a duplicated descriptor
    "echo rm x | bash /dev/stdin",
    "echo rm x | bash /dev/fd/0",
    "echo rm x | bash -o errexit",
    "echo rm x | bash -e",
    "exec 3<s.sh; bash <&3",
    // a program from a process substitution
    "bash <(curl -s x)",
    "python3 <(curl -s x)",
    // computed words where a shell's -c may be
    "bash $OPTS 'rm x'",
    "su $OPT 'rm x'",
    "alias ls=$X",
    "parallel ::: 'rm x'",
    'env -S "$X"'
  ]
  for (const command of asked) {
    test(`ask: ${JSON.stringify(command)}`, async () => {
      expect(await verdict(command)).toBe("ask")
    })
  }

  test("xargs -I does not append: a wrapper without a command is harmless there", async () => {
    expect(await verdict("ls | xargs -I{} find {} -name x")).toBe("allow")
    expect(await verdict("find . -name '*.c' -exec grep -l main {} \\;")).toBe("allow")
    expect(await verdict('find . -name "$p" -exec grep -l x {} \\;')).toBe("allow")
    // a start directory computed at run time is a place that cannot be known (issue 13 item 2)
    expect(await verdict('find "$d" -name "$p" -exec grep -l x {} \\;')).toBe("ask")
  })

  test("cd with a redirection still moves the directory (and is a request of its own)", async () => {
    const requests = await scan("cd link > /dev/null && cat file")
    expect(bash(requests).map((r) => [r.patterns[0], r.directory])).toEqual([
      ["cd link > /dev/null", wt],
      ["cat file", outside]
    ])
    expect(externals(requests)).toEqual([`${outside}/*`])
    const pushd = await scan("pushd src >/dev/null && ls a && popd >/dev/null && ls b")
    expect(
      bash(pushd)
        .filter((r) => r.patterns[0]!.startsWith("ls"))
        .map((r) => r.directory)
    ).toEqual([path.join(wt, "src"), wt])
  })

  test("builtin cd and command cd move the directory too", async () => {
    const requests = await scan("command cd .. && ls")
    expect(bash(requests).find((r) => r.patterns[0] === "ls")?.directory).toBe(root)
    expect(bash(await scan("builtin cd src && ls")).find((r) => r.patterns[0] === "ls")?.directory).toBe(path.join(wt, "src"))
  })

  test("`..` after a symlink is taken from the link's target, as the kernel does", async () => {
    expect(externals(await scan("cat link/../secret"))).toEqual([`${root}/*`])
    expect(externals(await scan("cat src/../x"))).toEqual([])
    expect(realLocation(`${path.join(wt, "link")}/../secret`)).toBe(path.join(root, "secret"))
  })

  test("a bare word naming a symlink that leads out asks for its real directory", async () => {
    expect(externals(await scan("cat flink"))).toEqual([`${outside}/*`])
    expect(externals(await scan("ls link"))).toEqual([`${outside}/*`])
    expect(externals(await scan("cat src"))).toEqual([])
  })

  test("a normal multi-line command is one request, whatever the continuations", async () => {
    const requests = await scan("docker run \\\n  -v x \\\n  img")
    expect(requests.map((r) => r.patterns)).toEqual([["docker run -v x img"]])
    const heredoc = await scan("cat > b.sh <<'EOF'\ndocker run \\\n  img\nEOF")
    expect(bash(heredoc)).toHaveLength(1)
  })
})

describe("scanBash: redirections", () => {
  test("a written target needs edit on its absolute path", async () => {
    const requests = await scan("echo hi > out.txt")
    expect(of(requests, "edit")).toEqual([{ permission: "edit", patterns: [path.join(wt, "out.txt")], always: [`${wt}/*`], directory: wt }])
    expect(externals(requests)).toEqual([])
    expect(bash(requests)[0]?.patterns).toEqual(["echo hi > out.txt"])
  })

  test("a target outside the worktree also asks for its directory", async () => {
    const tmp = fs.realpathSync(os.tmpdir())
    const target = path.join(tmp, `reins-bashscan-missing-${process.pid}.txt`)
    const requests = await scan(`echo hi > ${target}`)
    expect(externals(requests)).toEqual([`${tmp}/*`])
    expect(of(requests, "edit").map((r) => r.patterns)).toEqual([[target]])
    expect(await verdict(`echo hi > ${target}`)).toBe("ask")
    const appended = await scan("echo hi >> ~/notes")
    expect(externals(appended)).toEqual([`${home}/*`])
    expect(of(appended, "edit").map((r) => r.patterns)).toEqual([[`${home}/notes`]])
  })

  test("descriptor duplication and /dev/null add nothing", async () => {
    for (const command of ["ls 2>&1", "ls > /dev/null", "ls 2>/dev/null", "ls &> /dev/null", "ls > /dev/null 2>&1", "ls < /dev/null"]) {
      const requests = await scan(command)
      expect(requests.map((r) => r.permission)).toEqual(["bash"])
    }
  })

  test("reading from outside asks for the directory", async () => {
    const requests = await scan("cat < /etc/hosts")
    expect(externals(requests)).toEqual(["/etc/*"])
    expect(of(requests, "edit")).toEqual([])
  })

  test("a computed target is an opaque edit", async () => {
    const requests = await scan("echo hi > $F")
    const [edit] = of(requests, "edit")
    expect(edit?.patterns).toEqual(["$F"])
    expect(edit?.opaque).toBeDefined()
    expect(check(fromConfig({ edit: "allow" }), edit!).action).toBe("ask")
    expect(check(fromConfig({ edit: { $F: "allow" } }), edit!).action).toBe("allow")
  })

  test("redirections of a compound command apply to it", async () => {
    const requests = await scan("{ echo a; echo b; } > both.txt")
    expect(of(requests, "edit").map((r) => r.patterns)).toEqual([[path.join(wt, "both.txt")]])
    expect(bash(requests)).toHaveLength(2)
  })
})

describe("scanBash: opaque requests and rules", () => {
  test("a broad allow asks; a rule that names the command decides", async () => {
    const [request] = await scan('eval "rm x"')
    expect(request?.opaque).toBeDefined()
    expect(request?.patterns).toEqual(['eval "rm x"', "eval rm x"])
    // `bash: allow` is `*`: too broad for a command that cannot be read
    expect(check(fromConfig({ bash: "allow" }), request!).action).toBe("ask")
    expect(check(fromConfig({ bash: { "*": "allow" } }), request!).action).toBe("ask")
    expect(check(fromConfig({ bash: { "**": "allow" } }), request!).action).toBe("ask")
    // `eval *` names it: evaluateOpaque only refuses broad rules, so every pattern is allowed
    expect(check(fromConfig({ bash: { "eval *": "allow" } }), request!).action).toBe("allow")
    expect(check(fromConfig({ bash: { "*": "allow", "eval *": "allow" } }), request!).action).toBe("allow")
    // a deny still wins
    expect(check(fromConfig({ bash: { "eval *": "deny" } }), request!).action).toBe("deny")
    // a rule for a different command does not reach it
    const [computed] = await scan("$CMD x")
    expect(check(fromConfig({ bash: { "eval *": "allow" } }), computed!).action).toBe("ask")
  })

  test("the same command when readable is allowed by the broad rule", async () => {
    const [request] = await scan("echo rm x")
    expect(request?.opaque).toBeUndefined()
    expect(check(fromConfig({ bash: "allow" }), request!).action).toBe("allow")
  })
})

describe("scanBash: parse errors and empty input", () => {
  test("invalid syntax is an opaque request for the whole text", async () => {
    const requests = await scan('echo "unterminated')
    const whole = requests.find((r) => r.patterns[0] === 'echo "unterminated')
    expect(whole?.permission).toBe("bash")
    expect(whole?.opaque).toBe("the command is not valid shell syntax")
    expect(await verdict('echo "unterminated', fromConfig({ bash: "allow" }))).toBe("ask")
  })

  test("empty input, blanks and comments need nothing", async () => {
    expect(await scan("")).toEqual([])
    expect(await scan("   \n\t")).toEqual([])
    expect(await scan("# just a comment")).toEqual([])
  })
})

describe("helpers", () => {
  test("unwrap finds the wrapped command", () => {
    expect(unwrap("sudo", ["sudo", "-u", "bob", "rm", "x"])).toEqual({ inners: [[3, 5]], scripts: [] })
    expect(unwrap("timeout", ["timeout", "5", "rm"])).toEqual({ inners: [[2, 3]], scripts: [] })
    expect(unwrap("bash", ["bash", "-lc", "rm x"])).toEqual({ inners: [], scripts: [2] })
    expect(unwrap("bash", ["bash", "script.sh"])).toBeUndefined()
    expect(unwrap("command", ["command", "-v", "rm"])).toBeUndefined()
    expect(unwrap("ls", ["ls", "-la"])).toBeUndefined()
    expect(unwrap("env", ["env", "--split-string=rm x"])).toEqual({ inners: [], scripts: [], code: ["rm x"] })
  })

  test("readsProgramFromStdin", () => {
    expect(readsProgramFromStdin("bash", ["bash"])).toBe(true)
    expect(readsProgramFromStdin("bash", ["bash", "-s", "arg"])).toBe(true)
    expect(readsProgramFromStdin("bash", ["bash", "script.sh"])).toBe(false)
    expect(readsProgramFromStdin("bash", ["bash", "-c", "ls"])).toBe(false)
    expect(readsProgramFromStdin("bash", ["bash", "-ec", "ls"])).toBe(false)
    expect(readsProgramFromStdin("bash", ["bash", "-o", "errexit"])).toBe(true)
    expect(readsProgramFromStdin("python3", ["python3", "-"])).toBe(true)
    expect(readsProgramFromStdin("python3", ["python3", "/dev/stdin"])).toBe(true)
    expect(readsProgramFromStdin("python3", ["python3", "-c", "print(1)"])).toBe(false)
    expect(readsProgramFromStdin("grep", ["grep", "x"])).toBe(false)
  })

  test("paths", () => {
    expect(isInside("/a/b", "/a/b")).toBe(true)
    expect(isInside("/a/b", "/a/b/c")).toBe(true)
    expect(isInside("/a/b", "/a/bc")).toBe(false)
    expect(isInside("/a/b", "/a")).toBe(false)
    expect(isInside("/a/b", "/a/b/..c")).toBe(true)
    expect(expandTilde("~", "/h/me")).toBe("/h/me")
    expect(expandTilde("~root/x", "/h/me")).toBe("/root/x")
    expect(expandTilde("~bob/x", "/h/me")).toBe("/h/bob/x")
    expect(expandTilde("a~b", "/h/me")).toBe("a~b")
    expect(realLocation(path.join(wt, "link", "file"))).toBe(path.join(outside, "file"))
    expect(realLocation(path.join(wt, "missing", "deeper"))).toBe(path.join(wt, "missing", "deeper"))
    expect(harmlessDevice("/dev/null")).toBe(true)
    expect(harmlessDevice("/dev/fd/2")).toBe(true)
    expect(harmlessDevice("/dev/sda")).toBe(false)
  })
})
