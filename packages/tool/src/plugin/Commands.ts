import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { PROJECT_DIR } from "@reins/domain"
import { parseFrontMatter } from "../FrontMatter.ts"

/** A command: a Markdown file whose body is a prompt, run as `/name args` (TUI, ACP) or `reins run --command name args`. */
export interface PromptCommand {
  readonly name: string
  readonly description?: string
  /** The agent the prompt runs with, when the file names one. */
  readonly agent?: string
  /** The model (`provider/model`) it runs with, when the file names one. */
  readonly model?: string
  readonly template: string
  readonly source: "project" | "user"
  readonly file: string
}

const NAME = /^[a-zA-Z0-9][a-zA-Z0-9._-]{0,63}$/

/** Where commands are: the project's `.reins/commands` (once trusted), then `~/.config/reins/commands`; the first wins on a name. */
export const commandRoots = (cwd: string, home: string) =>
  [
    { dir: path.join(cwd, PROJECT_DIR, "commands"), source: "project" },
    { dir: path.join(home, ".config", "reins", "commands"), source: "user" }
  ] as const

const loadCommand = (file: string, source: PromptCommand["source"]) =>
  Effect.gen(function* () {
    const name = path.basename(file, ".md")
    if (!NAME.test(name)) return yield* Effect.fail({ message: "the file name must be letters, digits, `.`, `_` or `-` (at most 64), then .md" })
    const text = yield* Effect.tryPromise({ try: () => fs.promises.readFile(file, "utf8"), catch: (e) => ({ message: `cannot read it: ${String(e)}` }) })
    const { data, body } = yield* parseFrontMatter(text)
    const field = (key: string) => {
      const value = data[key]
      return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined
    }
    if (body.trim() === "") return yield* Effect.fail({ message: "the body (the prompt) is empty" })
    const description = field("description")
    const agent = field("agent")
    const model = field("model")
    return {
      name,
      template: body.trim(),
      source,
      file,
      ...(description !== undefined ? { description } : {}),
      ...(agent !== undefined ? { agent } : {}),
      ...(model !== undefined ? { model } : {})
    } satisfies PromptCommand
  })

/**
 * The commands found, first root winning on a name; a file that does not load is skipped with its path and why. An
 * untrusted project's commands are not loaded (a project's prompts are data until you trust it): said once.
 */
export const discoverCommands = (options: { readonly cwd: string; readonly home: string; readonly trusted: boolean }) =>
  Effect.gen(function* () {
    const commands: Array<PromptCommand> = []
    const skipped: Array<{ readonly path: string; readonly error: string }> = []
    for (const root of commandRoots(options.cwd, options.home)) {
      const files = yield* Effect.promise(() =>
        fs.promises.readdir(root.dir).then(
          (names) => names.filter((n) => n.endsWith(".md")).sort(),
          () => []
        )
      )
      if (files.length === 0) continue
      if (root.source === "project" && !options.trusted) {
        skipped.push({ path: root.dir, error: "the project is not trusted (reins trust), so its commands are not loaded" })
        continue
      }
      for (const name of files) {
        const file = path.join(root.dir, name)
        const loaded = yield* Effect.result(loadCommand(file, root.source))
        if (loaded._tag === "Failure") skipped.push({ path: file, error: loaded.failure.message })
        else if (!commands.some((c) => c.name === loaded.success.name)) commands.push(loaded.success)
      }
    }
    return { commands, skipped }
  })

/**
 * The prompt of a command run with `args`: `$ARGUMENTS` is all of them, `$1` … `$9` each word; a template that uses
 * neither gets the arguments after it, on a line of their own.
 */
export const expandCommand = (command: Pick<PromptCommand, "template">, args: string): string => {
  const words = args.trim() === "" ? [] : args.trim().split(/\s+/)
  const uses = /\$ARGUMENTS|\$[1-9]/.test(command.template)
  const text = command.template.replace(/\$ARGUMENTS/g, args.trim()).replace(/\$([1-9])/g, (_, n: string) => words[Number(n) - 1] ?? "")
  return uses || args.trim() === "" ? text : `${text}\n\n${args.trim()}`
}
