import { Context, Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { projectSkillRoots, skillHasScripts } from "@reins/domain"
import { parseFrontMatter } from "../FrontMatter.ts"

/** A skill: a folder with a `SKILL.md` whose front matter names and describes it; the body is its instructions. */
export interface Skill {
  readonly name: string
  readonly description: string
  /** The folder of the skill; other files in it may be referenced by the instructions. */
  readonly dir: string
  /** The `SKILL.md` file. */
  readonly file: string
  readonly body: string
}

/** Something found but not loaded, and why. */
export interface Skipped {
  readonly path: string
  readonly error: string
}

/** The skills offered to the model (default none); the `skill` tool and the system prompt read them. */
export const Skills = Context.Reference<ReadonlyArray<Skill>>("reins/tool/Skills", { defaultValue: () => [] })

/** Where skills are looked for, first wins on a name: the project's, then the home folder's (`.claude/skills` for compatibility). */
export const skillRoots = (cwd: string, home: string) => [
  ...projectSkillRoots(cwd),
  path.join(home, ".config", "reins", "skills"),
  path.join(home, ".claude", "skills")
]

const NAME = /^[a-zA-Z0-9][a-zA-Z0-9._-]{0,63}$/

const isFile = (file: string) =>
  Effect.promise(() =>
    fs.promises.stat(file).then(
      (s) => s.isFile(),
      () => false
    )
  )

const readDir = (dir: string) => Effect.promise(() => fs.promises.readdir(dir, { withFileTypes: true }).catch(() => []))

/** Loads one `SKILL.md`, or says why it cannot be used. */
const loadSkill = (file: string) =>
  Effect.gen(function* () {
    const text = yield* Effect.tryPromise({ try: () => fs.promises.readFile(file, "utf8"), catch: (e) => ({ message: `cannot read it: ${String(e)}` }) })
    const { data, body } = yield* parseFrontMatter(text)
    const name = data.name ?? path.basename(path.dirname(file))
    if (typeof name !== "string" || !NAME.test(name)) {
      return yield* Effect.fail({ message: "`name` must be letters, digits, `.`, `_` or `-` (at most 64)" })
    }
    if (typeof data.description !== "string" || data.description.trim() === "") {
      return yield* Effect.fail({ message: "the front matter needs a `description` saying when to use the skill" })
    }
    return { name, description: data.description.trim(), dir: path.dirname(file), file, body: body.trim() } satisfies Skill
  })

/**
 * Every `<root>/<folder>/SKILL.md` under the skill roots. A file that does not load is skipped with
 * its path and error; the rest load. A name already taken by an earlier root is skipped too.
 */
export const discoverSkills = (roots: ReadonlyArray<string>, options: { readonly untrusted?: ReadonlyArray<string> } = {}) =>
  Effect.gen(function* () {
    const skills: Array<Skill> = []
    const skipped: Array<Skipped> = []
    for (const root of roots) {
      const entries = (yield* readDir(root)).filter((e) => e.isDirectory() || e.isSymbolicLink()).sort((a, b) => a.name.localeCompare(b.name))
      for (const entry of entries) {
        const file = path.join(root, entry.name, "SKILL.md")
        if (!(yield* isFile(file))) continue
        // an untrusted project's skill may be read (it is text), not one that brings scripts to run
        if (options.untrusted?.includes(root) && skillHasScripts(path.join(root, entry.name))) {
          skipped.push({ path: file, error: "it brings scripts, and this directory is not trusted (reins trust)" })
          continue
        }
        const loaded = yield* Effect.result(loadSkill(file))
        if (loaded._tag === "Failure") {
          skipped.push({ path: file, error: loaded.failure.message })
          continue
        }
        const taken = skills.find((s) => s.name === loaded.success.name)
        if (taken) {
          skipped.push({ path: file, error: `the skill name "${taken.name}" is already taken by ${taken.file}` })
          continue
        }
        skills.push(loaded.success)
      }
    }
    return { skills, skipped }
  })

/** The files of a skill's folder (relative, at most `limit`), so the model knows what it may read. */
export const skillFiles = (dir: string, limit = 100) =>
  Effect.gen(function* () {
    const files: Array<string> = []
    const walk = (rel: string): Effect.Effect<void> =>
      Effect.gen(function* () {
        for (const entry of (yield* readDir(path.join(dir, rel))).sort((a, b) => a.name.localeCompare(b.name))) {
          if (files.length >= limit) return
          const child = rel ? path.join(rel, entry.name) : entry.name
          if (entry.isDirectory()) yield* walk(child)
          else files.push(child)
        }
      })
    yield* walk("")
    return files
  })

/** The block of the dynamic system prompt that lists the skills (empty when there are none). */
export const skillsBlock = (skills: ReadonlyArray<Skill>) =>
  skills.length === 0
    ? ""
    : [
        "<skills>",
        "Skills hold instructions for specific tasks. When a task matches a skill's description, load it with the skill tool before you start.",
        ...skills.map((s) => `- ${s.name}: ${s.description.replace(/\s+/g, " ")}`),
        "</skills>"
      ].join("\n")
