import { defineConfig } from "drizzle-kit"

// `bun run generate` writes a new numbered .sql file into ./migrations/pg for src/schema.pg.ts; register it in
// src/PgMigrations.ts (a test fails until you do).
export default defineConfig({
  dialect: "postgresql",
  schema: "./src/schema.pg.ts",
  out: "./migrations/pg"
})
