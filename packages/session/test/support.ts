// The session tests' common set-up: scratch directories, a scripted Provider, and the services a
// step's tools need (the registry with real Permission and Truncate over the memory store).
import { Bus, DataDir, Ids, WorkDir } from "@reins/domain"
import { Permission, PermissionSettings, defaultRules } from "@reins/permission"
import { Provider, ProviderError, type ModelEvent, type ProviderRequest } from "@reins/provider"
import { Storage, type StoreError } from "@reins/storage"
import { ToolRegistry, builtins, type ToolInfo } from "@reins/tool"
import { Truncate } from "@reins/truncate"
import { Effect, Layer, Stream } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

/** A fresh temporary directory, symlinks resolved. */
export const tmp = (prefix = "reins-session-") => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)))

/**
 * A Provider that answers each call with the next scripted step (its events, or the error it fails
 * with) and keeps the requests it was given; past the script it fails.
 */
export const scripted = (steps: ReadonlyArray<ReadonlyArray<ModelEvent> | ProviderError>, requests: Array<ProviderRequest> = []) =>
  Layer.succeed(
    Provider,
    Provider.of({
      prepare: () => Effect.void,
      stream: (request) => {
        const step = steps[requests.length]
        requests.push(request)
        if (!step) return Stream.fail(new ProviderError({ reason: "invalid", message: "no more steps" }))
        return step instanceof ProviderError ? Stream.fail(step) : Stream.fromIterable(step)
      },
      info: () => ({ context: 10_000, output: 1_000 })
    })
  )

export interface ToolsOptions<S> {
  /** Default: the built-in tools. */
  readonly tools?: ReadonlyArray<Effect.Effect<ToolInfo, never, Permission | Truncate>>
  /** Default: the memory store. */
  readonly store?: Layer.Layer<S, StoreError>
  /** Over the default rules; questions are allowed without a person unless this says otherwise. */
  readonly permission?: Partial<PermissionSettings>
  readonly dataDir?: string
}

/**
 * The tool registry with real Permission and Truncate, over Bus, Ids, the store and `provider`, in
 * a new working directory: the services a step needs, and the directory.
 */
export const toolsLayer = <S = Storage.Services>(provider: Layer.Layer<Provider>, options: ToolsOptions<S> = {}) => {
  const cwd = tmp()
  // the memory store when none is given (S is then its services)
  const store: Layer.Layer<S, StoreError> = options.store ?? (Storage.layerMemory as unknown as Layer.Layer<S>)
  const base = Layer.mergeAll(Bus.layer, Ids.layer, store, provider)
  const guarded = Layer.mergeAll(Permission.layer, Truncate.layer).pipe(Layer.provideMerge(base))
  const settings = Layer.mergeAll(
    Layer.succeed(DataDir, options.dataDir ?? tmp()),
    Layer.succeed(WorkDir, cwd),
    Layer.succeed(PermissionSettings, { rules: defaultRules, nonInteractive: "allow" as const, ...options.permission })
  )
  return { cwd, layer: ToolRegistry.layer(options.tools ?? builtins).pipe(Layer.provideMerge(guarded), Layer.provideMerge(settings)) }
}
