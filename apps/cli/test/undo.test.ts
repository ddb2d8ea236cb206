// `reins undo` and `reins redo` through the real CLI and the scripted model: what two turns did with the write tool
// and with shell commands (rm, chmod, mkdir, a symbolic link) undone turn by turn and redone, compared by content,
// mode and type of every file, in a git repository and in a plain directory; a file the user changed after the turn
// stops undo, named, until --force; the model no longer sees an undone turn. And the same over `reins serve`'s HTTP API.
import { beforeAll, describe, expect, test } from "bun:test"
import * as fs from "node:fs"
import * as path from "node:path"
import { api, servers } from "./serve-support.ts"
import { treeSnapshot } from "@reins/testkit"
import { ensureBuilt, events, projects, reins, reinsOk } from "./support.ts"

beforeAll(() => ensureBuilt())

const setup = projects()
const serve = servers()

const tree = treeSnapshot

const turns = [
  { toolCalls: [{ name: "write", arguments: { filePath: "notes.md", content: "first notes\n" } }] },
  {
    toolCalls: [
      { name: "bash", arguments: { command: "rm old.txt && chmod 755 run.sh && mkdir -p gen/deep && echo g > gen/deep/g.txt && ln -s notes.md link.md" } }
    ]
  },
  { text: "DONE-ONE" },
  { toolCalls: [{ name: "bash", arguments: { command: "echo SECOND-LINE >> notes.md && mv gen/deep/g.txt gen/moved.txt" } }] },
  { text: "DONE-TWO" },
  { text: "DONE-THREE" }
]

const start = async (git: boolean) => {
  const p = await setup(turns)
  if (!git) fs.rmSync(path.join(p.cwd, ".git"), { recursive: true })
  fs.writeFileSync(path.join(p.cwd, "old.txt"), "old\n")
  fs.writeFileSync(path.join(p.cwd, "run.sh"), "#!/bin/sh\n", { mode: 0o644 })
  fs.chmodSync(path.join(p.cwd, "run.sh"), 0o644)
  return p
}

const ok = reinsOk

for (const git of [true, false]) {
  describe(`reins undo / redo in ${git ? "a git repository" : "a plain directory"}`, () => {
    test("two turns undone one by one (files byte for byte, modes, types), redone together; the model no longer sees an undone turn", async () => {
      const p = await start(git)
      const before = tree(p.cwd)
      const first = await ok(["run", "--yolo", "--format", "json", "FIRST-PROMPT"], p)
      const sessionID = events(first.stdout)[0]!.session.id as string
      const afterOne = tree(p.cwd)
      expect(afterOne["link.md"]).toBe("link notes.md")
      await ok(["run", "--yolo", "--session", sessionID, "SECOND-PROMPT"], p)
      const afterTwo = tree(p.cwd)
      expect(afterTwo["notes.md"]).toBe("file 644 first notes\nSECOND-LINE\n")

      const undoTwo = await ok(["undo"], p)
      expect(undoTwo.stdout).toMatch(
        new RegExp(`^undid 1 message of session ${sessionID} \\(from msg_\\w+\\); 3 files: gen/deep/g.txt, gen/moved.txt, notes.md\\n$`)
      )
      expect(tree(p.cwd)).toEqual(afterOne)
      const undoOne = await ok(["undo", "--format", "json"], p)
      expect(JSON.parse(undoOne.stdout).files).toEqual(["gen", "gen/deep", "gen/deep/g.txt", "link.md", "notes.md", "old.txt", "run.sh"])
      expect(tree(p.cwd)).toEqual(before)
      const nothing = await reins(["undo"], p)
      expect(nothing.code).toBe(1)
      expect(nothing.stderr).toContain("Nothing to undo")

      const redone = await ok(["redo"], p)
      expect(redone.stdout).toContain("redid 2 messages")
      expect(tree(p.cwd)).toEqual(afterTwo)

      // undone, then a new prompt: the model is sent neither the undone prompt nor what answered it
      await ok(["undo"], p)
      const third = await ok(["run", "--yolo", "--session", sessionID, "THIRD-PROMPT"], p)
      expect(third.stdout.trim()).toBe("DONE-THREE")
      const sent = JSON.stringify(p.server.requests.at(-1)!.body.messages)
      expect(sent).toContain("FIRST-PROMPT")
      expect(sent).toContain("THIRD-PROMPT")
      expect(sent).not.toContain("SECOND-PROMPT")
      expect(sent).not.toContain("SECOND-LINE")
      // and there is nothing to redo once a new prompt was sent
      const late = await reins(["redo"], p)
      expect(late.code).toBe(1)
      expect(late.stderr).toContain("Nothing to redo")
      // that undo is final: the next undo takes back the third turn, the one after the first; the second is never redone
      const undoThird = await ok(["undo", "--format", "json"], p)
      expect(JSON.parse(undoThird.stdout).messages).toHaveLength(1)
      expect(tree(p.cwd)).toEqual(afterOne)
      await ok(["undo"], p)
      expect(tree(p.cwd)).toEqual(before)
      const redoBoth = await ok(["redo", "--format", "json"], p)
      expect(JSON.parse(redoBoth.stdout).messages).toHaveLength(2)
      expect(tree(p.cwd)).toEqual(afterOne)
    }, 60_000)

    test("a file the user changed after the turn stops undo, named, and is kept; --force overwrites it", async () => {
      const p = await start(git)
      await ok(["run", "--yolo", "FIRST-PROMPT"], p)
      const before = tree(p.cwd)
      await ok(["run", "--yolo", "--continue", "SECOND-PROMPT"], p)
      fs.writeFileSync(path.join(p.cwd, "notes.md"), "the user's own notes\n")
      const refused = await reins(["undo"], p)
      expect(refused.code).toBe(1)
      expect(refused.stderr).toContain("notes.md")
      expect(refused.stderr).toContain("--force")
      expect(fs.readFileSync(path.join(p.cwd, "notes.md"), "utf8")).toBe("the user's own notes\n")
      await ok(["undo", "--force"], p)
      expect(tree(p.cwd)).toEqual(before)
    }, 60_000)
  })
}

describe("reins undo of a turn whose sub-agent changed files", () => {
  test("the files a sub-agent's edit and shell command changed are restored with the turn that started it, and redone", async () => {
    const p = await setup([
      { toolCalls: [{ name: "task", arguments: { description: "edit it", prompt: "change the files", subagent_type: "general" } }] },
      {
        toolCalls: [
          { name: "edit", arguments: { filePath: "src/app.ts", oldString: "const port = 80", newString: "const port = 8080" } },
          { name: "bash", arguments: { command: "rm docs/old.md && mkdir -p docs/new && echo fresh > docs/new/page.md" } }
        ]
      },
      { text: "CHILD-DONE" },
      { text: "PARENT-DONE" }
    ])
    fs.mkdirSync(path.join(p.cwd, "src"))
    fs.mkdirSync(path.join(p.cwd, "docs"))
    fs.writeFileSync(path.join(p.cwd, "src/app.ts"), "// app\nconst port = 80\n")
    fs.writeFileSync(path.join(p.cwd, "docs/old.md"), "old page\n")
    const before = tree(p.cwd)
    const run = await ok(["run", "--yolo", "delegate the change"], p)
    expect(run.stdout.trim()).toBe("PARENT-DONE")
    const after = tree(p.cwd)
    expect(after["src/app.ts"]).toBe("file 644 // app\nconst port = 8080\n")
    expect(after["docs/new/page.md"]).toBe("file 644 fresh\n")
    const undone = JSON.parse((await ok(["undo", "--format", "json"], p)).stdout)
    expect(undone.files).toEqual(["docs/new", "docs/new/page.md", "docs/old.md", "src/app.ts"])
    expect(tree(p.cwd)).toEqual(before)
    await ok(["redo"], p)
    expect(tree(p.cwd)).toEqual(after)
  }, 60_000)
})

describe("reins undo of the file tools' own changes", () => {
  test("apply_patch with a move, an add, a delete and an update of an executable: undone byte for byte, modes kept, then redone", async () => {
    const patchText = [
      "*** Begin Patch",
      "*** Update File: src/old_name.ts",
      "*** Move to: src/lib/new_name.ts",
      "@@",
      "-export const v = 1",
      "+export const v = 2",
      "*** Add File: src/added.ts",
      "+export const added = true",
      "*** Delete File: src/gone.ts",
      "*** Update File: run.sh",
      "@@",
      "-echo one",
      "+echo two",
      "*** End Patch"
    ].join("\n")
    const p = await setup([{ toolCalls: [{ name: "apply_patch", arguments: { patchText } }] }, { text: "PATCHED" }], { edit_tool: "apply_patch" })
    fs.mkdirSync(path.join(p.cwd, "src"))
    fs.writeFileSync(path.join(p.cwd, "src/old_name.ts"), "export const v = 1\n")
    fs.writeFileSync(path.join(p.cwd, "src/gone.ts"), "export const gone = 1\n")
    fs.writeFileSync(path.join(p.cwd, "run.sh"), "#!/bin/sh\necho one\n")
    fs.chmodSync(path.join(p.cwd, "run.sh"), 0o755)
    const before = tree(p.cwd)
    await ok(["run", "--yolo", "patch it"], p)
    const after = tree(p.cwd)
    expect(after["src/lib/new_name.ts"]).toBe("file 644 export const v = 2\n")
    expect(after["src/old_name.ts"]).toBeUndefined()
    expect(after["run.sh"]).toBe("file 755 #!/bin/sh\necho two\n")
    const undone = JSON.parse((await ok(["undo", "--format", "json"], p)).stdout)
    expect(undone.files).toEqual(["run.sh", "src/added.ts", "src/gone.ts", "src/lib", "src/lib/new_name.ts", "src/old_name.ts"])
    expect(tree(p.cwd)).toEqual(before)
    await ok(["redo"], p)
    expect(tree(p.cwd)).toEqual(after)
  }, 60_000)
})

describe("reins undo: bad input", () => {
  test("--files-only with --conversation-only, a message that is not a prompt of the session, no session: one line, exit 2 or 1", async () => {
    const p = await start(true)
    const none = await reins(["undo"], p)
    expect(none.code).toBe(2)
    expect(none.stderr).toContain("nothing to undo")
    const both = await reins(["undo", "--files-only", "--conversation-only"], p)
    expect(both.code).toBe(2)
    expect(both.stderr).toContain("--files-only and --conversation-only")
    await ok(["run", "--yolo", "FIRST-PROMPT"], p)
    // the conversation only: no file touched, none said to be
    const files = tree(p.cwd)
    const talk = await ok(["undo", "--conversation-only", "--format", "json"], p)
    expect(JSON.parse(talk.stdout).files).toEqual([])
    expect(tree(p.cwd)).toEqual(files)
    const mixed = await reins(["undo", "--files-only"], p)
    expect(mixed.code).toBe(1)
    expect(mixed.stderr).toContain("reins redo first")
    // a summary now would leave out what a redo brings back
    const compacting = await reins(["compact"], p)
    expect(compacting.code).toBe(1)
    expect(compacting.stderr).toContain("has an undo that can still be redone")
    await ok(["redo"], p)
    const wrong = await reins(["undo", "--to", "msg_nope"], p)
    expect(wrong.code).toBe(1)
    expect(wrong.stderr).toContain("msg_nope is not a message you sent")
  }, 60_000)
})

describe("POST /session/{id}/revert and /unrevert (reins serve)", () => {
  test("undo and redo over HTTP: files and conversation; a file changed since is a 409 naming it, until force", async () => {
    const p = await start(false)
    const before = tree(p.cwd)
    const s = await serve(p, ["--yolo"])
    const sessionID = (await api(s.url, "POST", "/session", {})).body.id as string
    expect((await api(s.url, "POST", `/session/${sessionID}/message`, { text: "FIRST-PROMPT" })).status).toBe(200)
    const after = tree(p.cwd)
    fs.writeFileSync(path.join(p.cwd, "notes.md"), "mine now\n")
    const refused = await api(s.url, "POST", `/session/${sessionID}/revert`, {})
    expect(refused.status).toBe(409)
    expect(refused.body).toMatchObject({ error: "files_changed", paths: ["notes.md"] })
    expect(fs.readFileSync(path.join(p.cwd, "notes.md"), "utf8")).toBe("mine now\n")
    const reverted = await api(s.url, "POST", `/session/${sessionID}/revert`, { force: true })
    expect(reverted.status).toBe(200)
    expect(reverted.body.messages).toHaveLength(1)
    expect(tree(p.cwd)).toEqual(before)
    expect((await api(s.url, "GET", `/session/${sessionID}`)).body.revert).toEqual({ messageID: reverted.body.messageID, files: true, conversation: true })
    const messages = (await api(s.url, "GET", `/session/${sessionID}/message`)).body as Array<any>
    expect(messages.filter((m) => m.info.role === "user").map((m) => m.info.metadata?.reverted)).toEqual([true])
    const again = await api(s.url, "POST", `/session/${sessionID}/revert`, {})
    expect(again.status).toBe(400)
    expect(again.body.message).toContain("Nothing to undo")
    const unreverted = await api(s.url, "POST", `/session/${sessionID}/unrevert`, null)
    expect(unreverted.status).toBe(200)
    // the file as the turn left it (the user's version was overwritten by the forced undo, as asked)
    expect(tree(p.cwd)).toEqual(after)
    expect((await api(s.url, "GET", `/session/${sessionID}`)).body.revert).toBeUndefined()
  }, 60_000)
})
