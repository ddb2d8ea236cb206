// Whether a launch opens the interactive session, decided from the arguments alone, so that bin.ts can load the
// session's slim entry at once instead of the whole command line (effect/cli and every command). Pure.
import { takeDatabaseFlag } from "./DatabaseFlag.ts"

/** What `reins chat` takes: the chat command's flags, as effect/cli would give them. */
export interface ChatInput {
  readonly model: string | undefined
  readonly variant: string | undefined
  readonly continue: boolean
  readonly session: string | undefined
  readonly yolo: boolean
  /** `--trust`: trust the directory for this run. */
  readonly trust: boolean
  /** `--sandbox MODE`: the OS sandbox for this run's commands. */
  readonly sandbox?: "auto" | "required" | "off"
  /** `--max-cost USD`: the session's budget for this run (a plain amount on the fast path; any other form is effect/cli's to parse). */
  readonly maxCost?: number
}

const VALUE_FLAGS: Record<string, "model" | "variant" | "session" | "sandbox" | "maxCost"> = {
  "-m": "model",
  "--model": "model",
  "--variant": "variant",
  "-s": "session",
  "--session": "session",
  "--sandbox": "sandbox",
  "--max-cost": "maxCost"
}
const SANDBOX_MODES = new Set(["auto", "required", "off"])
/** A `--max-cost` the fast path takes: digits with an optional fraction (effect/cli parses any other number, and refuses the rest). */
const AMOUNT = /^\d+(\.\d+)?$/
const BOOLEAN_FLAGS: Record<string, "continue" | "yolo" | "trust"> = { "-c": "continue", "--continue": "continue", "--yolo": "yolo", "--trust": "trust" }

/**
 * The chat flags of an interactive launch on a terminal: `reins`, `reins chat`, `reins -c`, `reins --session ID`,
 * `reins -m P/M --yolo`, … Anything else — another command, `--help`, an unknown or repeated flag, a value that looks
 * like a flag, no terminal — is `undefined`: effect/cli parses it as before, with its own help and errors.
 */
export const interactiveLaunch = (args: ReadonlyArray<string>, terminal: boolean): ChatInput | undefined => {
  if (!terminal) return undefined
  const rest = args[0] === "chat" ? args.slice(1) : args
  const values: { model?: string; variant?: string; session?: string; sandbox?: string; maxCost?: string } = {}
  const flags = { continue: false, yolo: false, trust: false }
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!
    const eq = arg.startsWith("--") ? arg.indexOf("=") : -1
    const name = eq > 0 ? arg.slice(0, eq) : arg
    const valueKey = VALUE_FLAGS[name]
    const booleanKey = BOOLEAN_FLAGS[name]
    if (valueKey !== undefined) {
      const value = eq > 0 ? arg.slice(eq + 1) : rest[++i]
      if (value === undefined || value === "" || value.startsWith("-") || values[valueKey] !== undefined) return undefined
      // a mode effect/cli would refuse is left to it (its message lists the choices)
      if (valueKey === "sandbox" && !SANDBOX_MODES.has(value)) return undefined
      if (valueKey === "maxCost" && !AMOUNT.test(value)) return undefined
      values[valueKey] = value
    } else if (booleanKey !== undefined && eq < 0) {
      if (flags[booleanKey]) return undefined
      flags[booleanKey] = true
    } else return undefined
  }
  return {
    model: values.model,
    variant: values.variant,
    continue: flags.continue,
    session: values.session,
    yolo: flags.yolo,
    trust: flags.trust,
    ...(values.sandbox !== undefined ? { sandbox: values.sandbox as "auto" | "required" | "off" } : {}),
    // a cap of 0 is refused by openChat as it is by the chat command (withMaxCost), with the same line
    ...(values.maxCost !== undefined ? { maxCost: Number(values.maxCost) } : {})
  }
}

/**
 * An interactive launch with `--database URL` anywhere on its line (main takes it off the same way, DatabaseFlag.ts):
 * the chat's flags and the URL the session's store opens. A `--database` without a URL is undefined (main refuses it).
 */
export const interactiveLaunchWithDatabase = (
  args: ReadonlyArray<string>,
  terminal: boolean
): { readonly chat: ChatInput; readonly database?: string } | undefined => {
  const line = takeDatabaseFlag(args)
  if ("problem" in line) return undefined
  const chat = interactiveLaunch(line.args, terminal)
  if (chat === undefined) return undefined
  return line.url === undefined ? { chat } : { chat, database: line.url }
}
