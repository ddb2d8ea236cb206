// The interactive session: the transcript, the permission question or a picker, the status line, the prompt, the footer.
import { Box, useApp, useInput, useWindowSize } from "ink"
import { useEffect, useMemo, useRef, useState } from "react"
import type { Config, ModelRef, SessionEvent } from "@reins/domain"
import type { JobView } from "@reins/tool"
import type { OpenQuestion, PermissionBridge } from "./Bridge.ts"
import { osc52 } from "./Clipboard.ts"
import type { Controller } from "./Controller.ts"
import { gitBranch } from "./Git.ts"
import { jobsText } from "./JobList.ts"
import { remember, saveHistory } from "./History.ts"
import { contextWindow, modelChoices, modelLabel, modelName } from "./Models.ts"
import { makeKeyRoute } from "./KeyRoute.ts"
import { Picker, type PickerItem } from "./Picker.tsx"
import { PromptInput } from "./PromptInput.tsx"
import { STATUS_TICK_MS, StatusLine } from "./StatusLine.tsx"
import { type ShellRun, runShell, runsNote, shellCommand, shownRun } from "./Shell.ts"
import { HELP, parseSlash } from "./Slash.ts"
import {
  Footer,
  PermissionQuestion,
  ThemeContext,
  Transcript,
  addNotice,
  fromHistory,
  initialTranscript,
  lastAnswer,
  reduceTranscript,
  type Theme,
  type TranscriptState
} from "./view/index.ts"

/** How often the live part of the screen is redrawn while events stream in (ms). */
const FRAME_MS = 50
/** How long a resize waits for the next before the transcript is printed again at the new width (ms). */
const RESIZE_DEBOUNCE_MS = 150

export interface AppProps {
  readonly controller: Controller
  readonly bridge: PermissionBridge
  readonly initial: TranscriptState
  readonly cwd: string
  readonly config: Config
  /** The providers with a key (reins.json, the environment, the key store): /model lists their catalogue. */
  readonly keyed: ReadonlySet<string>
  readonly history: ReadonlyArray<string>
  readonly historyFile: string
  readonly theme: Theme
  /** The user's home, shown as ~ in the footer. */
  readonly home: string | undefined
  /** Checks a model typed after /model, with a variant of its options: its error as one line, or the model when it can be used. */
  readonly checkModel: (text: string, variant?: string) => Promise<{ readonly model: ModelRef } | { readonly error: string }>
  /** Clears the terminal (screen and scrollback) so the transcript can be printed again. */
  readonly clearScreen: () => void
  /** Writes to the terminal outside the frame (OSC 52). */
  readonly writeRaw: (s: string) => void
  /** Called once the app listens to the controller (its notices show from then on). */
  readonly onListening?: () => void
  /** The project's and the user's commands (`/name`), found after the first frame, with how one's prompt is made. */
  readonly loadCommands?: () => Promise<LoadedCommands>
}

/** Commands as the app runs them: their names and summaries, the prompt of one run with arguments, what was skipped. */
export interface LoadedCommands {
  readonly commands: ReadonlyArray<{ readonly name: string; readonly description?: string }>
  readonly prompt: (name: string, args: string) => string | undefined
  readonly skipped: ReadonlyArray<{ readonly path: string; readonly error: string }>
}

type PickerOf =
  | { readonly kind: "sessions"; readonly items: ReadonlyArray<PickerItem<string>> }
  | { readonly kind: "model"; readonly items: ReadonlyArray<PickerItem<ModelRef>> }
  | { readonly kind: "rewind"; readonly items: ReadonlyArray<PickerItem<{ readonly id: string; readonly text: string }>> }
/** A picker open on screen; each opening is a picker of its own (`id`: it mounts, and takes the keys held for it). */
type Picking = PickerOf & { readonly id: number }

const when = (ms: number) => {
  const d = new Date(ms)
  const pad = (n: number) => String(n).padStart(2, "0")
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`
}

export const App = (props: AppProps) => {
  const { controller, theme } = props
  const style = theme.style
  const app = useApp()
  const { columns } = useWindowSize()
  const [transcript, setTranscript] = useState<TranscriptState>(props.initial)
  const [running, setRunning] = useState(false)
  // `!command`: the one running (Esc stops it), and the finished ones the next message carries to the model
  const [shellRunning, setShellRunning] = useState(false)
  const shellStop = useRef<(() => void) | undefined>(undefined)
  const shellRuns = useRef<Array<ShellRun>>([])
  const [question, setQuestion] = useState<OpenQuestion | undefined>(undefined)
  const [picking, setPicking] = useState<Picking | undefined>(undefined)
  // the keys typed while a picker opens are held for it (KeyRoute)
  const [keys] = useState(makeKeyRoute)
  const opened = useRef(0)
  /** Closes `shown` if it is still the picker on screen (a pick that finishes late never closes a newer one). */
  const close = (shown: Picking) => setPicking((now) => (now?.id === shown.id ? undefined : now))
  const [history, setHistory] = useState(props.history)
  const [model, setModel] = useState<ModelRef>(controller.model)
  const [branch, setBranch] = useState<string | undefined>(undefined)
  const [expandAll, setExpandAll] = useState(false)
  const [prefill, setPrefill] = useState<{ readonly text: string } | undefined>(undefined)
  const [custom, setCustom] = useState<LoadedCommands | undefined>(undefined)
  // a new key re-mounts the transcript, which prints it whole again (after a resize, a resume, Ctrl+O)
  const [printKey, setPrintKey] = useState(0)
  const [now, setNow] = useState(Date.now())
  const [turnStart, setTurnStart] = useState(0)
  const [jobs, setJobs] = useState<ReadonlyArray<JobView>>([])
  const pending = useRef<Array<SessionEvent>>([])
  const flushTimer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined)

  const reprint = () => {
    props.clearScreen()
    setPrintKey((k) => k + 1)
  }
  const notice = (text: string, tone: "info" | "error" = "info") => setTranscript((s) => addNotice(s, text, tone))

  // the controller's events, folded at most once a frame
  // biome-ignore lint/correctness/useExhaustiveDependencies: once, at mount: the controller and the bridge live as long as the app
  useEffect(() => {
    const flush = () => {
      flushTimer.current = undefined
      const batch = pending.current
      pending.current = []
      if (batch.length > 0) setTranscript((s) => batch.reduce(reduceTranscript, s))
    }
    Object.assign(controller.on, {
      events: (events: ReadonlyArray<SessionEvent>) => {
        pending.current.push(...events)
        flushTimer.current ??= setTimeout(flush, FRAME_MS)
      },
      running: (on: boolean) => {
        if (!on) flush()
        setRunning(on)
        if (on) setTurnStart(Date.now())
      },
      notice: (text: string, kind: "info" | "error") => notice(text, kind)
    })
    props.onListening?.()
    return props.bridge.subscribe(setQuestion)
  }, [])

  // the background jobs the agent started, for the footer and /jobs
  // biome-ignore lint/correctness/useExhaustiveDependencies: once, at mount: the controller lives as long as the app
  useEffect(() => controller.watchJobs(setJobs), [])

  // the commands are read once, after the first frame; a file that cannot be used is said
  // biome-ignore lint/correctness/useExhaustiveDependencies: once, at mount
  useEffect(() => {
    void props.loadCommands?.().then((loaded) => {
      setCustom(loaded)
      for (const s of loaded.skipped) notice(`Command not loaded: ${s.path}: ${s.error}`, "error")
    })
  }, [])

  // biome-ignore lint/correctness/useExhaustiveDependencies: the branch is read once, at mount
  useEffect(() => {
    void gitBranch(props.cwd).then(setBranch)
  }, [])

  // the clock of the running tools' spinners and elapsed times ticks only while a tool runs (the status line has its own)
  const toolRunning = transcript.live.some((i) => i.kind === "tool" && (i.part.state.status === "pending" || i.part.state.status === "running"))
  useEffect(() => {
    if (!toolRunning) return
    setNow(Date.now())
    const timer = setInterval(() => setNow(Date.now()), STATUS_TICK_MS)
    return () => clearInterval(timer)
  }, [toolRunning])

  // a resize re-flows: the transcript printed again at the new width, once the resizing stops
  const firstWidth = useRef(columns)
  // biome-ignore lint/correctness/useExhaustiveDependencies: only a change of width re-flows (reprint is a new function each render)
  useEffect(() => {
    if (columns === firstWidth.current) return
    const timer = setTimeout(() => {
      firstWidth.current = columns
      reprint()
    }, RESIZE_DEBOUNCE_MS)
    return () => clearTimeout(timer)
  }, [columns])

  // Ctrl+C while a question or a picker has the keys still interrupts the turn
  useInput(
    (input, key) => {
      if (key.ctrl && input === "c" && controller.running) void controller.interrupt()
    },
    { isActive: question !== undefined }
  )

  const exit = () => app.exit()

  /** A picker opened once `load` has its items (undefined: none opened); the keys typed meanwhile are held for it. */
  const openPicker = async (load: () => Promise<PickerOf | undefined>) => {
    const hold = keys.hold()
    let next: PickerOf | undefined
    try {
      next = await load()
    } finally {
      // none to open, or Ctrl+C gave up on it: the keys typed for it go (Esc still stops a turn that started meanwhile)
      if (next === undefined || keys.cancelled(hold)) keys.drop(hold, controller.running || shellStop.current !== undefined)
    }
    if (next !== undefined && !keys.cancelled(hold)) setPicking({ ...next, id: ++opened.current })
  }

  const openSessions = () =>
    openPicker(async () => {
      const sessions = await controller.sessions()
      if (sessions.length === 0) return void notice("No stored session in this project yet.")
      return {
        kind: "sessions",
        items: sessions.map((s) => ({ label: s.title, detail: `${when(s.time.updated)}  ${s.id}`, value: s.id, current: s.id === controller.sessionID }))
      }
    })

  // Esc Esc: the messages you sent, newest first; the one picked is undone (files and conversation) and put back in the prompt
  const openRewind = async () => {
    if (controller.running) return
    await openPicker(async () => {
      const points = await controller.rewindPoints()
      // a turn may have started while the points were read: Esc then interrupts it, no picker opens over it
      if (controller.running || points === undefined) return undefined
      if (points.length === 0) return void notice("Nothing to rewind: no message of yours in this session is left to undo.")
      return {
        kind: "rewind",
        items: points.map((p) => ({ label: p.text.split("\n")[0] || "(no text)", detail: `${when(p.time)}  ${p.id}`, value: { id: p.id, text: p.text } }))
      }
    })
  }

  /**
   * What a pick does (given by its picker, which closed itself as it picked): the keys typed after the pick are held
   * until it is done (a message must go to the session resumed, not the one before it), then given to the prompt; how
   * many were.
   */
  const afterPick = async (action: () => Promise<void>) => {
    const hold = keys.hold()
    try {
      await action()
    } catch (error) {
      keys.release(hold)
      throw error
    }
    return keys.release(hold)
  }

  const rewind = async (point: { readonly id: string; readonly text: string }) => {
    let undone = false
    const typed = await afterPick(async () => {
      const done = await controller.undo("undo", false, point.id)
      if (!done) return
      undone = true
      setTranscript(fromHistory(done.messages))
      reprint()
      notice(`${done.said} Your message is back in the prompt to edit; /redo takes the rewind back.`)
    })
    // typed on since the pick: the prompt is theirs, the message rewound is not put over it
    if (undone && typed === 0) setPrefill({ text: point.text })
  }

  const resume = (id: string) =>
    afterPick(async () => {
      const messages = await controller.resume(id)
      if (!messages) return
      setTranscript(fromHistory(messages))
      reprint()
    })

  const switchModel = (ref: ModelRef, note = "") => {
    controller.setModel(ref)
    setModel(ref)
    notice(`Model: ${modelLabel(ref)} for the next turns${note}`)
  }

  // from the picker: the current variant is kept when the model picked has it too
  const pickModel = (ref: ModelRef) =>
    afterPick(async () => {
      const variant = controller.model.variant
      if (variant === undefined) return switchModel(ref)
      const checked = await props.checkModel(modelName(ref), variant)
      return "error" in checked ? switchModel(ref, ` (without the variant ${variant}: ${checked.error})`) : switchModel(checked.model)
    })

  const slash = async (name: string, args: ReadonlyArray<string>) => {
    switch (name) {
      case "exit":
      case "quit":
        return exit()
      case "help":
        return notice(HELP)
      case "new":
        if (controller.running) return notice("A turn is running: Esc interrupts it, then /new.", "error")
        controller.newSession()
        setTranscript(initialTranscript)
        reprint()
        return notice("New session: it is stored with your first message.")
      case "sessions":
        if (controller.running) return notice("A turn is running: Esc interrupts it, then /sessions.", "error")
        return openSessions()
      case "model": {
        if (args[0]) {
          const checked = await props.checkModel(args[0], args[1])
          return "error" in checked ? notice(checked.error, "error") : switchModel(checked.model)
        }
        const current = modelName(controller.model)
        return openPicker(async () => ({
          kind: "model",
          items: modelChoices(props.config, controller.model, props.keyed).map((c) => ({
            label: modelName(c.ref),
            detail: `${Math.round(c.context / 1000)}k context`,
            value: c.ref,
            current: modelName(c.ref) === current
          }))
        }))
      }
      case "compact":
        if (controller.running) return notice("A turn is running: /compact once it is done.", "error")
        return controller.compact()
      case "undo":
      case "redo": {
        if (controller.running) return notice(`A turn is running: Esc interrupts it, then /${name}.`, "error")
        const done = await controller.undo(name, args.includes("--force"))
        if (!done) return
        setTranscript(fromHistory(done.messages))
        reprint()
        return notice(done.said)
      }
      case "export":
        return controller.exportSession(args)
      case "copy": {
        const answer = lastAnswer(transcript)
        if (answer === undefined) return notice("No answer to copy yet.")
        props.writeRaw(osc52(answer))
        return notice(`Copied the last answer (${answer.length} characters) to the clipboard with OSC 52 (your terminal must allow clipboard writes).`)
      }
      case "jobs":
        if (args[0] === "kill" && args[1]) return controller.killJob(args[1])
        // read now, not from the last start or end: the output so far has grown since
        return void controller.listJobs().then((listed) => notice(jobsText(listed)))
      default: {
        // a command of the project's or the user's: its prompt, with the words after it as its arguments
        const prompt = custom?.prompt(name, args.join(" "))
        if (prompt !== undefined) return void controller.send(prompt)
        return notice(`Unknown command /${name}: /help lists them.`, "error")
      }
    }
  }

  const submit = (text: string) => {
    const next = remember(history, text)
    if (next !== history) {
      setHistory(next)
      void saveHistory(props.historyFile, next).catch(() => undefined)
    }
    const command = parseSlash(text)
    if (command) return void slash(command.name, command.args)
    const shell = shellCommand(text)
    if (shell !== undefined) return shellRun(shell)
    const runs = shellRuns.current.splice(0)
    void controller.send(runs.length > 0 ? `${runsNote(runs)}\n\n${text}` : text)
  }

  const shellRun = (command: string) => {
    if (shellStop.current !== undefined) return notice("A ! command is still running: Esc stops it.", "error")
    const run = runShell(command, props.cwd, process.env)
    shellStop.current = run.stop
    setShellRunning(true)
    notice(`$ ${command} (running; Esc stops it)`)
    void run.done.then((done) => {
      shellStop.current = undefined
      setShellRunning(false)
      shellRuns.current.push(done)
      notice(shownRun(done), done.code === 0 ? "info" : "error")
    })
  }

  const expanded = useMemo(
    () =>
      new Set(
        expandAll
          ? [...transcript.items, ...transcript.live].flatMap((i) => (i.kind === "tool" || i.kind === "reasoning" || i.kind === "summary" ? [i.id] : []))
          : []
      ),
    [expandAll, transcript]
  )
  const status =
    transcript.status === "idle" ? "working" : transcript.status === "retry" ? `retrying (${transcript.retry?.message ?? "provider error"})` : transcript.status
  const keysFree = question === undefined && picking === undefined

  /** The picker of `shown` (mounted anew for each opening): it closes as it picks, then `picked` does the pick. */
  const pickerOf = <A,>(shown: Picking, title: string, items: ReadonlyArray<PickerItem<A>>, picked: (value: A) => void) => (
    <Picker
      key={shown.id}
      title={title}
      items={items}
      onPick={(value) => {
        close(shown)
        picked(value)
      }}
      onCancel={() => close(shown)}
      keys={keys}
    />
  )

  return (
    <ThemeContext value={theme}>
      <Box flexDirection="column">
        <Transcript key={printKey} state={transcript} expanded={expanded} width={columns} now={now} cwd={props.cwd} />
        {question ? <PermissionQuestion request={question.request} onReply={(r) => question.answer(r)} cwd={props.cwd} /> : null}
        {picking?.kind === "sessions" ? pickerOf(picking, "Resume a session (newest first)", picking.items, (id) => void resume(id)) : null}
        {picking?.kind === "rewind"
          ? pickerOf(
              picking,
              "Rewind: undo back to before a message you sent (its files and the conversation after it)",
              picking.items,
              (point) => void rewind(point)
            )
          : null}
        {picking?.kind === "model" ? pickerOf(picking, "Model for the next turns", picking.items, (ref) => void pickModel(ref)) : null}
        {running ? <StatusLine style={style} label={status} since={turnStart} /> : null}
        <PromptInput
          cwd={props.cwd}
          active={keysFree}
          keys={keys}
          listening={question === undefined}
          running={running || shellRunning}
          history={history}
          onSubmit={submit}
          onInterrupt={() => (shellStop.current !== undefined ? shellStop.current() : void controller.interrupt())}
          onRewind={() => void openRewind()}
          commands={(custom?.commands ?? []).map((c) => ({ name: c.name, args: "[arguments]", summary: c.description ?? "a command of yours" }))}
          {...(prefill ? { prefill } : {})}
          onExit={exit}
          onToggleExpand={() => {
            setExpandAll((e) => !e)
            reprint()
          }}
          width={columns}
          style={style}
        />
        <Footer
          info={{
            model: modelLabel(model),
            contextWindow: contextWindow(props.config, model),
            usage: transcript.usage,
            cwd: props.cwd,
            ...(branch ? { branch } : {}),
            ...(props.home ? { home: props.home } : {}),
            ...(props.config.budget?.session !== undefined ? { budget: props.config.budget.session } : {}),
            jobs: jobs.filter((j) => j.status.state === "running").length
          }}
        />
      </Box>
    </ThemeContext>
  )
}
