import { Context } from "effect"
import type { SessionRun } from "@reins/domain"
import { StoreError } from "./StoreError.ts"

/** Whether two leases are the same claim: one holder under one epoch (a later claim by the same holder is another). */
export const sameClaim = (a: SessionRun, b: SessionRun): boolean => a.holder === b.holder && a.epoch === b.epoch

/**
 * The lease the current fiber writes under (a running turn sets it for everything it runs). Every
 * write to that lease's session checks, in the write's own transaction, that the session's lease is
 * still (holder, epoch) — the fence — and fails with reason "taken-over" otherwise: a process that
 * lost its lease (frozen past its expiry while another took the session over) writes nothing more.
 * Expiry alone does not stop writes: a lapsed lease nobody took writes on.
 */
export const WritingClaim = Context.Reference<SessionRun | undefined>("reins/storage/WritingClaim", {
  defaultValue: () => undefined
})

const where = (run: SessionRun, claim: SessionRun) => `pid ${run.pid}${run.host === claim.host ? "" : ` on ${run.host}`}`

/** The error of a write, or a renewal, by a lease that no longer holds its session; `holder` is the lease that holds it now, if any. */
export const takenOver = (claim: SessionRun, holder: SessionRun | undefined): StoreError =>
  new StoreError({
    reason: "taken-over",
    message:
      holder === undefined || holder.holder === ""
        ? `Session ${claim.sessionID} was taken over by another reins process while this one (pid ${claim.pid}) was stopped or unresponsive; this turn stopped without writing. Follow it with reins sessions show ${claim.sessionID}.`
        : `Session ${claim.sessionID} was taken over by another reins process (${where(holder, claim)}) while this one (pid ${claim.pid}) was stopped or unresponsive; this turn stopped without writing. Follow it with reins sessions show ${claim.sessionID}.`
  })
