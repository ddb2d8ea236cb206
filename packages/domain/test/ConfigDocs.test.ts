// The docs hold: every config key of the schema is documented on some docs page, the README stays a front door
// (at most 200 lines), and every relative link in README.md and docs/*.md reaches a file (and a heading, for #anchors).
import { describe, expect, test } from "bun:test"
import * as fs from "node:fs"
import * as path from "node:path"
import { configKeyPaths } from "../src/ConfigSchema.ts"

const ROOT = path.resolve(import.meta.dir, "../../..")
const DOCS = path.join(ROOT, "docs")
const pages = fs
  .readdirSync(DOCS)
  .filter((f) => f.endsWith(".md"))
  .map((f) => path.join(DOCS, f))
const README = path.join(ROOT, "README.md")
const read = (file: string) => fs.readFileSync(file, "utf8")

/** GitHub's anchor of a heading: lower case, punctuation dropped, each space a hyphen. */
const slug = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-")

/** The anchors of a Markdown file's headings (outside code blocks), repeated ones numbered as GitHub numbers them. */
const anchors = (text: string) => {
  const seen = new Map<string, number>()
  const out = new Set<string>()
  let fenced = false
  for (const line of text.split("\n")) {
    if (line.startsWith("```")) fenced = !fenced
    const heading = !fenced && /^#{1,6}\s+(.*)$/.exec(line)
    if (!heading) continue
    const base = slug(heading[1]!.trim())
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    out.add(n === 0 ? base : `${base}-${n}`)
  }
  return out
}

/** The relative link targets of a Markdown file, outside code blocks and code spans. */
const links = (text: string) => {
  const prose = text.replace(/```[\s\S]*?```/g, "").replace(/`[^`\n]*`/g, "")
  return [...prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!).filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target))
}

describe("the docs", () => {
  test("every config key of the schema is documented, as `key` on some docs page (a map's keys as <name>)", () => {
    const text = pages.map(read).join("\n")
    const missing = configKeyPaths().filter((key) => {
      const pattern = key
        .split("*")
        .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
        .join("<[^>`\\s]+>")
      return !new RegExp(`\`${pattern}\``).test(text)
    })
    expect(missing).toEqual([])
  })

  test("the README is at most 200 lines and links every docs page", () => {
    const readme = read(README)
    expect(readme.trimEnd().split("\n").length).toBeLessThanOrEqual(200)
    const linked = new Set(links(readme).map((target) => path.resolve(ROOT, target.split("#")[0]!)))
    expect(pages.filter((page) => !linked.has(page) && path.basename(page) !== "README.md").map((p) => path.basename(p))).toEqual([])
  })

  test("every relative link in README.md and docs/*.md resolves to a file, and every #anchor to a heading", () => {
    const broken: Array<string> = []
    for (const file of [README, ...pages]) {
      for (const target of links(read(file))) {
        const [where, anchor] = target.split("#") as [string, string | undefined]
        const resolved = where === "" ? file : path.resolve(path.dirname(file), decodeURIComponent(where))
        if (!fs.existsSync(resolved)) broken.push(`${path.relative(ROOT, file)}: ${target} (no such file)`)
        else if (anchor !== undefined && resolved.endsWith(".md") && !anchors(read(resolved)).has(anchor)) {
          broken.push(`${path.relative(ROOT, file)}: ${target} (no such heading)`)
        }
      }
    }
    expect(broken).toEqual([])
  })
})
