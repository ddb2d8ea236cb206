import { Effect, Schema } from "effect"
import * as path from "node:path"
import { define, render, ToolError } from "../Tool.ts"
import { Skills, skillFiles } from "../plugin/Skills.ts"
import template from "./skill.txt" with { type: "text" }

const Parameters = Schema.Struct({
  name: Schema.String.annotate({ description: "The name of the skill to load, as listed under <skills>" })
})

/** The `skill` tool: a skill's instructions, folder and files; permission `skill` per skill name. */
export const skill = define("skill", {
  description: render(template, {}),
  parameters: Parameters,
  // a skill is read whole: its outputs are the ones pruning protects
  truncate: false,
  // a name that is no skill asks nothing: execute answers with the skills there are
  permissions: (args) =>
    Effect.map(Skills, (skills) =>
      skills.some((s) => s.name === args.name)
        ? [{ permission: "skill", patterns: [args.name], always: [args.name], title: `Load the skill ${args.name}` }]
        : []
    ),
  execute: (args) =>
    Effect.gen(function* () {
      const skills = yield* Skills
      const found = skills.find((s) => s.name === args.name)
      if (!found) {
        const names = skills.map((s) => s.name).join(", ")
        return yield* new ToolError({
          reason: "failed",
          message: `There is no skill named "${args.name}". ${names ? `The available skills: ${names}.` : "No skills are installed."}`
        })
      }
      const files = (yield* skillFiles(found.dir)).filter((f) => f !== "SKILL.md")
      const output = [
        `<skill name="${found.name}" dir="${found.dir}">`,
        found.body,
        "</skill>",
        files.length > 0 ? `\nFiles in ${found.dir}${path.sep}:\n${files.map((f) => `- ${f}`).join("\n")}` : ""
      ]
        .join("\n")
        .trimEnd()
      return { title: `Loaded skill ${found.name}`, output, metadata: { name: found.name, dir: found.dir, files } }
    })
})
