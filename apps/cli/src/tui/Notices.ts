import { Logger, LogLevel } from "effect"

/** One log message as text: its parts joined (an Error by its message). */
const textOf = (message: unknown): string =>
  (Array.isArray(message) ? message : [message]).map((m) => (typeof m === "string" ? m : m instanceof Error ? m.message : JSON.stringify(m))).join(" ")

/**
 * The interactive session's logger: warnings and errors (an extension that did not load, an MCP
 * server that did not start, a hook that failed) become notices in the transcript, since a line
 * written to the terminal would draw over the screen. Those logged before the screen can show
 * them wait for `attach`; lower levels are dropped.
 */
export const noticeLogger = () => {
  let sink: ((text: string, kind: "info" | "error") => void) | undefined
  const early: Array<[string, "info" | "error"]> = []
  const logger = Logger.make<unknown, void>(({ message, logLevel }) => {
    if (LogLevel.isLessThan(logLevel, "Warn")) return
    const notice: [string, "info" | "error"] = [textOf(message), LogLevel.isGreaterThanOrEqualTo(logLevel, "Error") ? "error" : "info"]
    if (sink) sink(...notice)
    else if (early.length < 100) early.push(notice)
  })
  return {
    loggers: new Set([logger]) as ReadonlySet<Logger.Logger<unknown, unknown>>,
    attach: (to: (text: string, kind: "info" | "error") => void) => {
      sink = to
      for (const notice of early.splice(0)) to(...notice)
    }
  }
}
