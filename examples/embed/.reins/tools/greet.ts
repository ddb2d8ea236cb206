// A custom tool file: reins loads it from the project's .reins/tools/ and serves `@reins/plugin` itself;
// the installed @reins/plugin (a dev dependency) is there for the types, so `tsc` checks this file too.
import { Effect, Schema, Tool } from "@reins/plugin"

export default Tool.define("greet", {
  description: "Greets someone by name",
  parameters: Schema.Struct({ name: Schema.String }),
  execute: (args) => Effect.succeed({ title: "greet", output: `hello ${args.name}` })
})
