import { Context } from "effect"
import type { SessionRun } from "@reins/domain"
import { StoreError } from "./StoreError.ts"

/** Whether two runs are the same claim: one process (pid on a host) from one start; a later claim by it is another. */
export const sameClaim = (a: SessionRun, b: SessionRun): boolean => a.pid === b.pid && a.host === b.host && a.time.started === b.time.started

/**
 * The claim the current fiber writes under (a running turn sets it for everything it runs). Every
 * write to that claim's session checks, atomically with the write, that the claim still holds the
 * session, and fails with reason "taken-over" otherwise: a process that lost its claim (stopped or
 * hung past the staleness limit while another took the session over) writes nothing more.
 */
export const WritingClaim = Context.Reference<SessionRun | undefined>("reins/storage/WritingClaim", {
  defaultValue: () => undefined
})

/** The error of a write, or a heartbeat, by a claim that no longer holds its session; `holder` is who holds it now. */
export const takenOver = (claim: SessionRun, holder: SessionRun | undefined): StoreError =>
  new StoreError({
    reason: "taken-over",
    message:
      holder === undefined
        ? `Session ${claim.sessionID} was taken over by another reins process while this one (pid ${claim.pid}) was stopped or unresponsive; this turn stopped without writing. Follow it with reins sessions show ${claim.sessionID}.`
        : `Session ${claim.sessionID} was taken over by another reins process (pid ${holder.pid}${holder.host === claim.host ? "" : ` on ${holder.host}`}) while this one (pid ${claim.pid}) was stopped or unresponsive; this turn stopped without writing. Follow it with reins sessions show ${claim.sessionID}.`
  })
