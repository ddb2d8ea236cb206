// A list to choose from (sessions to resume, models): Up/Down, Enter picks, Esc closes; typing filters.
import { Box, type Key, Text, useInput } from "ink"
import { useLayoutEffect, useRef, useState } from "react"
import type { KeyHandler, KeyRoute } from "./KeyRoute.ts"
import { useTheme } from "./view/index.ts"

export interface PickerItem<A> {
  readonly label: string
  readonly detail?: string
  readonly value: A
  /** Marked as the current choice. */
  readonly current?: boolean
}

/** How many rows the list shows at once. */
const ROWS = 10

/** The items whose label or detail holds the filter text (any case). */
const filtered = <A,>(items: ReadonlyArray<PickerItem<A>>, filter: string) =>
  filter === "" ? items : items.filter((i) => `${i.label} ${i.detail ?? ""}`.toLowerCase().includes(filter.toLowerCase()))

export const Picker = <A,>(props: {
  readonly title: string
  readonly items: ReadonlyArray<PickerItem<A>>
  readonly onPick: (value: A) => void
  readonly onCancel: () => void
  /** Where its keys come from: those typed while it was opening first (KeyRoute); without one, it reads them itself. */
  readonly keys?: KeyRoute
}) => {
  const { style, unicode } = useTheme()
  // NO_COLOR: no dim or bold either, as in the transcript
  const dim = style.color ? { dimColor: true } : {}
  const bold = style.color ? { bold: true } : {}
  // keys typed in one burst (Down then Enter) each see the state the one before left: it is kept in
  // a ref updated at once, and the render follows it
  const live = useRef({ filter: "", selected: 0 })
  const [, rerender] = useState(0)
  const set = (next: Partial<{ filter: string; selected: number }>) => {
    live.current = { ...live.current, ...next }
    rerender((n) => n + 1)
  }
  const { filter } = live.current
  const shown = filtered(props.items, filter)
  const at = Math.min(live.current.selected, Math.max(0, shown.length - 1))

  // closed by a key, it lets go of the keys at once: those after it (in the same burst) are the prompt's
  const handler = useRef<KeyHandler>(() => undefined)
  const pick = (item: PickerItem<A> | undefined) => {
    props.keys?.detach(handler.current)
    return item ? props.onPick(item.value) : props.onCancel()
  }
  const onKey = (input: string, key: Key) => {
    const now = filtered(props.items, live.current.filter)
    const current = Math.min(live.current.selected, Math.max(0, now.length - 1))
    if (key.escape || (key.ctrl && input === "c")) return pick(undefined)
    if (key.return) return pick(now[current])
    if (key.upArrow) return set({ selected: Math.max(0, current - 1) })
    if (key.downArrow) return set({ selected: Math.min(now.length - 1, current + 1) })
    if (key.pageUp) return set({ selected: Math.max(0, current - ROWS) })
    if (key.pageDown) return set({ selected: Math.min(now.length - 1, current + ROWS) })
    if (key.backspace || key.delete) return set({ selected: 0, filter: live.current.filter.slice(0, -1) })
    if (input && !key.ctrl && !key.meta && !key.tab) {
      // typed quickly, Enter can come in the same chunk as the filter text: it picks from what the text leaves (the row
      // chosen, when there is no text before it), and what follows it is the prompt's
      const enter = /\r\n?|\n/.exec(input)
      if (enter === null) return set({ selected: 0, filter: live.current.filter + input })
      const text = input.slice(0, enter.index)
      const rest = input.slice(enter.index + enter[0].length)
      pick(text === "" ? now[current] : filtered(props.items, live.current.filter + text)[0])
      if (rest !== "") props.keys?.pass(rest, key)
    }
  }
  const latest = useRef(onKey)
  latest.current = onKey
  // attached as soon as it is on screen (before the frame's effects): the keys held while it opened come first
  useLayoutEffect(() => {
    const route = props.keys
    if (route === undefined) return
    const take: KeyHandler = (input, key) => latest.current(input, key)
    handler.current = take
    route.attach(take)
    return () => route.detach(take)
  }, [props.keys])
  // on its own (the first run's setup, with no prompt below it)
  useInput(onKey, { isActive: props.keys === undefined })

  const first = Math.max(0, Math.min(at - Math.floor(ROWS / 2), shown.length - ROWS))
  const rows = shown.slice(first, first + ROWS)
  return (
    <Box flexDirection="column" borderStyle={unicode ? "round" : "classic"} paddingX={1}>
      <Text {...bold}>
        {props.title}
        {filter ? <Text {...dim}>{`  filter: ${filter}`}</Text> : null}
      </Text>
      {rows.length === 0 ? <Text {...dim}>nothing matches</Text> : null}
      {rows.map((item, i) => {
        const index = first + i
        return (
          <Text key={`${index}:${item.label}`} wrap="truncate-end" {...(index === at && style.color ? { color: "cyan" } : {})}>
            {index === at ? (unicode ? "❯ " : "> ") : "  "}
            {item.label}
            {item.current ? " (current)" : ""}
            {item.detail ? <Text {...dim}>{`  ${item.detail}`}</Text> : null}
          </Text>
        )
      })}
      <Text
        {...dim}
      >{`${unicode ? "↑↓" : "Up/Down"} choose ${style.glyphs.dot} Enter pick ${style.glyphs.dot} Esc cancel ${style.glyphs.dot} type to filter`}</Text>
    </Box>
  )
}
