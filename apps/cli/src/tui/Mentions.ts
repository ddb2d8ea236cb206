// `@path` completion in the prompt: the word before the cursor, when it starts with `@`, is completed like a shell
// completes a path — one directory read at a time, relative to the project (a mention attaches the file it names).
import * as fs from "node:fs"
import * as path from "node:path"
import type { EditorState } from "./Editor.ts"

/** The most matches listed under the prompt. */
export const MAX_SHOWN = 8

/** The `@` word the cursor ends: where its path starts in the text, and the path typed so far. */
export const mentionAt = (editor: EditorState): { readonly start: number; readonly typed: string } | undefined => {
  const before = editor.text.slice(0, editor.cursor)
  // as Attachments' MENTION: `@` at the start or after a space or bracket, then a path without spaces or quotes
  const found = /(?:^|[\s([{"'])@([^\s"'`<>|]*)$/.exec(before)
  if (found === null) return undefined
  const typed = found[1]!
  return { start: editor.cursor - typed.length, typed }
}

/** One entry that completes what was typed: its path as typed from the project, directories ending in `/`. */
export interface MentionMatch {
  readonly path: string
  readonly directory: boolean
}

// never listed: what no one mentions and what is large to read
const SKIPPED = new Set([".git", "node_modules"])

/**
 * The entries of the directory `typed` names that start with its last segment, directories first, then by name;
 * hidden ones only when the segment starts with a dot. Nothing outside the project (`..`, absolute paths, `~`).
 */
export const mentionMatches = (cwd: string, typed: string): ReadonlyArray<MentionMatch> => {
  if (typed.startsWith("/") || typed.startsWith("~") || typed.split("/").includes("..")) return []
  const slash = typed.lastIndexOf("/")
  const dir = slash === -1 ? "" : typed.slice(0, slash + 1)
  const prefix = typed.slice(slash + 1)
  let entries: Array<fs.Dirent>
  try {
    entries = fs.readdirSync(path.join(cwd, dir), { withFileTypes: true })
  } catch {
    return []
  }
  const directory = (e: fs.Dirent) => e.isDirectory() || (e.isSymbolicLink() && isDirectory(path.join(cwd, dir, e.name)))
  return entries
    .filter((e) => e.name.startsWith(prefix) && (prefix.startsWith(".") || !e.name.startsWith(".")) && !SKIPPED.has(e.name))
    .map((e) => ({ path: `${dir}${e.name}${directory(e) ? "/" : ""}`, directory: directory(e) }))
    .sort((a, b) => Number(b.directory) - Number(a.directory) || a.path.localeCompare(b.path))
}

const isDirectory = (file: string) => {
  try {
    return fs.statSync(file).isDirectory()
  } catch {
    return false
  }
}

/**
 * Tab on an `@` word: the editor with the path completed to the single match (a file then gets a space after it),
 * or to the matches' longest common prefix; undefined when there is nothing to add.
 */
export const completeMention = (editor: EditorState, cwd: string): EditorState | undefined => {
  const at = mentionAt(editor)
  if (at === undefined) return undefined
  const found = mentionMatches(cwd, at.typed)
  if (found.length === 0) return undefined
  let completed: string
  if (found.length === 1) completed = found[0]!.directory ? found[0]!.path : `${found[0]!.path} `
  else {
    let prefix = found[0]!.path
    for (const m of found) while (!m.path.startsWith(prefix)) prefix = prefix.slice(0, -1)
    if (prefix.length <= at.typed.length) return undefined
    completed = prefix
  }
  const text = editor.text.slice(0, at.start) + completed + editor.text.slice(editor.cursor)
  return { text, cursor: at.start + completed.length }
}
