// JSON Schema checks of a model's arguments, for tools whose parameters are a JSON Schema (plain custom tools).
// Written here rather than pulling a validator in: the keywords tool schemas use, with messages a model can act on.
import type { ArgumentIssue } from "../Tool.ts"
import { isRecord } from "./Values.ts"

type Path = ReadonlyArray<string | number>
type Issue = { readonly path: Path; readonly message: string }

/** A schema as sent to the model: always an object schema (MCP servers and plain tools may leave `type` out). */
export const objectSchema = (schema: Record<string, unknown>): Record<string, unknown> => ({
  ...schema,
  type: "object",
  properties: isRecord(schema.properties) ? schema.properties : {}
})

/** Why a plain tool's `parameters` cannot be used as a JSON Schema of its arguments; undefined when it can. */
export const schemaProblem = (schema: Record<string, unknown>): string | undefined => {
  if (schema.type !== undefined && schema.type !== "object")
    return `the parameters must describe an object of arguments ("type": "object"), not ${JSON.stringify(schema.type)}`
  if (schema.properties !== undefined && !isRecord(schema.properties)) return "`properties` must be an object of property schemas"
  if (schema.required !== undefined && !(Array.isArray(schema.required) && schema.required.every((k) => typeof k === "string")))
    return "`required` must be a list of property names"
  return undefined
}

const TYPES: Record<string, (v: unknown) => boolean> = {
  string: (v) => typeof v === "string",
  number: (v) => typeof v === "number" && Number.isFinite(v),
  integer: (v) => Number.isInteger(v),
  boolean: (v) => typeof v === "boolean",
  array: Array.isArray,
  object: isRecord,
  null: (v) => v === null
}

/** A value as a message shows it: JSON, cut at 60 characters. */
const shown = (v: unknown) => {
  const text = v === undefined ? "undefined" : JSON.stringify(v)
  return text.length > 60 ? `${text.slice(0, 57)}...` : text
}

const equal = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => equal(x, b[i]))
  if (isRecord(a) && isRecord(b)) {
    const keys = Object.keys(a)
    return keys.length === Object.keys(b).length && keys.every((k) => k in b && equal(a[k], b[k]))
  }
  return false
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`

/** Resolves a local `$ref` (`#`, `#/$defs/x`, `#/definitions/x`, any JSON pointer into the root); undefined for others. */
const resolveRef = (root: unknown, ref: string): unknown => {
  if (ref !== "#" && !ref.startsWith("#/")) return undefined
  let node: unknown = root
  for (const raw of ref
    .slice(2)
    .split("/")
    .filter((s) => s !== "")) {
    const key = decodeURIComponent(raw).replaceAll("~1", "/").replaceAll("~0", "~")
    node = Array.isArray(node) ? node[Number(key)] : isRecord(node) ? node[key] : undefined
    if (node === undefined) return undefined
  }
  return node
}

/** Deeper than this, a schema refers to itself without the arguments getting any deeper: the check stops. */
const MAX_DEPTH = 64

const regex = (pattern: string) => {
  // a pattern JavaScript cannot compile is not held against the arguments
  try {
    return new RegExp(pattern, "u")
  } catch {
    return undefined
  }
}

const typeNames = (t: unknown): ReadonlyArray<string> =>
  typeof t === "string" ? [t] : Array.isArray(t) ? t.filter((x): x is string => typeof x === "string") : []

/** The issues of one value against one schema (draft 4 to 2020-12 keywords; `format` and remote `$ref`s are not checked). */
const check = (root: unknown, schema: unknown, value: unknown, path: Path, depth: number): Array<Issue> => {
  if (schema === true || schema === undefined) return []
  if (schema === false) return [{ path, message: "No value is allowed here" }]
  if (!isRecord(schema) || depth > MAX_DEPTH) return []
  const issues: Array<Issue> = []
  const add = (message: string, at: Path = path) => void issues.push({ path: at, message })

  if (typeof schema.$ref === "string") {
    const target = resolveRef(root, schema.$ref)
    if (target !== undefined) issues.push(...check(root, target, value, path, depth + 1))
  }

  const types = typeNames(schema.type)
  if (types.length > 0) {
    const allowed = schema.nullable === true ? [...types, "null"] : types
    if (!allowed.some((t) => TYPES[t]?.(value) ?? true)) return [...issues, { path, message: `Expected ${allowed.join(" or ")}, got ${shown(value)}` }]
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((e) => equal(e, value))) add(`Expected one of ${schema.enum.map(shown).join(", ")}, got ${shown(value)}`)
  if ("const" in schema && !equal(schema.const, value)) add(`Expected ${shown(schema.const)}, got ${shown(value)}`)

  if (typeof value === "string") {
    const length = [...value].length
    if (typeof schema.minLength === "number" && length < schema.minLength)
      add(`Expected a string of at least ${plural(schema.minLength, "character")}, got ${shown(value)}`)
    if (typeof schema.maxLength === "number" && length > schema.maxLength)
      add(`Expected a string of at most ${plural(schema.maxLength, "character")}, got ${plural(length, "character")}`)
    const re = typeof schema.pattern === "string" ? regex(schema.pattern) : undefined
    if (re && !re.test(value)) add(`Expected a string matching the pattern ${schema.pattern as string}, got ${shown(value)}`)
  }

  if (typeof value === "number") {
    const { minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf } = schema
    // draft 4 writes an exclusive bound as a boolean beside minimum/maximum
    if (typeof minimum === "number" && (exclusiveMinimum === true ? value <= minimum : value < minimum))
      add(`Expected a number ${exclusiveMinimum === true ? ">" : ">="} ${minimum}, got ${value}`)
    if (typeof maximum === "number" && (exclusiveMaximum === true ? value >= maximum : value > maximum))
      add(`Expected a number ${exclusiveMaximum === true ? "<" : "<="} ${maximum}, got ${value}`)
    if (typeof exclusiveMinimum === "number" && value <= exclusiveMinimum) add(`Expected a number > ${exclusiveMinimum}, got ${value}`)
    if (typeof exclusiveMaximum === "number" && value >= exclusiveMaximum) add(`Expected a number < ${exclusiveMaximum}, got ${value}`)
    if (typeof multipleOf === "number" && multipleOf > 0 && !Number.isInteger(Number((value / multipleOf).toPrecision(12))))
      add(`Expected a multiple of ${multipleOf}, got ${value}`)
  }

  if (isRecord(value)) {
    const properties = isRecord(schema.properties) ? schema.properties : {}
    const patterns = isRecord(schema.patternProperties)
      ? Object.entries(schema.patternProperties).flatMap(([p, s]) => {
          const re = regex(p)
          return re ? [{ re, s }] : []
        })
      : []
    if (Array.isArray(schema.required)) {
      for (const key of schema.required) if (typeof key === "string" && !(key in value)) add("Missing key", [...path, key])
    }
    for (const [key, v] of Object.entries(value)) {
      const at = [...path, key]
      const byPattern = patterns.filter(({ re }) => re.test(key))
      if (key in properties) issues.push(...check(root, properties[key], v, at, depth + 1))
      for (const { s } of byPattern) issues.push(...check(root, s, v, at, depth + 1))
      if (key in properties || byPattern.length > 0 || schema.additionalProperties === undefined) continue
      if (schema.additionalProperties === false) {
        const known = Object.keys(properties)
        add(`Unexpected key${known.length > 0 ? ` (the keys are ${known.join(", ")})` : " (this object takes no keys)"}`, at)
      } else issues.push(...check(root, schema.additionalProperties, v, at, depth + 1))
    }
    const count = Object.keys(value).length
    if (typeof schema.minProperties === "number" && count < schema.minProperties) add(`Expected at least ${plural(schema.minProperties, "key")}, got ${count}`)
    if (typeof schema.maxProperties === "number" && count > schema.maxProperties) add(`Expected at most ${plural(schema.maxProperties, "key")}, got ${count}`)
  }

  if (Array.isArray(value)) {
    // a tuple: `prefixItems` (2020-12) or `items` as a list (drafts 4–7); the rest by `items` / `additionalItems`
    const tuple = Array.isArray(schema.prefixItems) ? schema.prefixItems : Array.isArray(schema.items) ? schema.items : []
    const rest = Array.isArray(schema.prefixItems) ? schema.items : Array.isArray(schema.items) ? schema.additionalItems : schema.items
    value.forEach((item, i) => {
      if (i < tuple.length) issues.push(...check(root, tuple[i], item, [...path, i], depth + 1))
      else if (rest === false) add(`Expected at most ${plural(tuple.length, "item")}, got ${value.length}`, [...path, i])
      else issues.push(...check(root, rest, item, [...path, i], depth + 1))
    })
    if (typeof schema.minItems === "number" && value.length < schema.minItems) add(`Expected at least ${plural(schema.minItems, "item")}, got ${value.length}`)
    if (typeof schema.maxItems === "number" && value.length > schema.maxItems) add(`Expected at most ${plural(schema.maxItems, "item")}, got ${value.length}`)
    if (schema.uniqueItems === true) {
      const dup = value.findIndex((item, i) => value.slice(0, i).some((other) => equal(other, item)))
      if (dup >= 0) add(`Expected unique items, but ${shown(value[dup])} is repeated`, [...path, dup])
    }
  }

  if (Array.isArray(schema.allOf)) for (const s of schema.allOf) issues.push(...check(root, s, value, path, depth + 1))
  const alternatives = (list: ReadonlyArray<unknown>) => list.map((s) => check(root, s, value, path, depth + 1))
  if (Array.isArray(schema.anyOf)) {
    const results = alternatives(schema.anyOf)
    if (!results.some((r) => r.length === 0)) issues.push(...noneMatches(path, schema.anyOf, results, value))
  }
  if (Array.isArray(schema.oneOf)) {
    const results = alternatives(schema.oneOf)
    const matching = results.filter((r) => r.length === 0).length
    if (matching === 0) issues.push(...noneMatches(path, schema.oneOf, results, value))
    else if (matching > 1) add(`Expected a value matching exactly one of ${schema.oneOf.length} forms, but ${shown(value)} matches ${matching}`)
  }
  if (schema.not !== undefined && check(root, schema.not, value, path, depth + 1).length === 0) add(`${shown(value)} is not allowed here`)
  if (schema.if !== undefined) {
    const branch = check(root, schema.if, value, path, depth + 1).length === 0 ? schema.then : schema.else
    issues.push(...check(root, branch, value, path, depth + 1))
  }
  return issues
}

/**
 * When no alternative of `anyOf`/`oneOf` matches: the issues of the closest one (the fewest issues;
 * on a tie, the one that knows more of the value's keys), so a model is told what to fix rather
 * than "matches none".
 */
const noneMatches = (path: Path, forms: ReadonlyArray<unknown>, results: ReadonlyArray<ReadonlyArray<Issue>>, value: unknown): ReadonlyArray<Issue> => {
  const typeOnly = results.every((r) => r.length === 1 && r[0]!.path.length === path.length && r[0]!.message.startsWith("Expected "))
  if (typeOnly) {
    // every form failed on the value itself (often: string or null): one line naming them all
    const wanted = [...new Set(results.map((r) => r[0]!.message.replace(/^Expected /, "").replace(/, got .*$/s, "")))]
    return [{ path, message: `Expected ${wanted.join(", or ")}, got ${shown(value)}` }]
  }
  const keys = isRecord(value) ? Object.keys(value) : []
  const known = (form: unknown) =>
    isRecord(form) && isRecord(form.properties) ? keys.filter((k) => k in (form.properties as Record<string, unknown>)).length : 0
  // a form the value is not even the type of is the furthest
  const wrongType = (r: ReadonlyArray<Issue>) => r.some((i) => i.path.length === path.length && /^Expected [a-z]+( or [a-z]+)*, got /.test(i.message))
  const ranked = results.map((issues, i) => ({ issues, far: wrongType(issues) ? 1 : 0, known: known(forms[i]) }))
  ranked.sort((a, b) => a.far - b.far || a.issues.length - b.issues.length || b.known - a.known)
  return ranked[0]?.issues ?? []
}

/** The issues of a model's arguments against a tool's JSON Schema; empty when they are valid. */
export const validateJsonSchema = (schema: Record<string, unknown>, args: unknown): ReadonlyArray<ArgumentIssue> => check(schema, schema, args, [], 0)
