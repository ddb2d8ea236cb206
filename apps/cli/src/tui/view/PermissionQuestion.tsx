import { Box, Text, useInput } from "ink"
import { useState } from "react"
import { previewLines } from "../../present/Diff.ts"
import type { PendingPermission } from "./State.ts"
import { useTheme } from "./Theme.ts"

export type PermissionReply = "once" | "always" | "reject"

/** A reply to a question; a reject may carry a message back to the model. */
export interface PermissionAnswer {
  readonly reply: PermissionReply
  readonly message?: string
}

/** The question's lines, as the TTY prompt shows them: what would run, where, why it is asked, what "always" allows. */
export const questionLines = (request: PendingPermission, cwd: string, arrow = "→"): ReadonlyArray<string> => {
  const lines = [`Permission needed: ${request.permission}${request.title && request.permission !== "bash" ? ` (${request.title})` : ""}`]
  // a bash question's title is what is said beside the command (a background command: how long the grant lasts)
  if (request.title && request.permission === "bash") lines.push(`  note: ${request.title}`)
  if (request.command && request.command.trim() !== request.patterns[0]) lines.push(`  command: ${request.command.trim().split("\n").join("\n           ")}`)
  lines.push(...request.patterns.map((p, i) => `  ${i === 0 ? "asks for" : "     and"}: ${p}`))
  lines.push(`  in: ${request.directory ?? cwd}`)
  if (request.opaque) lines.push(`  why: ${request.opaque}; reins cannot see what it runs, so a broad allow rule does not cover it`)
  lines.push(request.rule ? `  rule: ${request.rule.permission} "${request.rule.pattern}" ${arrow} ${request.rule.action}` : `  rule: none matched (ask)`)
  lines.push(`  always would allow: ${request.always.map((p) => `${request.permission} "${p}"`).join(", ")}`)
  return lines
}

/** The most diff lines a question shows: the options stay on screen on a small terminal. */
const DIFF_LINES = 20

const OPTIONS: ReadonlyArray<{ readonly reply: PermissionReply; readonly key: string; readonly label: string }> = [
  { reply: "once", key: "o", label: "once" },
  { reply: "always", key: "a", label: "always" },
  { reply: "reject", key: "r", label: "reject" }
]

export interface PermissionQuestionProps {
  readonly request: PendingPermission
  readonly onReply: (answer: PermissionAnswer) => void
  /** Where the command runs when the request does not say. */
  readonly cwd?: string
}

/**
 * A permission question inline: the TTY prompt's content, then once / always / reject. Keys: o, a,
 * r (or arrows and Enter); Esc rejects. A reject asks for a message to the model (Enter sends it,
 * empty for none; Esc sends none).
 */
export const PermissionQuestion = (props: PermissionQuestionProps) => {
  const { style, glyphs } = useTheme()
  const [selected, setSelected] = useState(0)
  const [message, setMessage] = useState<string | undefined>(undefined)
  const reply = (answer: PermissionAnswer) => props.onReply(answer)

  useInput((input, key) => {
    if (message !== undefined) {
      if (key.escape) return reply({ reply: "reject" })
      if (key.return) {
        const text = message.trim()
        return reply(text === "" ? { reply: "reject" } : { reply: "reject", message: text })
      }
      if (key.backspace || key.delete) return setMessage(message.slice(0, -1))
      if (key.ctrl || key.meta || key.tab || key.upArrow || key.downArrow || key.leftArrow || key.rightArrow) return
      // text typed fast (over ssh, tmux send-keys) arrives with its Enter in one chunk: it sends
      const typed = /^([^\r]*)\r$/.exec(input)
      if (typed) {
        const text = `${message}${typed[1]}`.trim()
        return reply(text === "" ? { reply: "reject" } : { reply: "reject", message: text })
      }
      // a paste arrives whole; a newline in it is a space in a one-line message
      return setMessage(message + input.replace(/\r?\n|\r/g, " "))
    }
    if (key.escape) return reply({ reply: "reject" })
    if (key.leftArrow || key.upArrow || (key.shift && key.tab)) return setSelected((selected + OPTIONS.length - 1) % OPTIONS.length)
    if (key.rightArrow || key.downArrow || key.tab) return setSelected((selected + 1) % OPTIONS.length)
    const chosen = key.return
      ? OPTIONS[selected]
      : OPTIONS.find((o) => o.key === input.toLowerCase() || (input.toLowerCase() === "y" && o.key === "o") || (input.toLowerCase() === "n" && o.key === "r"))
    if (chosen === undefined) return
    if (chosen.reply === "reject") return setMessage("")
    reply({ reply: chosen.reply })
  })

  const lines = questionLines(props.request, props.cwd ?? process.cwd(), style.glyphs.arrow)
  // what an edit would change, so the answer is about the change and not only its file name
  const diff = props.request.diffs && props.request.diffs.length > 0 ? previewLines(props.request.diffs, style, DIFF_LINES) : []
  const options = OPTIONS.map((o, i) => {
    const label = `[${o.key}]${o.label.slice(1)}`
    return i === selected ? style.bold(style.cyan(`${glyphs.user} ${label}`)) : `  ${label}`
  }).join("  ")
  return (
    <Box flexDirection="column" marginTop={1}>
      <Text wrap="wrap">{style.bold(style.yellow(lines[0]!))}</Text>
      {lines.slice(1).map((line, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: the lines of one text, whose index is their identity
        <Text key={i} wrap="wrap">
          {line}
        </Text>
      ))}
      {diff.map((line, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: the lines of one diff, whose index is their identity
        <Text key={`d${i}`} wrap="truncate-end">
          {line}
        </Text>
      ))}
      {message === undefined ? (
        <Text>
          {options}
          {style.dim(`   ${style.glyphs.dot} Esc rejects`)}
        </Text>
      ) : (
        <Box flexDirection="column">
          <Text>{style.dim("Tell the agent why or what to do instead (Enter to send, empty to skip; Esc to skip):")}</Text>
          <Text wrap="wrap">
            {style.cyan(glyphs.user)} {message}
            {style.dim("_")}
          </Text>
        </Box>
      )}
    </Box>
  )
}
