// `reins sessions fork` through the real CLI and the scripted model: a fork at the end of the first of two turns
// keeps that much of the conversation and, asked, brings the files back to that point — in a copy of the project
// made in a new directory (undo works in the copy), or in place; a file changed since stops it, named, until --force;
// a target that is not empty or lies in the project is refused. And the same fork over `reins serve`'s HTTP API.
import { beforeAll, describe, expect, test } from "bun:test"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { treeSnapshot as tree } from "@reins/testkit"
import { api, servers } from "./serve-support.ts"
import { ensureBuilt, events, projects, reins, reinsOk } from "./support.ts"

beforeAll(() => ensureBuilt())

const setup = projects()
const serve = servers()

const turns = [
  { toolCalls: [{ name: "write", arguments: { filePath: "notes.md", content: "first notes\n" } }] },
  { toolCalls: [{ name: "bash", arguments: { command: "rm old.txt && chmod 755 run.sh && mkdir -p gen && echo g > gen/g.txt && ln -s notes.md link.md" } }] },
  { text: "DONE-ONE" },
  { toolCalls: [{ name: "bash", arguments: { command: "echo SECOND-LINE >> notes.md && rm -r gen && echo new > later.txt" } }] },
  { text: "DONE-TWO" },
  { text: "DONE-FORKED" }
]

const ok = reinsOk

/** Two turns run; the trees before, after the first and after the second; the id of the first turn's last message. */
const twoTurns = async (git: boolean) => {
  const p = await setup(turns)
  if (!git) fs.rmSync(path.join(p.cwd, ".git"), { recursive: true })
  fs.writeFileSync(path.join(p.cwd, "old.txt"), "old\n")
  fs.writeFileSync(path.join(p.cwd, "run.sh"), "#!/bin/sh\n")
  fs.chmodSync(path.join(p.cwd, "run.sh"), 0o644)
  const before = tree(p.cwd)
  const first = await ok(["run", "--yolo", "--format", "json", "FIRST-PROMPT"], p)
  const sessionID = events(first.stdout)[0]!.session.id as string
  const afterOne = tree(p.cwd)
  await ok(["run", "--yolo", "--session", sessionID, "SECOND-PROMPT"], p)
  const afterTwo = tree(p.cwd)
  const shown = JSON.parse((await ok(["sessions", "show", sessionID, "--format", "json"], p)).stdout)
  const texts = (m: any) => m.parts.flatMap((x: any) => (x.type === "text" ? [x.text] : [])).join("")
  const endOfFirst = shown.messages.find((m: any) => texts(m) === "DONE-ONE").info.id as string
  return { p, sessionID, before, afterOne, afterTwo, endOfFirst }
}

const outside = () => path.join(fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-fork-"))), "copy")

for (const git of [true, false]) {
  describe(`reins sessions fork in ${git ? "a git repository" : "a plain directory"}`, () => {
    test("--into: a copy of the project as the first turn left it, the fork working there (undo too); the project untouched", async () => {
      const { p, sessionID, before, afterOne, afterTwo, endOfFirst } = await twoTurns(git)
      const into = outside()
      const forked = JSON.parse((await ok(["sessions", "fork", sessionID, "--at", endOfFirst, "--into", into, "--format", "json"], p)).stdout)
      expect(forked.session.directory).toBe(into)
      expect(forked.files).toMatchObject({ directory: into, restored: ["gen", "gen/g.txt", "later.txt", "notes.md"], skipped: [] })
      expect(tree(into)).toEqual(afterOne)
      expect(tree(p.cwd)).toEqual(afterTwo)
      // the fork has the first turn only, and goes on from it
      const shown = JSON.parse((await ok(["sessions", "show", forked.session.id, "--format", "json"], p)).stdout)
      expect(JSON.stringify(shown.messages)).toContain("DONE-ONE")
      expect(JSON.stringify(shown.messages)).not.toContain("SECOND-PROMPT")
      // its first turn's changes are undone in the copy, never in the project
      const undone = await ok(["undo", "--session", forked.session.id], p)
      expect(undone.stdout).toContain("undid 1 message")
      expect(tree(into)).toEqual(before)
      expect(tree(p.cwd)).toEqual(afterTwo)
    })

    test("--files: the files back to that point in place; a file changed since stops it, named, until --force", async () => {
      const { p, sessionID, afterOne, endOfFirst } = await twoTurns(git)
      fs.appendFileSync(path.join(p.cwd, "later.txt"), "mine\n")
      const changed = tree(p.cwd)
      const stopped = await reins(["sessions", "fork", sessionID, "--at", endOfFirst, "--files"], p)
      expect(stopped.code).toBe(1)
      expect(stopped.stderr).toContain("later.txt")
      expect(stopped.stderr).toContain("--force")
      expect(tree(p.cwd)).toEqual(changed)
      // nothing was made
      const listed = JSON.parse((await ok(["sessions", "list", "--format", "json"], p)).stdout)
      expect(listed).toHaveLength(1)
      const forced = await ok(["sessions", "fork", sessionID, "--at", endOfFirst, "--files", "--force"], p)
      expect(forced.stdout).toMatch(/^Forked session \S+ as ses_\w+/)
      expect(forced.stdout).toContain("4 file(s) brought back: gen, gen/g.txt, later.txt, notes.md")
      expect(tree(p.cwd)).toEqual(afterOne)
    })
  })
}

describe("reins sessions fork: turns run elsewhere, undos, the session forked", () => {
  test("turns run from a subdirectory: in the copy at their place, undone there; in place too; the project untouched by the fork's undo", async () => {
    const p = await setup([
      { toolCalls: [{ name: "write", arguments: { filePath: "notes.md", content: "one\n" } }] },
      { text: "DONE-ONE" },
      { toolCalls: [{ name: "write", arguments: { filePath: "x.txt", content: "A\n" } }] },
      { text: "DONE-TWO" },
      { toolCalls: [{ name: "write", arguments: { filePath: "x.txt", content: "B\n" } }] },
      { toolCalls: [{ name: "write", arguments: { filePath: "y.txt", content: "later in sub\n" } }] },
      { text: "DONE-THREE" }
    ])
    fs.mkdirSync(path.join(p.cwd, "sub"))
    fs.writeFileSync(path.join(p.cwd, "sub", "x.txt"), "original\n")
    const first = await ok(["run", "--yolo", "--format", "json", "FIRST"], p)
    const sessionID = events(first.stdout)[0]!.session.id as string
    const sub = { ...p, cwd: path.join(p.cwd, "sub") }
    await ok(["run", "--yolo", "--session", sessionID, "SECOND"], sub)
    const endOfSecond = JSON.parse((await ok(["sessions", "show", sessionID, "--format", "json"], p)).stdout).messages.at(-1).info.id as string
    await ok(["run", "--yolo", "--session", sessionID, "THIRD"], sub)
    const project = tree(p.cwd)
    expect(project["sub/x.txt"]).toBe("file 644 B\n")
    const into = outside()
    const forked = JSON.parse((await ok(["sessions", "fork", sessionID, "--at", endOfSecond, "--into", into, "--format", "json"], p)).stdout)
    // the copy as the second turn left it: x.txt as that turn wrote it (its content from the subdirectory's store)
    expect(forked.files.restored).toEqual(["sub/x.txt", "sub/y.txt"])
    expect(tree(into)["sub/x.txt"]).toBe("file 644 A\n")
    expect(tree(into)["sub/y.txt"]).toBeUndefined()
    // the fork's undo of that turn brings x.txt back as it was before it, in the copy only
    const undone = JSON.parse((await ok(["undo", "--session", forked.session.id, "--format", "json"], p)).stdout)
    expect(undone.files).toEqual(["sub/x.txt"])
    expect(tree(into)["sub/x.txt"]).toBe("file 644 original\n")
    expect(tree(p.cwd)).toEqual(project)
    // in place: the third turn's changes undone in the subdirectory
    await ok(["sessions", "fork", sessionID, "--at", endOfSecond, "--files"], p)
    expect(tree(p.cwd)["sub/x.txt"]).toBe("file 644 A\n")
    expect(tree(p.cwd)["sub/y.txt"]).toBeUndefined()
  })

  test("--files in place: the session forked records it as a files-only undo, which its redo takes back", async () => {
    const { p, sessionID, afterOne, afterTwo, endOfFirst } = await twoTurns(true)
    await ok(["sessions", "fork", sessionID, "--at", endOfFirst, "--files"], p)
    expect(tree(p.cwd)).toEqual(afterOne)
    const source = JSON.parse((await ok(["sessions", "show", sessionID, "--format", "json"], p)).stdout).session
    expect(source.revert).toMatchObject({ files: true, conversation: false })
    const redone = await ok(["redo", "--session", sessionID], p)
    expect(redone.stdout).toContain("redid")
    expect(tree(p.cwd)).toEqual(afterTwo)
    // a second in-place fork while the first one's undo stands would undo over it: refused until redone or made final
    await ok(["sessions", "fork", sessionID, "--at", endOfFirst, "--files"], p)
    const again = await reins(["sessions", "fork", sessionID, "--at", endOfFirst, "--files"], p)
    expect(again.code).toBe(1)
    expect(again.stderr).toContain("has an undo in progress")
  })

  test("a turn undone for the conversation only, made final, still counts for the files: the copy is without them", async () => {
    const p = await setup([
      { toolCalls: [{ name: "write", arguments: { filePath: "a.txt", content: "a\n" } }] },
      { text: "DONE-ONE" },
      { toolCalls: [{ name: "write", arguments: { filePath: "b.txt", content: "b\n" } }] },
      { text: "DONE-TWO" },
      { text: "DONE-THREE" }
    ])
    const first = await ok(["run", "--yolo", "--format", "json", "FIRST"], p)
    const sessionID = events(first.stdout)[0]!.session.id as string
    const afterOne = tree(p.cwd)
    const endOfFirst = JSON.parse((await ok(["sessions", "show", sessionID, "--format", "json"], p)).stdout).messages.at(-1).info.id as string
    await ok(["run", "--yolo", "--session", sessionID, "SECOND"], p)
    await ok(["undo", "--conversation-only"], p)
    await ok(["run", "--yolo", "--session", sessionID, "THIRD"], p)
    expect(tree(p.cwd)["b.txt"]).toBe("file 644 b\n")
    const into = outside()
    await ok(["sessions", "fork", sessionID, "--at", endOfFirst, "--into", into], p)
    expect(tree(into)).toEqual(afterOne)
  })
})

describe("reins sessions fork refuses what it cannot do, and changes nothing", () => {
  test("a target that is not empty, inside the project, --files with --into, an unknown message or session", async () => {
    const { p, sessionID, afterTwo, endOfFirst } = await twoTurns(true)
    const full = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-fork-")))
    fs.writeFileSync(path.join(full, "keep.txt"), "mine")
    const cases: ReadonlyArray<[ReadonlyArray<string>, number, string]> = [
      [["--at", endOfFirst, "--into", full], 1, "is not empty"],
      [["--at", endOfFirst, "--into", path.join(p.cwd, "sub")], 1, "is inside the project"],
      [["--at", endOfFirst, "--into", path.dirname(p.cwd)], 1, "is inside the project"],
      [["--at", endOfFirst, "--files", "--into", outside()], 2, "give one of them"],
      [["--at", "msg_nope", "--files"], 1, "has no message msg_nope"],
      [["--at", endOfFirst, "--force"], 2, "--force is for the files"],
      [["--at", "msg_nope", "--into", outside()], 1, "has no message msg_nope"]
    ]
    for (const [args, code, message] of cases) {
      const r = await reins(["sessions", "fork", sessionID, ...args], p)
      expect({ args, code: r.code, said: r.stderr.includes(message) }).toEqual({ args, code, said: true })
    }
    const unknown = await reins(["sessions", "fork", "ses_nope"], p)
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain("No session ses_nope")
    expect(tree(p.cwd)).toEqual(afterTwo)
    expect(fs.readdirSync(full)).toEqual(["keep.txt"])
    expect(JSON.parse((await ok(["sessions", "list", "--format", "json"], p)).stdout)).toHaveLength(1)
  })

  test("POST /session/{id}/fork with files: the files back in place; 409 files_changed names a file changed since", async () => {
    const { p, sessionID, afterOne, endOfFirst } = await twoTurns(true)
    const s = await serve(p)
    fs.writeFileSync(path.join(p.cwd, "notes.md"), "edited by hand\n")
    const refused = await api(s.url, "POST", `/session/${sessionID}/fork`, { messageID: endOfFirst, files: true })
    expect(refused.status).toBe(409)
    expect(refused.body).toMatchObject({ error: "files_changed", paths: ["notes.md"] })
    const forced = await api(s.url, "POST", `/session/${sessionID}/fork`, { messageID: endOfFirst, files: true, force: true })
    expect(forced.status).toBe(201)
    expect(forced.body.title).toContain("(fork)")
    expect(tree(p.cwd)).toEqual(afterOne)
  })
})
