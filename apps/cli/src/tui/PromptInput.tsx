// The prompt: multi-line editing, history, slash and `@path` completion, and the keys that stop or leave.
import { Box, type Key, Text, useInput, usePaste } from "ink"
import { useEffect, useMemo, useRef, useState } from "react"
import * as E from "./Editor.ts"
import { startCursor, step, type HistoryCursor } from "./History.ts"
import { type KeyRoute, TEXT_KEY } from "./KeyRoute.ts"
import type { Style } from "../present/Style.ts"
import { MAX_SHOWN, completeMention, mentionAt, mentionMatches } from "./Mentions.ts"
import { complete, matches, type SlashCommand } from "./Slash.ts"

/** How long a first Ctrl+C on an empty prompt waits for the second that exits. */
const EXIT_WINDOW_MS = 2000

export interface PromptInputProps {
  /** Whether keys go here (not while a picker or a permission question has them). */
  readonly active: boolean
  /**
   * Where keys go first: to a picker that has them or is opening (KeyRoute). The prompt still listens while a picker
   * is open (`listening`) and passes them on, so that no key falls between the two.
   */
  readonly keys?: KeyRoute
  /** Whether the prompt reads keys at all (default: while `active`). */
  readonly listening?: boolean
  readonly running: boolean
  readonly history: ReadonlyArray<string>
  readonly onSubmit: (text: string) => void
  readonly onInterrupt: () => void
  readonly onExit: () => void
  /** Ctrl+O: expand / collapse tool results. */
  readonly onToggleExpand: () => void
  /** Esc twice on an idle prompt: the rewind picker. */
  readonly onRewind?: () => void
  /** The project's and the user's commands, offered with the built-in ones after `/`. */
  readonly commands?: ReadonlyArray<SlashCommand>
  /** Text put in the prompt to edit (a rewound message); a new object each time. */
  readonly prefill?: { readonly text: string }
  /** The project directory: `@path` completes from it. */
  readonly cwd?: string
  readonly width: number
  readonly style: Style
}

/** The editor's text with the cursor drawn as an inverse cell, line by line. */
const renderLines = (s: E.EditorState, showCursor: boolean) => {
  const lines = s.text.split("\n")
  let offset = 0
  return lines.map((line, i) => {
    const start = offset
    offset += line.length + 1
    const inLine = showCursor && s.cursor >= start && s.cursor <= start + line.length
    // biome-ignore lint/suspicious/noArrayIndexKey: the lines of one text, whose index is their identity
    if (!inLine) return <Text key={i}>{line === "" ? " " : line}</Text>
    const at = s.cursor - start
    return (
      // biome-ignore lint/suspicious/noArrayIndexKey: as above
      <Text key={i}>
        {line.slice(0, at)}
        <Text inverse>{line[at] ?? " "}</Text>
        {line.slice(at + 1)}
      </Text>
    )
  })
}

export const PromptInput = (props: PromptInputProps) => {
  /** Tab: a `/command` completed, else an `@path`; undefined when there is nothing to add. */
  const tab = (editor: E.EditorState): E.EditorState | undefined => {
    const command = complete(editor.text, props.commands)
    if (command !== undefined) return E.withText(command)
    return props.cwd === undefined ? undefined : completeMention(editor, props.cwd)
  }
  // the latest state in a ref too: keys that arrive before the next render must see each other's edits
  const [shown, setShown] = useState<E.EditorState>(E.emptyEditor)
  const current = useRef<E.EditorState>(E.emptyEditor)
  const setEditor = (next: E.EditorState) => {
    current.current = next
    setShown(next)
  }
  const [hint, setHint] = useState<string | undefined>(undefined)
  const historyCursor = useRef<HistoryCursor>(startCursor)
  const lastCtrlC = useRef(0)
  const lastEscape = useRef(0)
  const [listening, setListening] = useState(false)

  const edit = (next: E.EditorState) => {
    historyCursor.current = next.text === current.current.text ? historyCursor.current : { ...historyCursor.current, index: 0 }
    setEditor(next)
    setHint(undefined)
  }
  const submit = (text: string) => {
    historyCursor.current = startCursor
    setEditor(E.emptyEditor)
    if (text.trim() !== "") props.onSubmit(text)
  }
  const walkHistory = (direction: -1 | 1) => {
    const next = step(props.history, historyCursor.current, current.current.text, direction)
    if (!next) return
    historyCursor.current = next.cursor
    setEditor(E.withText(next.text))
  }

  const pasteIn = (text: string) => edit(E.insert(current.current, text.replace(/\r\n?/g, "\n")))
  usePaste(
    (text) => {
      // pasted while a picker opens or is open: its filter
      if (props.keys?.takePaste(text)) return
      if (props.active) pasteIn(text)
    },
    { isActive: props.listening ?? props.active }
  )

  const onKey = (input: string, key: Key) => {
    if (props.keys?.take(input, key)) return
    const editor = current.current
    if (key.ctrl && input === "c") {
      if (props.running) return props.onInterrupt()
      if (editor.text !== "") return edit(E.emptyEditor)
      const now = Date.now()
      if (now - lastCtrlC.current < EXIT_WINDOW_MS) return props.onExit()
      lastCtrlC.current = now
      return setHint("Press Ctrl+C again to exit (or Ctrl+D)")
    }
    if (key.ctrl && input === "d") return editor.text === "" ? props.onExit() : edit(E.deleteForward(editor))
    if (key.escape) {
      if (props.running) return props.onInterrupt()
      if (props.onRewind === undefined) return
      const now = Date.now()
      if (now - lastEscape.current < EXIT_WINDOW_MS) {
        lastEscape.current = 0
        setHint(undefined)
        return props.onRewind()
      }
      lastEscape.current = now
      return setHint("Press Esc again to rewind to a message you sent (undo back to before it)")
    }
    if (key.ctrl && input === "o") return props.onToggleExpand()
    if (key.return) {
      if (key.meta || key.shift) return edit(E.insert(editor, "\n"))
      const result = E.enter(editor)
      return "send" in result ? submit(result.send) : edit(result.edit)
    }
    if (key.tab) {
      const completed = tab(editor)
      return completed === undefined ? undefined : edit(completed)
    }
    if (key.upArrow) return E.onFirstLine(editor) ? walkHistory(-1) : setEditor(E.vertical(editor, -1))
    if (key.downArrow) return E.onLastLine(editor) ? walkHistory(1) : setEditor(E.vertical(editor, 1))
    if (key.leftArrow) return setEditor(E.left(editor))
    if (key.rightArrow) return setEditor(E.right(editor))
    if (key.home || (key.ctrl && input === "a")) return setEditor(E.home(editor))
    if (key.end || (key.ctrl && input === "e")) return setEditor(E.end(editor))
    if (key.backspace) return edit(E.backspace(editor))
    if (key.delete) return edit(E.deleteForward(editor))
    if (key.ctrl && input === "u") return edit(E.killToStart(editor))
    if (key.ctrl && input === "k") return edit(E.killToEnd(editor))
    if (key.ctrl && input === "w") return edit(E.killWord(editor))
    if (key.ctrl || key.meta || input === "") return
    // typed fast (or by a test), Enter and Tab can arrive inside the text: each acts where it is
    const pieces = input.split(/(\r\n?|\n|\t)/)
    let state = editor
    for (const [i, piece] of pieces.entries()) {
      if (piece === "\t") state = tab(state) ?? state
      else if (piece === "\r" || piece === "\n" || piece === "\r\n") {
        const result = E.enter(state)
        if ("send" in result) {
          submit(result.send)
          state = E.emptyEditor
          // what was sent opens a picker (/sessions): the rest of the burst is typed into it
          const rest = pieces.slice(i + 1).join("")
          if (props.keys?.holding()) return void (rest !== "" && props.keys.take(rest, TEXT_KEY))
        } else state = result.edit
      } else state = E.insert(state, piece)
    }
    edit(state)
  }
  useInput(onKey, { isActive: props.listening ?? props.active })
  // the keys typed after a picker closed, in the same burst as what closed it, come back here
  const latest = useRef(onKey)
  latest.current = onKey
  const latestPaste = useRef(pasteIn)
  latestPaste.current = pasteIn
  useEffect(
    () =>
      props.keys?.fallback(
        (input, key) => latest.current(input, key),
        (text) => latestPaste.current(text)
      ),
    [props.keys]
  )
  // a rewound message comes back to the prompt to be edited and sent again
  // biome-ignore lint/correctness/useExhaustiveDependencies: only a new prefill sets the text
  useEffect(() => {
    // text typed in the meantime is the user's: kept
    if (props.prefill !== undefined && current.current.text === "") edit(E.withText(props.prefill.text))
  }, [props.prefill])
  // keys are read once the effects of useInput and usePaste have run (raw mode on): only then does the prompt say it is ready
  useEffect(() => setListening(true), [])

  const editor = shown
  const found = matches(editor.text, props.commands)
  // the `@path` under the cursor: the entries it can complete to, read again as it is typed
  const at = props.cwd === undefined || found.length > 0 || !props.active ? undefined : mentionAt(editor)
  const typed = at?.typed
  // read when the word changes, not at every frame of a running turn
  const paths = useMemo(() => (typed === undefined || props.cwd === undefined ? [] : mentionMatches(props.cwd, typed)), [typed, props.cwd])
  const unicode = props.style.glyphs.dot === "·"
  const color = (c: string) => (props.style.color ? { color: c } : {})
  // NO_COLOR: no dim either (an SGR code some terminals render as a colour)
  const dim = props.style.color ? { dimColor: true } : {}
  const borderColor = props.style.color ? { borderColor: props.active ? (props.running ? "yellow" : "cyan") : "gray" } : {}
  return (
    <Box flexDirection="column">
      <Box borderStyle={unicode ? "round" : "classic"} {...borderColor} paddingX={1} width={props.width}>
        <Text {...color("cyan")}>{unicode ? "❯ " : "> "}</Text>
        <Box flexDirection="column" flexGrow={1}>
          {editor.text === "" && !props.active ? <Text {...dim}> </Text> : renderLines(editor, props.active)}
        </Box>
      </Box>
      {found.length > 0 ? (
        <Box flexDirection="column" paddingX={2}>
          {found.map((c) => (
            <Text key={c.name} wrap="truncate-end">
              <Text {...color("cyan")}>{`/${c.name}`}</Text>
              {c.args ? <Text {...dim}>{` ${c.args}`}</Text> : null}
              <Text {...dim}>{`  ${c.summary}`}</Text>
            </Text>
          ))}
        </Box>
      ) : paths.length > 0 ? (
        <Box flexDirection="column" paddingX={2}>
          {paths.slice(0, MAX_SHOWN).map((m) => (
            <Text key={m.path} wrap="truncate-end" {...(m.directory ? color("cyan") : {})}>{`@${m.path}`}</Text>
          ))}
          {paths.length > MAX_SHOWN ? <Text {...dim}>{`  … ${paths.length - MAX_SHOWN} more (Tab completes)`}</Text> : null}
        </Box>
      ) : (
        <Text {...dim} wrap="truncate-end">
          {!listening
            ? " "
            : (hint ??
              // a question has the keys (Enter and Esc answer it): only Ctrl+C still reaches the turn
              (props.running && !props.active
                ? "  Ctrl+C interrupts the turn"
                : props.running
                  ? `  Enter queues your message into the running turn ${props.style.glyphs.dot} Esc or Ctrl+C interrupts`
                  : `  Enter send ${props.style.glyphs.dot} Alt+Enter or \\ newline ${props.style.glyphs.dot} Up/Down history ${props.style.glyphs.dot} / commands ${props.style.glyphs.dot} Ctrl+D exit`))}
        </Text>
      )}
    </Box>
  )
}
