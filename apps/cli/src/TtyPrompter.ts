import { Effect } from "effect"
import type { Answer, Pending, Prompter, Reply } from "@reins/permission"
import { previewLines } from "./present/Diff.ts"
import { plain, type Style, styleFor } from "./present/Style.ts"
import { visible } from "./present/Terminal.ts"

/** One line typed at a question on the terminal; with `cancelled`, Ctrl+C fails with it. */
export const ask = <E = never>(question: string, cancelled?: E) =>
  Effect.callback<string, E>((resume) => {
    // node:readline loads here, at the first question, not at every command's startup
    const rl = process.getBuiltinModule("node:readline").createInterface({ input: process.stdin, output: process.stderr, terminal: true })
    rl.question(question, (answer) => {
      rl.close()
      resume(Effect.succeed(answer))
    })
    if (cancelled !== undefined) {
      rl.once("SIGINT", () => {
        rl.close()
        resume(Effect.fail(cancelled))
      })
    }
    // an answer from elsewhere (a covering "always", a reject) closes the question
    return Effect.sync(() => rl.close())
  })

const parse = (answer: string): Reply | undefined => {
  const a = answer.trim().toLowerCase()
  if (a === "o" || a === "once" || a === "y" || a === "yes") return "once"
  if (a === "a" || a === "always") return "always"
  if (a === "r" || a === "reject" || a === "n" || a === "no") return "reject"
  return undefined
}

/** The question as shown: what would run, where, why it is asked, what an edit changes, and what "always" would allow. */
export const describe = (request: Pending, cwd: string, style: Style = plain): Array<string> => {
  const lines = ["", `Permission needed: ${request.permission}${request.title && request.permission !== "bash" ? ` (${request.title})` : ""}`]
  if (request.command && request.command.trim() !== request.patterns[0]) lines.push(`  command: ${request.command.trim().split("\n").join("\n           ")}`)
  lines.push(...request.patterns.map((p, i) => `  ${i === 0 ? "asks for" : "     and"}: ${p}`))
  lines.push(`  in: ${request.directory ?? cwd}`)
  if (request.opaque) lines.push(`  why: ${request.opaque}; reins cannot see what it runs, so a broad allow rule does not cover it`)
  lines.push(request.rule ? `  rule: ${request.rule.permission} "${request.rule.pattern}" → ${request.rule.action}` : `  rule: none matched (ask)`)
  lines.push(`  always would allow: ${request.always.map((p) => `${request.permission} "${p}"`).join(", ")}`)
  // the command and paths come from the model: escape sequences in them are shown, never acted on
  const shown = lines.map(visible)
  if (request.diffs && request.diffs.length > 0) shown.push(...previewLines(request.diffs, style, 40))
  shown.push(`[o]nce  [a]lways  [r]eject: `)
  return shown
}

/** Asks on the terminal: once / always / reject, with an optional message back to the model. */
export const ttyPrompter: Prompter = {
  ask: (request) =>
    Effect.gen(function* () {
      let reply: Reply | undefined
      let prompt = describe(request, process.cwd(), styleFor(process.stderr, process.env)).join("\n")
      while (!reply) {
        reply = parse(yield* ask(prompt))
        prompt = "Please answer o (once), a (always) or r (reject): "
      }
      if (reply !== "reject") return { reply } satisfies Answer
      const message = (yield* ask("Tell the agent why or what to do instead (Enter to skip): ")).trim()
      return (message ? { reply, message } : { reply }) satisfies Answer
    })
}
