// The two schemas — schema.ts (SQLite) and schema.pg.ts (PostgreSQL) — declare the same tables and columns, so
// the adapters read and write the same shape whichever database holds it.
import { describe, expect, test } from "bun:test"
import { getTableConfig as pgTable, PgTable } from "drizzle-orm/pg-core"
import { getTableConfig as sqliteTable, SQLiteTable } from "drizzle-orm/sqlite-core"
import * as pg from "../src/schema.pg.ts"
import * as sqlite from "../src/schema.ts"

type Shape = Record<string, Array<string>>

const sqliteShape = (): Shape =>
  Object.fromEntries(
    (Object.values(sqlite) as Array<unknown>)
      .filter((value): value is SQLiteTable => value instanceof SQLiteTable)
      .map((table) => {
        const config = sqliteTable(table)
        return [config.name, config.columns.map((column) => column.name).sort()]
      })
  )

const pgShape = (): Shape =>
  Object.fromEntries(
    (Object.values(pg) as Array<unknown>)
      .filter((value): value is PgTable => value instanceof PgTable)
      .map((table) => {
        const config = pgTable(table)
        return [config.name, config.columns.map((column) => column.name).sort()]
      })
  )

describe("the SQLite and PostgreSQL schemas", () => {
  test("declare the same tables", () => {
    expect(Object.keys(pgShape()).sort()).toEqual(Object.keys(sqliteShape()).sort())
  })

  const tables = Object.keys(sqliteShape()).sort()
  for (const table of tables) {
    test(`declare the same columns of ${table}`, () => {
      expect(pgShape()[table]).toEqual(sqliteShape()[table])
    })
  }
})
