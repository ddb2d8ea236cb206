import { Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import { usage } from "../CliError.ts"
import { handOffChat } from "../ChatHandoff.ts"
import { maxCostFlag } from "../BudgetFlag.ts"
import { sandboxFlag } from "../SandboxFlag.ts"

const flags = {
  model: Flag.String("model").pipe(Flag.withAlias("m"), Flag.withDescription("Model as <provider>/<model>"), Flag.optional),
  variant: Flag.String("variant").pipe(
    Flag.withDescription("A named variant of the model's options: low, medium, high, … or one from reins.json"),
    Flag.optional
  ),
  continue: Flag.Boolean("continue").pipe(Flag.withAlias("c"), Flag.withDescription("Continue the latest session in this directory"), Flag.withDefault(false)),
  session: Flag.String("session").pipe(Flag.withAlias("s"), Flag.withDescription("Continue the session with this id"), Flag.optional),
  yolo: Flag.Boolean("yolo").pipe(Flag.withDescription("Allow every tool call without asking"), Flag.withDefault(false)),
  trust: Flag.Boolean("trust").pipe(
    Flag.withDescription("Trust this directory for this run: its hooks, MCP servers, plugins, tools and agents run (reins trust keeps it)"),
    Flag.withDefault(false)
  ),
  sandbox: sandboxFlag,
  maxCost: maxCostFlag
}

/** Whether reins talks to a person: its stdin and stdout are terminals. */
export const onTerminal = () => Boolean(process.stdin.isTTY && process.stdout.isTTY)

/** The flags `reins` takes without a subcommand, which mean `reins chat`. */
const CHAT_FLAGS = new Set(["-c", "--continue", "-s", "--session", "-m", "--model", "--variant", "--yolo", "--trust", "--sandbox", "--max-cost"])

/**
 * The arguments effect/cli parses: `reins` alone on a terminal, and `reins -c` / `reins --session ID`
 * / `reins -m …`, are `reins chat …`. Off a terminal, `reins` alone stays the help.
 */
export const routeArgs = (args: ReadonlyArray<string>, terminal: boolean): ReadonlyArray<string> => {
  if (args.length === 0) return terminal ? ["chat"] : args
  const first = args[0]!
  return CHAT_FLAGS.has(first.split("=")[0]!) ? ["chat", ...args] : args
}

/** `reins chat` (and `reins` on a terminal): the interactive session, loaded only when asked for. */
export const chat = Command.make("chat", flags, (input) =>
  Effect.gen(function* () {
    if (!onTerminal()) {
      return yield* usage('The interactive session needs a terminal (stdin and stdout): use reins run "…" in scripts and pipes')
    }
    yield* handOffChat({
      model: Option.getOrUndefined(input.model),
      variant: Option.getOrUndefined(input.variant),
      continue: input.continue,
      session: Option.getOrUndefined(input.session),
      yolo: input.yolo,
      trust: input.trust,
      ...(Option.isSome(input.sandbox) ? { sandbox: input.sandbox.value } : {}),
      ...(Option.isSome(input.maxCost) ? { maxCost: input.maxCost.value } : {})
    })
  })
).pipe(Command.withDescription("The interactive session in this project (also: reins with no command, on a terminal)"))
