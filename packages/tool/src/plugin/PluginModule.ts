// The `@reins/plugin` module that tool and plugin files import: the runtime's own Tool, Schema and Effect (loaded lazily
// by Loader's registerPluginModule).
import { plugin as bunPlugin } from "bun"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Tool from "../Tool.ts"

let registered = false

/** Serves `@reins/plugin` to the files Bun imports from now on (once per process). */
export const registerPluginModule = (define: typeof Tool.define) => {
  if (registered) return
  registered = true
  bunPlugin({
    name: "reins-plugin-module",
    setup(build) {
      build.module("@reins/plugin", () => ({
        exports: { Tool: { define, render: Tool.render }, ToolError: Tool.ToolError, Schema, Effect },
        loader: "object"
      }))
    }
  })
}
