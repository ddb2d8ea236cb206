// reins init: a minimal reins.json (with "$schema") and an AGENTS.md the model writes after a look at the project
// (as opencode's /init). The turn is a `reins run` with a fixed prompt: the same trust, permissions and model.
import { Console, Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import { CONFIG_SCHEMA_URL } from "@reins/domain"
import * as fs from "node:fs"
import * as path from "node:path"
import { failure, usage } from "../CliError.ts"
import { runFlags, runMessage } from "./run.ts"
import template from "./init.txt" with { type: "text" }

const flags = {
  force: Flag.Boolean("force").pipe(Flag.withDescription("Replace an existing AGENTS.md (the model revises it) and reins.json"), Flag.withDefault(false)),
  model: runFlags.model,
  variant: runFlags.variant,
  format: runFlags.format,
  permission: runFlags.permission,
  yolo: runFlags.yolo,
  sandbox: runFlags.sandbox,
  maxCost: runFlags.maxCost,
  trust: runFlags.trust
}

/** The prompt of the turn that writes `file`; an existing one is to be improved, not thrown away. */
export const initPrompt = (file: string, existing: boolean) =>
  template
    .replace("{{file}}", file)
    .replace("{{existing}}", existing ? `\n\n${file} exists already: read it first, keep what is still true, and improve it.` : "")
    .trim()

/** What is at `file` without following a link: a cloned repository's reins.json may be a symlink to a file of the user's. */
const linkAt = (file: string) => {
  try {
    return fs.lstatSync(file).isSymbolicLink() ? fs.readlinkSync(file) : undefined
  } catch {
    return undefined
  }
}

/** Writes reins.json itself, never through a symlink (O_NOFOLLOW): a link's target is named and left alone. */
const writeFile = (file: string, text: string) =>
  Effect.gen(function* () {
    const link = linkAt(file)
    if (link !== undefined)
      return yield* usage(`${file} is a symbolic link (to ${link}): reins init does not write through it; remove the link, or edit the file it points to`)
    yield* Effect.try({
      try: () => {
        const fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_TRUNC | (fs.constants.O_NOFOLLOW ?? 0), 0o644)
        try {
          fs.writeFileSync(fd, text)
        } finally {
          fs.closeSync(fd)
        }
      },
      catch: (e) => usage(`Cannot write ${file}: ${(e as Error).message}`)
    })
  })

/** `reins init [--force]` in the current directory. */
export const init = Command.make("init", flags, (input) =>
  Effect.gen(function* () {
    const cwd = process.cwd()
    const config = path.join(cwd, "reins.json")
    const agents = path.join(cwd, "AGENTS.md")
    const say = (line: string) => (input.format === "json" ? Effect.void : Console.error(line))
    // reins.json first: it needs no model
    // a dangling link "does not exist" to existsSync: it reaches writeFile, which refuses links
    if (fs.existsSync(config) && !input.force) yield* say(`Skipped reins.json: it exists (--force replaces it).`)
    else {
      yield* writeFile(config, `${JSON.stringify({ $schema: CONFIG_SCHEMA_URL }, null, 2)}\n`)
      yield* say(`Wrote ${config}.`)
    }
    const hadAgents = fs.existsSync(agents)
    const before = hadAgents ? fs.readFileSync(agents, "utf8") : undefined
    if (hadAgents && !input.force) return yield* say(`Skipped AGENTS.md: it exists (--force has the model revise it).`)
    yield* say("Looking at the project to write AGENTS.md…")
    yield* runMessage({
      ...input,
      message: [initPrompt(agents, hadAgents)],
      command: Option.none(),
      continue: false,
      session: Option.none(),
      agent: Option.none(),
      attach: Option.none(),
      token: Option.none(),
      file: []
    })
    // AGENTS.md is in every session's prompt, so writing it always asks a person (never the policy of --permission or --yolo)
    if (!fs.existsSync(agents) || (hadAgents && fs.readFileSync(agents, "utf8") === before))
      return yield* failure(
        `The model did not write ${agents}${process.stdin.isTTY ? "" : " (writing it needs your approval: run reins init on a terminal)"}: run reins init again, or write it yourself.`
      )
    yield* say(`Wrote ${agents}.`)
  })
).pipe(
  Command.withDescription(
    "Set up this project: a reins.json with $schema, and an AGENTS.md the model writes after a look at the project (existing files are kept without --force)"
  )
)
