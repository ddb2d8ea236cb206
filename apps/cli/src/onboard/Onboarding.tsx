// `reins` on a terminal without a model: the first-run setup. It offers the providers (those with a key first, local
// servers found on this machine), stores a typed key (auth.json, 0600), writes "model" (and a local server's
// provider entry) into the user's own reins.json, and the chat opens with it. Cancelled, nothing is written.
import { editConfigFile, userConfigFile, type ConfigEdit } from "@reins/domain"
import { storeKey } from "@reins/provider"
import { Effect } from "effect"
import { render } from "ink"
import * as os from "node:os"
import { CliError, usage } from "../CliError.ts"
import type { Setup } from "../Setup.ts"
import { themeFor, ThemeContext } from "../tui/view/index.ts"
import { modelChoices, providerChoices } from "./Choices.ts"
import { findLocalServers } from "./LocalServers.ts"
import { Onboard, type Chosen } from "./Onboard.tsx"

const ask = (setup: Setup, providers: ReturnType<typeof providerChoices>) =>
  Effect.callback<Chosen | undefined>((resume) => {
    let chosen: Chosen | undefined
    const instance = render(
      <ThemeContext value={themeFor(process.stdout, setup.env)}>
        <Onboard
          providers={providers}
          models={(p) => modelChoices(setup.config, p)}
          onDone={(c) => {
            chosen = c
          }}
        />
      </ThemeContext>,
      { exitOnCtrlC: false, interactive: process.stdout.isTTY === true }
    )
    void instance.waitUntilExit().then(() => resume(Effect.succeed(chosen)))
    return Effect.sync(() => instance.unmount())
  })

/** What the setup writes into the user's config for a choice. */
export const configEdits = (chosen: Chosen): ReadonlyArray<ConfigEdit> => [
  ...(chosen.provider.local !== undefined
    ? [
        {
          path: ["provider", chosen.provider.id],
          value: {
            type: "openai-compatible",
            baseURL: chosen.provider.local.baseURL,
            models: Object.fromEntries(chosen.provider.local.models.map((m) => [m, {}]))
          }
        }
      ]
    : []),
  { path: ["model"], value: `${chosen.provider.id}/${chosen.model}` }
]

/** Walks the user to a model; the file written is named on stderr once the chat is about to open. */
export const onboard = (setup: Setup) =>
  Effect.gen(function* () {
    const local = yield* Effect.promise(() => findLocalServers(setup.env))
    const chosen = yield* ask(setup, providerChoices(setup, local))
    if (chosen === undefined) return yield* new CliError({ message: "Setup cancelled: nothing was written. Run reins again, or reins auth login.", code: 130 })
    if (chosen.key !== undefined) yield* storeKey(setup.dataDir, chosen.provider.id, chosen.key).pipe(Effect.mapError((e) => usage(e.message)))
    const file = userConfigFile(setup.env, os.homedir())
    yield* editConfigFile(file, configEdits(chosen)).pipe(Effect.mapError((e) => usage(e.message)))
    process.stderr.write(`Saved "model": "${chosen.provider.id}/${chosen.model}" in ${file}${chosen.key !== undefined ? "; the key in auth.json" : ""}.\n`)
  })
