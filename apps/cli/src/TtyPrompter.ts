import { Effect } from "effect"
import * as readline from "node:readline"
import type { Prompter, Reply } from "@reins/permission"

const ask = (question: string) =>
  Effect.callback<string>((resume) => {
    const rl = readline.createInterface({ input: process.stdin, output: process.stderr, terminal: true })
    rl.question(question, (answer) => {
      rl.close()
      resume(Effect.succeed(answer))
    })
    return Effect.sync(() => rl.close())
  })

const parse = (answer: string): Reply | undefined => {
  const a = answer.trim().toLowerCase()
  if (a === "o" || a === "once" || a === "y" || a === "yes") return "once"
  if (a === "a" || a === "always") return "always"
  if (a === "r" || a === "reject" || a === "n" || a === "no") return "reject"
  return undefined
}

/** Asks on the terminal: once / always / reject, with an optional message back to the model. */
export const ttyPrompter: Prompter = {
  ask: (request) =>
    Effect.gen(function* () {
      const lines = [
        "",
        `Permission needed: ${request.permission}`,
        ...request.patterns.map((p) => `  ${p}`),
        `  in ${process.cwd()}`,
        request.rule ? `  rule: ${request.rule.permission} ${request.rule.pattern} → ${request.rule.action}` : "  rule: no rule matched (ask)",
        `[o]nce  [a]lways (${request.always.join(", ") || "this"})  [r]eject: `
      ]
      let reply: Reply | undefined
      let prompt = lines.join("\n")
      while (!reply) {
        reply = parse(yield* ask(prompt))
        prompt = "Please answer o, a or r: "
      }
      if (reply !== "reject") return { reply }
      const message = (yield* ask("Tell the agent why or what to do instead (Enter to skip): ")).trim()
      return message ? { reply, message } : { reply }
    })
}
