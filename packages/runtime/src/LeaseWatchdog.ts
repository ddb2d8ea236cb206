import { ProcessGroup } from "@reins/tool"
import { Effect, Layer, Schedule } from "effect"
import { type ChildProcess, spawn } from "node:child_process"

// The watchdog itself: a bash loop (bash 3.2 too: whole seconds, no associative arrays) that keeps the list of the
// runner's command groups (+PGID, -PGID) and kills them all when no line came for $1 seconds (the runner is frozen:
// SIGSTOP, a stalled machine) or its input ends (the runner died), saying so on the runner's stderr. Frozen, the
// runner may wake: the watchdog goes on. "quit" ends it quietly (the runner stops itself).
const SCRIPT = `
groups=" "
while :; do
  if IFS= read -r -t "$1" line; then
    case "$line" in
      +*) groups="$groups\${line#+} " ;;
      -*) groups="\${groups/ \${line#-} / }" ;;
      quit) exit 0 ;;
    esac
  else
    status=$?
    if [ "$groups" != " " ]; then
      for g in $groups; do kill -KILL -- "-$g" 2>/dev/null; done
      if [ "$status" -gt 128 ]; then why="did not beat for $1 s"; else why="stopped"; fi
      echo "reins: the lease watchdog killed the commands of this runner (process groups$groups) because the runner $why: its sessions move to another runner." >&2
    fi
    groups=" "
    [ "$status" -gt 128 ] || exit 0
  fi
done
`

/**
 * A cluster runner's lease watchdog (issue 28): a small bash process beside the runner, in a process group of its own
 * (so a stop of the server's terminal group does not stop it too), that kills the process groups of the runner's
 * commands when the runner has not beaten for `afterMs` (in whole seconds, at least 1) or has died, and says so. `afterMs` is under the runner's shard-lock expiry,
 * so a frozen runner's commands are gone before its sessions move and the next owner resumes them: a command of a
 * runner that lost its session never runs beside the new owner's (on a shared volume, on another machine). The
 * runner beats every quarter of `afterMs` (at most every second). A watchdog that cannot start or dies is logged.
 */
export const leaseWatchdogLayer = (afterMs: number) =>
  Layer.effectDiscard(
    Effect.gen(function* () {
      const beatMs = Math.min(1_000, Math.max(50, Math.floor(afterMs / 4)))
      let lost = false
      const context = yield* Effect.context<never>()
      const warn = (why: string) =>
        Effect.runForkWith(context)(
          Effect.logWarning(
            `The lease watchdog stopped (${why}): the commands of this runner are no longer stopped if it freezes before its sessions move. Restart reins serve to get it back.`
          )
        )
      const child = yield* Effect.acquireRelease(
        Effect.sync(() => {
          const started: ChildProcess = spawn("bash", ["-c", SCRIPT, "reins-lease-watchdog", String(Math.max(1, Math.floor(afterMs / 1000)))], {
            // its one line, when it kills, goes to the runner's stderr
            stdio: ["pipe", "ignore", "inherit"],
            detached: true
          })
          started.on("error", (error) => {
            if (!lost) warn(error.message)
            lost = true
          })
          started.stdin?.on("error", () => {
            lost = true
          })
          started.on("exit", (code, signal) => {
            if (!lost) warn(`it exited: ${signal ?? code}`)
            lost = true
          })
          // the runner does not wait for its watchdog to exit
          started.unref()
          return started
        }),
        (started) =>
          Effect.sync(() => {
            lost = true
            if (started.stdin?.writable) started.stdin.end("quit\n")
          })
      )
      const say = (line: string) => {
        if (!lost && child.stdin?.writable) child.stdin.write(`${line}\n`)
      }
      const unwatch = ProcessGroup.watchGroups({ added: (pgid) => say(`+${pgid}`), removed: (pgid) => say(`-${pgid}`) })
      yield* Effect.addFinalizer(() => Effect.sync(unwatch))
      yield* Effect.forkScoped(
        Effect.repeat(
          Effect.sync(() => say("beat")),
          Schedule.spaced(beatMs)
        )
      )
    })
  )
