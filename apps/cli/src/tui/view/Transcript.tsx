import { Box, Static, Text } from "ink"
import { memo } from "react"
import { duration } from "../../present/Units.ts"
import { Markdown, useMarkdownReady } from "./Markdown.tsx"
import type { ReasoningItem, SummaryItem, TranscriptItem, TranscriptState } from "./State.ts"
import { toAscii, useTheme } from "./Theme.ts"
import { ToolView } from "./ToolView.tsx"

export interface TranscriptProps {
  readonly state: TranscriptState
  /** Ids of items shown whole (tool output, reasoning, a compaction summary). */
  readonly expanded: ReadonlySet<string>
  readonly width: number
  /** The time now, for spinners and elapsed times of running tools. */
  readonly now: number
  /** Paths inside it are shown relative. */
  readonly cwd?: string
}

const firstLine = (text: string) => text.trim().split("\n")[0] ?? ""
const lastLine = (text: string) => text.trimEnd().split("\n").at(-1) ?? ""

const Reasoning = ({ item, expanded }: { item: ReasoningItem; expanded: boolean }) => {
  const { style, glyphs } = useTheme()
  if (item.text.trim() === "" && item.done) return null
  const took = item.start !== undefined && item.end !== undefined ? ` ${style.glyphs.dot} ${duration(item.end - item.start)}` : ""
  if (!expanded) {
    const label = item.done ? `thought${took}` : `thinking${style.glyphs.ellipsis}`
    const peek = item.done ? firstLine(item.text) : lastLine(item.text)
    return (
      <Text wrap="truncate-end">
        {style.dim(`${glyphs.collapsed} ${glyphs.think} ${label}${peek ? ` ${style.glyphs.dot} ${peek}` : ""}`)}
      </Text>
    )
  }
  return (
    <Box flexDirection="column">
      <Text>{style.dim(`${glyphs.expanded} ${glyphs.think} ${item.done ? `thought${took}` : `thinking${style.glyphs.ellipsis}`}`)}</Text>
      <Box paddingLeft={2}>
        <Text wrap="wrap">{style.dim(style.italic(item.text.trim()))}</Text>
      </Box>
    </Box>
  )
}

const Summary = ({ item, expanded }: { item: SummaryItem; expanded: boolean }) => {
  const { style, glyphs } = useTheme()
  const lines = item.text.trim().split("\n").length
  if (!expanded) return <Text wrap="truncate-end">{style.dim(`${glyphs.collapsed} context summary (${lines} line${lines === 1 ? "" : "s"})`)}</Text>
  return (
    <Box flexDirection="column">
      <Text>{style.dim(`${glyphs.expanded} context summary`)}</Text>
      <Box paddingLeft={2}>
        <Markdown text={item.text} />
      </Box>
    </Box>
  )
}

interface ItemProps {
  readonly item: TranscriptItem
  readonly expanded: boolean
  readonly now: number
  readonly waiting: boolean
  readonly final: boolean
  readonly cwd?: string
}

/** One item of the transcript, with the space above it that separates turns and blocks. */
export const ItemView = memo((props: ItemProps) => {
  const { style, glyphs, unicode } = useTheme()
  const { item } = props
  switch (item.kind) {
    case "user":
      return (
        <Box flexDirection="row" marginTop={1}>
          <Text>{style.bold(style.cyan(glyphs.user))} </Text>
          <Box flexDirection="column" flexShrink={1}>
            <Text wrap="wrap">
              {style.bold(item.text)}
              {item.queued ? style.dim(" (queued)") : ""}
            </Text>
          </Box>
        </Box>
      )
    case "file":
      return <Text wrap="truncate-end">{style.dim(`  [file] ${item.name}`)}</Text>
    case "text":
      // a chunk after the first continues the same answer: no extra space
      return (
        <Box marginTop={item.chunk === 0 ? 1 : 0} flexDirection="column">
          <Markdown text={item.text} />
        </Box>
      )
    case "reasoning":
      return (
        <Box marginTop={1}>
          <Reasoning item={item} expanded={props.expanded} />
        </Box>
      )
    case "tool":
      return (
        <Box marginTop={1}>
          <ToolView part={item.part} expanded={props.expanded} now={props.now} waiting={props.waiting} final={props.final} {...(props.cwd ? { cwd: props.cwd } : {})} />
        </Box>
      )
    case "summary":
      return (
        <Box marginTop={1}>
          <Summary item={item} expanded={props.expanded} />
        </Box>
      )
    case "notice": {
      const paint = item.tone === "error" ? style.red : item.tone === "warn" ? style.yellow : style.dim
      const mark = item.tone === "error" ? `${style.glyphs.fail} ` : item.tone === "warn" ? `${glyphs.warn} ` : ""
      return (
        <Box marginTop={1}>
          <Text wrap="wrap">{paint(`${mark}${unicode ? item.text : toAscii(item.text)}`)}</Text>
        </Box>
      )
    }
  }
})

/**
 * The session's transcript: finished items printed once through Ink's `<Static>` (they scroll up
 * with the terminal and are never drawn again), the live ones below, redrawn each frame. Changing
 * `expanded` or `width` does not re-print what is already printed: re-mount the transcript (a new
 * `key`) after clearing the screen to print it again.
 */
/** The finished items that can be printed for good now: all, or until the first markdown while the lexer loads. */
const printable = (items: ReadonlyArray<TranscriptItem>, markdown: boolean) => {
  if (markdown) return items
  const first = items.findIndex((item) => item.kind === "text" || item.kind === "summary")
  return first === -1 ? items : items.slice(0, first)
}

export const Transcript = (props: TranscriptProps) => {
  const { state, expanded, now, width } = props
  const markdown = useMarkdownReady()
  const waitingFor = new Set(state.permissions.flatMap((p) => (p.callID ? [p.callID] : [])))
  const cwd = props.cwd === undefined ? {} : { cwd: props.cwd }
  return (
    <>
      <Static items={printable(state.items, markdown) as Array<TranscriptItem>}>
        {(item) => (
          <Box key={item.id} width={width} flexDirection="column">
            <ItemView item={item} expanded={expanded.has(item.id)} now={0} waiting={false} final={true} {...cwd} />
          </Box>
        )}
      </Static>
      {state.live.length > 0 ? (
        <Box width={width} flexDirection="column">
          {state.live.map((item) => (
            <ItemView
              key={item.id}
              item={item}
              expanded={expanded.has(item.id)}
              // only a running call needs the clock: other items keep their props and are not redrawn
              now={item.kind === "tool" ? now : 0}
              waiting={item.kind === "tool" && waitingFor.has(item.part.callID)}
              final={false}
              {...cwd}
            />
          ))}
        </Box>
      ) : null}
    </>
  )
}
