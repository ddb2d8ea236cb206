// The interactive session's start, shared by `reins chat` (through effect/cli) and bin.ts's fast path (without it):
// the project's setup and the model checked before any screen, then the TUI, loaded only now.
import { Effect } from "effect"
import type { ChatInput } from "./Interactive.ts"
import { withMaxCost } from "./BudgetFlag.ts"
import { configuredModel, loadSetup, resolveModel } from "./Setup.ts"
import { withVariant } from "./Variant.ts"

export const openChat = (input: ChatInput) =>
  Effect.gen(function* () {
    // a bad --max-cost is refused before any question
    yield* withMaxCost({}, input.maxCost)
    // on a terminal: the trust question, before any screen
    const first = yield* loadSetup({ trust: input.trust ? "flag" : "ask" })
    // no model anywhere: the first-run setup, then the config it wrote (trust was settled above)
    const onboarding = input.model === undefined && configuredModel(first) === undefined
    if (onboarding) {
      const { onboard } = yield* Effect.promise(() => import("./onboard/Onboarding.tsx"))
      yield* onboard(first)
    }
    const loaded = onboarding ? yield* loadSetup({ trust: input.trust ? "flag" : "stored", notice: false }) : first
    const setup = { ...loaded, config: yield* withMaxCost(loaded.config, input.maxCost) }
    const model = yield* withVariant(setup, yield* resolveModel(setup, input.model), input.variant)
    const { runTui } = yield* Effect.promise(() => import("./tui/index.ts"))
    yield* runTui({
      setup,
      model,
      continue: input.continue,
      session: input.session,
      yolo: input.yolo,
      ...(input.sandbox !== undefined ? { sandbox: input.sandbox } : {})
    })
  })
