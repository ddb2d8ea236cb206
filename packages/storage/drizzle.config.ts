import { defineConfig } from "drizzle-kit"

// `bun run generate` writes a new numbered .sql file into ./migrations (and, from drizzle.pg.config.ts, one into
// ./migrations/pg); register it in src/Migrations.ts (a test fails until you do).
export default defineConfig({
  dialect: "sqlite",
  schema: "./src/schema.ts",
  out: "./migrations"
})
