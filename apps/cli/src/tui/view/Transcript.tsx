import { Text, useStdout, useWindowSize } from "ink"
import { useLayoutEffect, useRef } from "react"
import { itemLines, type ItemOptions } from "./ItemLines.ts"
import { useMarkdownReady } from "./Markdown.tsx"
import type { TranscriptItem, TranscriptState } from "./State.ts"
import { useTheme } from "./Theme.ts"

export interface TranscriptProps {
  readonly state: TranscriptState
  /** Ids of items shown whole (tool output, reasoning, a compaction summary). */
  readonly expanded: ReadonlySet<string>
  readonly width: number
  /** The time now, for spinners and elapsed times of running tools. */
  readonly now: number
  /** Paths inside it are shown relative. */
  readonly cwd?: string
  /** Where finished items are printed for good; Ink's stdout write (above the live frame) by default. */
  readonly print?: (text: string) => void
  /** Rows the live part may take; by default the terminal's rows less room for the prompt and footer. */
  readonly height?: number
}

/** Rows of the terminal kept for what is below the transcript (status, prompt, footer). */
export const RESERVED_ROWS = 10

/**
 * The session's transcript. Finished items are printed once, as text above Ink's frame (what
 * `<Static>` does, without laying out a box per line: a resumed session of hundreds of messages is
 * one write); they scroll up with the terminal and are never drawn again. The live items are the
 * frame, redrawn as they change. An answer is printed only once the markdown lexer has loaded.
 * Changing `expanded` or `width` does not re-print what is printed: clear the screen and re-mount
 * the transcript (a new `key`) to print it all again.
 */
export const Transcript = (props: TranscriptProps) => {
  const { state, expanded, now, width } = props
  const theme = useTheme()
  const stdout = useStdout()
  const size = useWindowSize()
  const print = props.print ?? stdout.write
  // re-renders once the lexer is there, so held-back answers are printed
  useMarkdownReady()
  // how many of state.items are printed; a state with fewer items (a new session) starts again
  const printed = useRef(0)
  const from = printed.current <= state.items.length ? printed.current : 0
  const base: Omit<ItemOptions, "expanded"> = { theme, width, now: 0, final: true, ...(props.cwd ? { cwd: props.cwd } : {}) }

  // what is ready to print: finished items in order, up to the first answer the lexer cannot render yet
  let upTo = from
  const text: Array<string> = []
  for (; upTo < state.items.length; upTo++) {
    const item = state.items[upTo]!
    const lines = itemLines(item, { ...base, expanded: expanded.has(item.id) })
    if (lines === undefined) break
    text.push(...lines)
  }
  const pending = useRef({ upTo, text: "" })
  pending.current = { upTo, text: text.length > 0 ? `${text.join("\n")}\n` : "" }
  useLayoutEffect(() => {
    const next = pending.current
    if (next.upTo === printed.current && next.text === "") return
    printed.current = next.upTo
    if (next.text !== "") print(next.text)
  })

  // the frame: finished items still waiting for the lexer, then the live ones
  const waitingFor = new Set(state.permissions.flatMap((p) => (p.callID ? [p.callID] : [])))
  const frame: Array<string> = []
  const draw = (item: TranscriptItem, final: boolean) => {
    const options: ItemOptions = {
      ...base,
      final,
      expanded: expanded.has(item.id),
      now: item.kind === "tool" ? now : 0,
      waiting: item.kind === "tool" && waitingFor.has(item.part.callID)
    }
    frame.push(...(itemLines(item, options) ?? ["", ...(item.kind === "text" ? item.text.trimEnd().split("\n") : [])]))
  }
  for (let i = upTo; i < state.items.length; i++) draw(state.items[i]!, true)
  for (const item of state.live) draw(item, false)
  // a frame taller than the terminal cannot be redrawn in place: its top waits, cut, until it is printed whole
  const room = Math.max(3, props.height ?? size.rows - RESERVED_ROWS)
  const shown =
    frame.length > room
      ? [
          theme.style.dim(`${theme.style.glyphs.ellipsis} ${frame.length - room + 1} more lines above, printed when done`),
          ...frame.slice(frame.length - room + 1)
        ]
      : frame
  return shown.length > 0 ? <Text>{shown.join("\n")}</Text> : null
}
