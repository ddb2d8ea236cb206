import { Runtime } from "effect"

/** The signals that stop reins the way Ctrl+C does; SIGHUP: its terminal was closed. */
const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const

/**
 * Runs the CLI's main effect like `NodeRuntime.runMain`, but SIGHUP interrupts it too (by default it
 * would end reins at once): a running turn then stops its commands' process groups and marks its
 * parts interrupted before reins exits. After SIGHUP the terminal is gone, and writing to it fails
 * (EIO): those errors are ignored so that the cleanup still runs.
 */
export const runMain = Runtime.makeRunMain(({ fiber, teardown }) => {
  let signalled = false
  const onSignal = (signal: NodeJS.Signals) => {
    if (signal === "SIGHUP") {
      process.stdout.on("error", () => {})
      process.stderr.on("error", () => {})
    }
    signalled = true
    fiber.interruptUnsafe(fiber.id)
  }
  fiber.addObserver((exit) => {
    for (const signal of STOP_SIGNALS) process.removeListener(signal, onSignal)
    teardown(exit, (code) => {
      if (signalled || code !== 0) process.exit(code)
    })
  })
  for (const signal of STOP_SIGNALS) process.on(signal, onSignal)
})
