// The one Sessions service over a scripted Provider, on the memory store or an SQLite file: what
// the use-case tests and the second process (fixtures/hold-turn.ts) run.
import { Compaction } from "@reins/compaction"
import { emptyUsage } from "@reins/domain"
import type { ModelEvent, ProviderRequest } from "@reins/provider"
import { Storage, type StoreError } from "@reins/storage"
import { Layer } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { EventAppender, SessionProcessor, SessionRuns, SessionService, Sessions, Turn } from "../src/index.ts"
import { scripted, toolsLayer } from "./support.ts"

export const model = { providerID: "p", modelID: "m" }

const finish = (reason: string): ModelEvent => ({ type: "finish-step", finishReason: reason, usage: emptyUsage, cost: 0 })

/** A step that runs `command` with bash. */
export const bashStep = (command: string): ReadonlyArray<ModelEvent> => [
  { type: "tool-call", callID: "c1", name: "bash", input: { command, description: "wait" } },
  finish("tool-calls")
]

/** A step that answers `text`. */
export const textStep = (text: string): ReadonlyArray<ModelEvent> => [
  { type: "text-start", id: "t" },
  { type: "text-delta", id: "t", text },
  { type: "text-end", id: "t" },
  finish("stop")
]

/** A bash command that waits until `open` is called for the same directory. */
export const gate = (dir: string, name = "go") => ({
  command: `while [ ! -e ${path.join(dir, name)} ]; do sleep 0.05; done; echo released`,
  open: () => fs.writeFileSync(path.join(dir, name), "")
})

/** Sessions with everything under it (SessionService, SessionRuns, the store and its event log's appender, Bus, Permission, tools) over `steps`. */
export const sessionsLayer = (
  steps: ReadonlyArray<ReadonlyArray<ModelEvent>>,
  options: { readonly sqlite?: string; readonly store?: Layer.Layer<Storage.Services, StoreError> } = {}
) => {
  const requests: Array<ProviderRequest> = []
  const store = options.store ?? (options.sqlite === undefined ? Storage.layerMemory : Storage.layerSqlite(options.sqlite))
  const { cwd, layer: tools } = toolsLayer(scripted(steps, requests), { store })
  const turns = Layer.mergeAll(SessionRuns.layer, Turn.layer.pipe(Layer.provide(SessionProcessor.layer)))
  const service = SessionService.layerWithRuns.pipe(Layer.provideMerge(turns), Layer.provideMerge(Compaction.layer.pipe(Layer.provideMerge(tools))))
  // the appender stores the bus's events in the log, as the runtime wires it
  return { cwd, requests, layer: Sessions.layer.pipe(Layer.provideMerge(EventAppender.layer), Layer.provideMerge(service)) }
}
