// reins config schema: the JSON Schema of reins.json, generated from the schema the loader decodes with, for an
// editor ("$schema" in reins.json) or a check in CI. The repository keeps the same text at schema/reins.schema.json.
import { Effect } from "effect"
import { Command } from "effect/cli"
import { configJsonSchemaText } from "@reins/domain"

const schema = Command.make("schema", {}, () => Effect.sync(() => process.stdout.write(configJsonSchemaText()))).pipe(
  Command.withDescription('Print the JSON Schema of reins.json (point "$schema" at it for completion and checks in your editor)')
)

export const config = Command.make("config").pipe(Command.withDescription("reins.json itself: its JSON Schema"), Command.withSubcommands([schema]))
