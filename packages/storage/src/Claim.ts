import { Context } from "effect"
import type { SessionRun } from "@reins/domain"
import { StoreError } from "./StoreError.ts"

/** Whether two leases are the same claim: one holder under one epoch (a later claim by the same holder is another). */
export const sameClaim = (a: SessionRun, b: SessionRun): boolean => a.holder === b.holder && a.epoch === b.epoch

/**
 * Whether a write under `claim` passes the fence, given the session's stored lease: the same epoch, and the row
 * still `claim`'s holder or released ("") — every claim bumps the epoch, so a released row under the same epoch
 * means nobody claimed since, and the events a turn kept after a transient failure can still be written.
 */
export const fencePasses = (stored: SessionRun, claim: SessionRun): boolean =>
  stored.epoch === claim.epoch && (stored.holder === claim.holder || stored.holder === "")

/**
 * The lease the current fiber writes under (a running turn sets it for everything it runs). Every
 * write to that lease's session checks, in the write's own transaction, that the session's lease is
 * still `claim`'s epoch, held by it or released since (`fencePasses`) — the fence — and fails with reason "taken-over" otherwise: a process that
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

/**
 * A take-over also frees the sub-agents' sessions of the session taken over that the same holder still holds: a
 * session tree is one cluster entity, so that runner lost them with it (dead or frozen). Each freed lease's epoch
 * moves on, so the fence refuses the old holder's writes there too, and no dead runner is named as running them.
 * $1/?1: the session taken over; $2/?2: the holder it was taken from.
 */
export const freeTreeSql = (p: (n: number) => string, no: string) =>
  `WITH RECURSIVE tree(id) AS (SELECT id FROM session WHERE parent_id = ${p(1)} UNION ALL SELECT s.id FROM session s JOIN tree t ON s.parent_id = t.id)
  UPDATE session_run SET holder = '', time_expires = 0, "abort" = ${no}, epoch = epoch + 1 WHERE holder = ${p(2)} AND session_id IN (SELECT id FROM tree)`

// hostnames have no ":" and runner addresses no "/": "runner:HOST:PORT/<process>"
const RUNNER_HOLDER = /^runner:([^/]+)\//

/** The runner (HOST:PORT) a lease's holder names, when a runner of a cluster holds it (`reins serve --runner`). */
export const runnerOfHolder = (holder: string): string | undefined => RUNNER_HOLDER.exec(holder)?.[1]

/**
 * Whether a claim with `takeOver` takes a live lease of `holder`: only a cluster runner's (the claimant owns the
 * session by its shard lock, so that runner lost it); a lease of any other reins process (a `reins run` on the same
 * database) is a turn to queue into.
 */
export const takesOver = (takeOver: boolean | undefined, holder: string): boolean => takeOver === true && runnerOfHolder(holder) !== undefined
