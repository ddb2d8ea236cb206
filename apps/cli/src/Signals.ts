import { Runtime } from "effect"

/** The signals that stop reins the way Ctrl+C does; SIGHUP: its terminal was closed. */
const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const

/**
 * Runs the CLI's main effect like `NodeRuntime.runMain`, but SIGHUP interrupts it too (by default it
 * would end reins at once): a running turn then stops its commands' process groups and marks its
 * parts interrupted before reins exits.
 *
 * When the terminal is closed, a write to it can fail (EIO) before the SIGHUP is handled, and a pipe
 * whose reader went away fails with EPIPE. Such an error on stdout or stderr is never left unhandled
 * (it would end reins before its cleanup): it stops the command like SIGHUP, and later write errors
 * are ignored so that the cleanup still runs.
 */
export const runMain = Runtime.makeRunMain(({ fiber, teardown }) => {
  let signalled = false
  const stop = () => {
    if (signalled) return
    signalled = true
    fiber.interruptUnsafe(fiber.id)
  }
  const onSignal = (_signal: NodeJS.Signals) => stop()
  const onWriteError = () => stop()
  fiber.addObserver((exit) => {
    for (const signal of STOP_SIGNALS) process.removeListener(signal, onSignal)
    teardown(exit, (code) => {
      if (signalled || code !== 0) process.exit(code)
    })
  })
  for (const signal of STOP_SIGNALS) process.on(signal, onSignal)
  process.stdout.on("error", onWriteError)
  process.stderr.on("error", onWriteError)
})
