// The floor for the interactive-startup bench: the smallest Ink app that shows an input prompt (a bordered box with
// "❯ " and a hint line) and echoes what is typed. Bundled by bench/tui.ts against the ink and react that apps/cli ships.
import { Box, render, Text, useApp, useInput } from "ink"
import { useState } from "react"

const Hello = () => {
  const [text, setText] = useState("")
  const { exit } = useApp()
  useInput((input, key) => {
    if (key.ctrl && input === "d") return exit()
    if (key.backspace) return setText((t) => t.slice(0, -1))
    if (!key.ctrl && !key.meta) setText((t) => t + input)
  })
  return (
    <Box flexDirection="column">
      <Text>hello from ink</Text>
      <Box borderStyle="round" paddingX={1}>
        <Text color="cyan">{"❯ "}</Text>
        <Text>{text === "" ? " " : text}</Text>
      </Box>
      <Text dimColor>{"  Enter send · Ctrl+D exit"}</Text>
    </Box>
  )
}

render(<Hello />)
