import { Text } from "ink"
import { memo, useEffect, useState } from "react"
import { loadMarkdown, markdownLines, markdownLoaded } from "./MarkdownLines.ts"
import { useTheme } from "./Theme.ts"

/** Whether markdown renders yet; loads the lexer and re-renders the caller once it does. */
export const useMarkdownReady = (): boolean => {
  const [ready, setReady] = useState(markdownLoaded())
  useEffect(() => {
    if (ready) return
    let live = true
    void loadMarkdown().then(() => live && setReady(true))
    return () => {
      live = false
    }
  }, [ready])
  return ready
}

/** Markdown text rendered for the terminal (as written until the lexer has loaded). */
export const Markdown = memo(({ text, width }: { text: string; width: number }) => {
  const theme = useTheme()
  useMarkdownReady()
  return <Text>{(markdownLines(text, theme, width) ?? text.trimEnd().split("\n")).join("\n")}</Text>
})
