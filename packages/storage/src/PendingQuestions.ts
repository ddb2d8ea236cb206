import type { PermissionAsked } from "@reins/domain"
import { Context, type Effect } from "effect"
import type { StoreError } from "./StoreError.ts"

/** An answer to a permission question, as any process may store it for the question's owner. */
export interface QuestionReply {
  readonly reply: "once" | "always" | "reject"
  readonly message?: string
}

/** A permission question waiting for a reply: the `permission.asked` event, and the reply once some process sent one. */
export interface PendingQuestion {
  readonly id: string
  readonly sessionID: string
  readonly rootSessionID: string
  readonly time: { readonly created: number }
  readonly asked: PermissionAsked
  readonly reply?: QuestionReply
}

/** Which questions `list` returns: all, those of one session, or those of one session tree. */
export interface ListQuestionsOptions {
  readonly sessionID?: string
  readonly rootSessionID?: string
}

/**
 * The permission questions waiting for a reply, stored so any process serving a session can list
 * and answer them. The process that asked (the owner) puts and removes them, and takes the answers
 * other processes stored; it alone settles the question (and runs its timeout).
 */
export class PendingQuestions extends Context.Service<
  PendingQuestions,
  {
    /** Stores a question (asked by this process); replaces one with the same id. */
    put(question: Omit<PendingQuestion, "reply">): Effect.Effect<void, StoreError>
    /** Forgets a question (settled, timed out, or its turn ended). */
    remove(id: string): Effect.Effect<void, StoreError>
    /** The questions waiting, oldest first (an answered one stays until its owner takes the answer). */
    list(options?: ListQuestionsOptions): Effect.Effect<ReadonlyArray<PendingQuestion>, StoreError>
    /** Stores a reply for the owner to take; false when the question is not pending (or was answered already). */
    answer(id: string, reply: QuestionReply): Effect.Effect<boolean, StoreError>
    /** The answered questions of a session, removed in the same transaction (so each answer is taken once). */
    takeAnswers(sessionID: string): Effect.Effect<ReadonlyArray<PendingQuestion>, StoreError>
  }
>()("reins/storage/PendingQuestions") {}
