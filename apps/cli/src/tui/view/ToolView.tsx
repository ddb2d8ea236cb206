import { Text } from "ink"
import { memo } from "react"
import type { ToolPart } from "@reins/domain"
import { useTheme } from "./Theme.ts"
import { toolLines } from "./ToolLines.ts"

export interface ToolViewProps {
  readonly part: ToolPart
  readonly expanded: boolean
  readonly now: number
  readonly width: number
  readonly waiting?: boolean
  readonly cwd?: string
}

/** One tool call (see `toolLines`), for use outside the transcript. */
export const ToolView = memo((props: ToolViewProps) => {
  const theme = useTheme()
  const { part, ...rest } = props
  return <Text>{toolLines(part, { ...rest, theme }).join("\n")}</Text>
})
