// The spinner line under the transcript while a turn runs: it keeps its own clock, so a spinner frame redraws this
// one line, not the whole app (the transcript's live part is not laid out again for it).
import { Text } from "ink"
import { useEffect, useState } from "react"
import { spinnerLine } from "../present/Spinner.ts"
import type { Style } from "../present/Style.ts"

/** Milliseconds between the line's redraws: 10 frames a second. */
export const STATUS_TICK_MS = 100

export const StatusLine = (props: { readonly style: Style; readonly label: string; readonly since: number }) => {
  const [now, setNow] = useState(Date.now())
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), STATUS_TICK_MS)
    return () => clearInterval(timer)
  }, [])
  return <Text wrap="truncate-end">{spinnerLine(props.style, props.label, Math.max(0, now - props.since))}</Text>
}
