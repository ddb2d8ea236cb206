import { Context, Deferred, Effect, Layer, Schema, Semaphore } from "effect"
import { Bus, type ChangePreview, Ids, type PermissionAsked } from "@reins/domain"
import { defaultRules, evaluate, evaluateOpaque, isDisabled, type Decision, type Mode, type Rule } from "./Rules.ts"
import { match } from "./Wildcard.ts"

/** What a tool asks to do: a permission and the subjects it touches (paths, commands). */
export interface AskRequest {
  readonly sessionID: string
  readonly permission: string
  /** Every pattern must be allowed (e.g. a command as written and its real name under `sudo`). */
  readonly patterns: ReadonlyArray<string>
  /** Patterns that "always" would allow from now on (e.g. `git status *`). */
  readonly always: ReadonlyArray<string>
  readonly callID?: string
  readonly title?: string
  /** Why the subject cannot be judged by its text: never allowed by a broad rule. */
  readonly opaque?: string
  /** Where it runs (bash: the directory after any `cd`). */
  readonly directory?: string
  /** The whole tool input, shown to a person (the full bash command). */
  readonly command?: string
  /** What an edit would change, per file: shown with the question, so a person sees what they allow. */
  readonly diffs?: ReadonlyArray<ChangePreview>
}

export type Reply = "once" | "always" | "reject"

/** A reply to a question; a reject may carry a message that goes back to the model. */
export interface Answer {
  readonly reply: Reply
  readonly message?: string
}

/** A question waiting for a reply. */
export interface Pending extends AskRequest {
  readonly id: string
  /** The rule that made this a question; undefined when no rule matched. */
  readonly rule?: Rule
}

/** A question shown to a person; the CLI provides one on a TTY. */
export interface Prompter {
  ask(request: Pending): Effect.Effect<Answer>
}

/** Where "always" grants live beyond the session: the runtime wires a database-backed one. */
export interface GrantStore {
  load(project: string): Effect.Effect<ReadonlyArray<Rule>>
  save(project: string, rules: ReadonlyArray<Rule>): Effect.Effect<void>
}

/** Rules in force, what "ask" becomes without a person, and an optional interactive prompter. */
export interface PermissionSettings {
  readonly rules: ReadonlyArray<Rule>
  /**
   * Rules that hold for one session only, after `rules` and before "always" grants (the runtime
   * lets a session read its own spill folder, and no other session's).
   */
  readonly sessionRules?: (sessionID: string) => ReadonlyArray<Rule>
  /**
   * The agent a session runs: its rules (after `rules`; its allows and denies again after every
   * grant, so no "always" answer lifts its denies), and the session it was started from, whose
   * grants it inherits.
   */
  readonly agentOf?: (sessionID: string) => { readonly rules: ReadonlyArray<Rule>; readonly parent?: string } | undefined
  readonly nonInteractive: "allow" | "deny"
  readonly prompter?: Prompter
  readonly mode?: Mode
  /**
   * How long a question waits for a reply before the non-interactive policy decides, in ms.
   * Default: forever with a prompter, at once without one.
   */
  readonly timeoutMs?: number
  /** `project` keeps "always" grants in `grants` for `project`; default: the session only. */
  readonly persist?: "session" | "project"
  readonly project?: string
  /**
   * Rules that can only tighten (an untrusted project's asks and denies): a request they match is
   * asked or denied whatever the other rules say; one they do not match is left to the others.
   */
  readonly restrict?: ReadonlyArray<Rule>
  /**
   * Paths whose editing could make reins or git run code or widen the agent's powers (reins's config,
   * `.reins/`, git hooks and config, AGENTS.md): an `edit` of one always asks, whatever the rules allow.
   */
  readonly protect?: ReadonlyArray<Protected>
  /** `--yolo`: every rule allows; a protected path is then denied, not asked (nobody is there to ask). */
  readonly yolo?: boolean
}

/** A protected path pattern and why it is protected, for the question and the model. */
export interface Protected {
  readonly pattern: string
  readonly why: string
}

/**
 * Where questions wait so that any process serving the session can list and answer them (the
 * runtime wires a database-backed one). The asking process puts and removes its questions and takes
 * the answers others stored; it alone settles them (and runs their timeouts).
 */
export interface QuestionStore {
  put(asked: PermissionAsked): Effect.Effect<void>
  remove(id: string): Effect.Effect<void>
  /** The questions waiting (of a session and its sub-agents' sessions when `sessionID` is given), oldest first. */
  list(sessionID?: string): Effect.Effect<ReadonlyArray<PermissionAsked>>
  /** Stores an answer for the asking process; false when the question is not waiting. */
  answer(id: string, answer: Answer): Effect.Effect<boolean>
  /** The answers stored for a session's questions, each taken once. */
  takeAnswers(sessionID: string): Effect.Effect<ReadonlyArray<{ readonly id: string; readonly answer: Answer }>>
}

/** How often a process with questions waiting looks for answers another process stored. */
const ANSWER_POLL = "200 millis"

/** The store of waiting questions; none by default (questions live in this process only). */
export const PermissionQuestions = Context.Reference<QuestionStore | undefined>("reins/permission/Questions", {
  defaultValue: () => undefined
})

export const PermissionSettings = Context.Reference<PermissionSettings>("reins/permission/Settings", {
  defaultValue: () => ({ rules: defaultRules, nonInteractive: "deny" })
})

/** The store for project grants (`permission_persist: "project"`); none by default. */
export const PermissionGrants = Context.Reference<GrantStore | undefined>("reins/permission/Grants", {
  defaultValue: () => undefined
})

/** A tool call that may not run; the message is written for the model. */
export class PermissionError extends Schema.TaggedError<PermissionError>()("PermissionError", {
  reason: Schema.Literals(["denied", "rejected"]),
  permission: Schema.String,
  pattern: Schema.String,
  message: Schema.String
}) {}

/** What the rules say about a whole request: allowed, denied on one pattern, or a question (`why`: a protected path). */
export type Check =
  | { readonly action: "allow"; readonly rule?: Rule }
  | { readonly action: "deny"; readonly pattern: string; readonly rule?: Rule; readonly why?: string }
  | { readonly action: "ask"; readonly pattern: string; readonly rule?: Rule; readonly why?: string }

/** Evaluates every pattern of a request: any deny denies, else any ask asks. */
export const check = (rules: ReadonlyArray<Rule>, request: Pick<AskRequest, "permission" | "patterns" | "opaque">, mode: Mode = "last-match"): Check => {
  let ask: Check | undefined
  let allow: Rule | undefined
  const judge = request.opaque ? evaluateOpaque : evaluate
  for (const pattern of request.patterns) {
    const decision: Decision = judge(rules, request.permission, pattern, mode)
    if (decision.action === "deny") return { action: "deny", pattern, ...(decision.rule ? { rule: decision.rule } : {}) }
    if (decision.action === "ask") ask ??= { action: "ask", pattern, ...(decision.rule ? { rule: decision.rule } : {}) }
    else allow ??= decision.rule
  }
  return ask ?? { action: "allow", ...(allow ? { rule: allow } : {}) }
}

/** Only the rules that match say anything: a request none of them matches is allowed by this layer (it only tightens). */
export const checkLimit = (rules: ReadonlyArray<Rule>, request: Pick<AskRequest, "permission" | "patterns">, mode: Mode = "last-match"): Check => {
  let ask: Check | undefined
  for (const pattern of request.patterns) {
    const decision = evaluate(rules, request.permission, pattern, mode)
    if (decision.rule === undefined) continue
    if (decision.action === "deny") return { action: "deny", pattern, rule: decision.rule }
    if (decision.action === "ask") ask ??= { action: "ask", pattern, rule: decision.rule }
  }
  return ask ?? { action: "allow" }
}

/** The strictest of several checks: any deny, else the first ask, else allow (the first's rule). */
export const strictest = (checks: ReadonlyArray<Check>): Check =>
  checks.find((c) => c.action === "deny") ?? checks.find((c) => c.action === "ask") ?? checks[0] ?? { action: "allow" }

const GLOB = /[*?[{]/
const hasGlob = (pattern: string) => GLOB.test(pattern)

/** `a{b,c}d` → `abd`, `acd` (one level of braces at a time, at most 64 forms). */
const braces = (pattern: string): Array<string> => {
  const m = /\{([^{}]*,[^{}]*)\}/.exec(pattern)
  if (!m) return [pattern]
  return m[1]!
    .split(",")
    .flatMap((alt) => braces(pattern.slice(0, m.index) + alt + pattern.slice(m.index + m[0].length)))
    .slice(0, 64)
}

/**
 * The paths a written glob (`.git/hook?/pre-commit`, `.git/{hooks,x}/*`) names: the shell expands it
 * against the files there, the rules see it literally. `**` or a glob from the root counts as reaching
 * everything below its literal directory.
 */
const globReaches = (glob: string, protectedPattern: string) =>
  braces(glob).some((form) => {
    if (!hasGlob(form)) return match(form, protectedPattern)
    const literal = form.slice(0, form.search(GLOB))
    const base = literal.slice(0, literal.lastIndexOf("/") + 1)
    if (base === "" || base === "/" || form.includes("**")) {
      const wild = protectedPattern.search(GLOB)
      return (wild === -1 ? protectedPattern : protectedPattern.slice(0, wild)).startsWith(base || "/")
    }
    let seen = 0
    try {
      for (const found of new Bun.Glob(form.slice(base.length)).scanSync({ cwd: base, absolute: true, dot: true, onlyFiles: false, followSymlinks: false })) {
        if (match(found, protectedPattern)) return true
        if (++seen > 1000) return true
      }
    } catch {
      // a directory that is not there: the shell leaves the word as it is
    }
    return false
  })

/** An `edit` of a protected path asks (under --yolo: is denied), whatever the rules say. */
export const checkProtected = (protect: ReadonlyArray<Protected>, request: Pick<AskRequest, "permission" | "patterns">, yolo: boolean): Check => {
  if (request.permission !== "edit") return { action: "allow" }
  for (const pattern of request.patterns) {
    const hit = protect.find((p) => match(pattern, p.pattern)) ?? (hasGlob(pattern) ? protect.find((p) => globReaches(pattern, p.pattern)) : undefined)
    if (hit) return { action: yolo ? "deny" : "ask", pattern, why: hit.why }
  }
  return { action: "allow" }
}

/** Why a command that needs more than the OS sandbox gives was not run, and what to do instead. */
const sandboxRefused = (pattern: string, because: string) =>
  `The command needs ${pattern.startsWith("network") ? "the network" : `to write ${pattern.replace(/^write /, "")}`}, beyond reins's OS sandbox, and ${because}: it was not run. ` +
  `Do the task without it if you can; otherwise tell the user what you need and why (they can allow it: a "sandbox" rule in reins.json's "permission", such as {"sandbox": {"${pattern}": "allow"}}, or the "sandbox" settings).`

const denied = (permission: string, pattern: string, why?: string) =>
  new PermissionError({
    reason: "denied",
    permission,
    pattern,
    message:
      permission === "sandbox"
        ? sandboxRefused(pattern, "the permission rules deny lifting it (--yolo lifts no part of the sandbox; only --sandbox off does)")
        : why === undefined
          ? `The user's permission rules deny ${permission} for "${pattern}". Do not retry it; choose a different approach.`
          : `Editing "${pattern}" needs the user's approval (${why}), and --yolo approves nothing of the kind: it was not done. ` +
            "Do not retry it or work around it (through bash, another path or a link); tell the user what you wanted to change and why."
  })

type By = "user" | "policy" | "rule"

interface Entry {
  readonly info: Pending
  readonly asked: PermissionAsked
  readonly deferred: Deferred.Deferred<{ readonly answer: Answer; readonly by: By }>
}

/** Decides tool permissions: rules first, then a person, a reply from outside, or the non-interactive policy. */
export class Permission extends Context.Service<
  Permission,
  {
    /** One request: allowed, denied, or asked (waits for the reply). */
    ask(request: AskRequest): Effect.Effect<void, PermissionError>
    /** All requests of one tool call: any denied request fails it before anything is asked. */
    authorize(requests: ReadonlyArray<AskRequest>): Effect.Effect<void, PermissionError>
    /**
     * Replies to a pending question (from a UI or a library caller); false if it is not pending. A question
     * another process asked is answered through the question store, for that process to take.
     */
    reply(id: string, answer: Answer): Effect.Effect<boolean>
    /** Questions waiting for a reply in this process, oldest first. */
    pending(sessionID?: string): ReadonlyArray<Pending>
    /**
     * Questions waiting for a reply in any process over the question store (this process's without one), oldest
     * first: of a session and its sub-agents' sessions, or all.
     */
    waiting(sessionID?: string): Effect.Effect<ReadonlyArray<PermissionAsked>>
    /** This process's questions as their `permission.asked` events. */
    asked(): ReadonlyArray<PermissionAsked>
    /** The rules in force for a session: configured, then project grants, then session grants. */
    rulesFor(sessionID: string): Effect.Effect<ReadonlyArray<Rule>>
    /**
     * How a session's requests are judged: its rules, the rules of every session it was started from
     * (a sub-agent never has more rights than its parent), the rules that only tighten, and the
     * protected paths — the strictest of them decides.
     */
    judge(sessionID: string): Effect.Effect<(request: Pick<AskRequest, "permission" | "patterns" | "opaque">) => Check>
    /** Tools that are denied outright and should not be offered to the model. */
    isDisabled(tool: string): boolean
    readonly rules: ReadonlyArray<Rule>
    readonly mode: Mode
  }
>()("reins/permission/Permission") {
  static readonly layer = Layer.effect(
    Permission,
    Effect.gen(function* () {
      const settings = yield* PermissionSettings
      const grants = yield* PermissionGrants
      const questions = yield* PermissionQuestions
      const bus = yield* Bus
      const ids = yield* Ids
      const mode = settings.mode ?? "last-match"
      const granted = new Map<string, Array<Rule>>()
      const pending = new Map<string, Entry>()
      // one question on the terminal at a time, even when tool calls run in parallel
      const prompt = yield* Semaphore.make(1)
      const store = settings.persist === "project" && settings.project !== undefined ? grants : undefined
      const project = settings.project ?? ""
      let projectGrants: Array<Rule> | undefined

      const loadProject = Effect.gen(function* () {
        if (!store) return []
        projectGrants ??= [...(yield* store.load(project))]
        return projectGrants
      })

      /** The "always" answers of the sessions a sub-agent's session was started from, outermost first. */
      const inherited = (sessionID: string) => {
        const chain: Array<Rule> = []
        for (let id = settings.agentOf?.(sessionID)?.parent, hops = 0; id !== undefined && hops < 8; id = settings.agentOf?.(id)?.parent, hops++) {
          chain.unshift(...(granted.get(id) ?? []))
        }
        return chain
      }

      const rulesFor = (sessionID: string) =>
        Effect.map(loadProject, (project) => {
          const agent = settings.agentOf?.(sessionID)?.rules ?? []
          return [
            ...settings.rules,
            ...agent,
            ...(settings.sessionRules?.(sessionID) ?? []),
            ...project,
            ...inherited(sessionID),
            ...(granted.get(sessionID) ?? []),
            // its allows and denies again, in order: no grant lifts its denies; its asks stay answerable
            ...agent.filter((rule) => rule.action !== "ask")
          ]
        })

      /** The sessions a sub-agent's session was started from, nearest first. */
      const ancestors = (sessionID: string) => {
        const chain: Array<string> = []
        for (let id = settings.agentOf?.(sessionID)?.parent, hops = 0; id !== undefined && hops < 8; id = settings.agentOf?.(id)?.parent, hops++) chain.push(id)
        return chain
      }

      const judge = (sessionID: string) =>
        Effect.gen(function* () {
          const own = yield* rulesFor(sessionID)
          const above = yield* Effect.forEach(ancestors(sessionID), rulesFor)
          const restrict = settings.restrict ?? []
          const protect = settings.protect ?? []
          const yolo = settings.yolo ?? false
          return (request: Pick<AskRequest, "permission" | "patterns" | "opaque">): Check =>
            strictest([
              check(own, request, mode),
              ...above.map((rules) => check(rules, request, mode)),
              ...(restrict.length > 0 ? [checkLimit(restrict, request, mode)] : []),
              ...(protect.length > 0 ? [checkProtected(protect, request, yolo)] : [])
            ])
        })

      const policy: Answer = { reply: settings.nonInteractive === "allow" ? "once" : "reject" }
      const timeoutMs = settings.timeoutMs ?? (settings.prompter ? undefined : 0)

      const grant = Effect.fnUntraced(function* (request: Pending) {
        const rules = request.always.map((pattern): Rule => ({ permission: request.permission, pattern, action: "allow" }))
        // an answer in a sub-agent's session holds for the sessions it was started from too: it is judged by their rules as well
        for (const id of [request.sessionID, ...ancestors(request.sessionID)]) {
          const list = granted.get(id) ?? []
          list.push(...rules)
          granted.set(id, list)
        }
        if (store) {
          ;(yield* loadProject).push(...rules)
          yield* store.save(project, rules)
        }
      })

      /**
       * Settles a pending question once: grants, events, cascades to the session's other questions, then completes it.
       * Completing it wakes its waiters in this very call: the race over its waiters ends, and with it the fiber that
       * settles (the prompter's waiter), so it comes last; it comes whatever happened before (a listener that failed),
       * or the question, gone from `pending`, would wait for ever.
       */
      const settle = (entry: Entry, answer: Answer, by: By): Effect.Effect<void> =>
        Effect.suspend(() =>
          pending.delete(entry.info.id) ? settled(entry, answer, by).pipe(Effect.ensuring(Deferred.succeed(entry.deferred, { answer, by }))) : Effect.void
        )

      const settled = (entry: Entry, answer: Answer, by: By): Effect.Effect<void> =>
        Effect.gen(function* () {
          const { info } = entry
          if (answer.reply === "always") yield* grant(info)
          yield* bus.publish({
            type: "permission.replied",
            id: info.id,
            sessionID: info.sessionID,
            reply: answer.reply,
            by,
            ...(answer.reply === "always" ? { granted: info.always.map((p) => `${info.permission} "${p}"`), persisted: store !== undefined } : {}),
            ...(answer.message ? { message: answer.message } : {})
          })
          const others = [...pending.values()].filter((other) => other.info.sessionID === info.sessionID)
          if (answer.reply === "always") {
            const judged = yield* judge(info.sessionID)
            for (const other of others) {
              if (judged(other.info).action === "allow") yield* settle(other, { reply: "once" }, "rule")
            }
          }
          if (answer.reply === "reject" && by === "user") {
            const message = `Rejected together with another call the user rejected${answer.message ? `: ${answer.message}` : "."}`
            for (const other of others) yield* settle(other, { reply: "reject", message }, "rule")
          }
        })

      const rejection = (info: Pending, answer: Answer, asked: Extract<Check, { action: "ask" }>, by: By) => {
        const pattern = asked.pattern
        const message =
          by === "rule" && answer.message
            ? `${answer.message} Do not retry it; ask the user how to proceed.`
            : by === "policy" && asked.why
              ? `Editing "${pattern}" needs the user's approval (${asked.why}), and nobody answered (non-interactive): it was not done. ` +
                "Do not retry it or work around it; tell the user what you wanted to change and why."
              : by === "policy" && info.permission === "sandbox"
                ? sandboxRefused(pattern, "nobody answered the question (non-interactive policy: deny)")
                : by === "policy"
                  ? `Permission for ${info.permission} on "${pattern}" needs approval, and nobody answered (non-interactive policy: deny). ` +
                    `Do not retry it; find another way or tell the user to re-run with --permission allow or an allow rule in reins.json.`
                  : answer.message
                    ? `The user rejected this ${info.permission} call with this message: ${answer.message}`
                    : `The user rejected permission for ${info.permission} on "${pattern}". Do not retry it; ask the user how to proceed.`
        return new PermissionError({ reason: "rejected", permission: info.permission, pattern, message })
      }

      const question = Effect.fnUntraced(function* (request: AskRequest, asked: Extract<Check, { action: "ask" }>) {
        const id = yield* ids.next("per")
        const info: Pending = {
          ...request,
          id,
          ...(asked.rule ? { rule: asked.rule } : {}),
          // a protected path says why on the question itself
          ...(asked.why ? { title: `${request.title ?? `${request.permission} ${asked.pattern}`} — protected: ${asked.why}` } : {})
        }
        const event: PermissionAsked = {
          type: "permission.asked",
          id,
          sessionID: request.sessionID,
          permission: request.permission,
          patterns: [...request.patterns],
          always: [...request.always],
          ...(request.callID ? { callID: request.callID } : {}),
          ...(asked.rule ? { rule: { ...asked.rule } } : {}),
          ...(request.directory ? { directory: request.directory } : {}),
          ...(request.opaque ? { opaque: request.opaque } : {}),
          ...(request.command ? { command: request.command } : {}),
          ...(info.title ? { title: info.title } : {}),
          ...(request.diffs && request.diffs.length > 0 ? { diffs: request.diffs.map((d) => ({ ...d })) } : {})
        }
        const entry: Entry = { info, asked: event, deferred: yield* Deferred.make<{ readonly answer: Answer; readonly by: By }>() }
        pending.set(id, entry)
        if (questions) yield* questions.put(event)
        yield* bus.publish(event)
        const waiters: Array<Effect.Effect<unknown>> = [Deferred.await(entry.deferred)]
        if (questions) {
          // an answer another process stored: taken here, settled as if the user answered here; taking and settling
          // are one uninterruptible step, so an answer taken for a sibling question is never lost when this one ends
          waiters.push(
            Effect.forever(
              Effect.andThen(
                Effect.sleep(ANSWER_POLL),
                Effect.uninterruptible(
                  Effect.gen(function* () {
                    for (const taken of yield* questions.takeAnswers(request.sessionID)) {
                      const answered = pending.get(taken.id)
                      if (answered) yield* settle(answered, taken.answer, "user")
                    }
                  })
                )
              )
            )
          )
        }
        const prompter = settings.prompter
        if (prompter) {
          waiters.push(
            prompt.withPermits(1)(
              Effect.suspend(() => (pending.has(id) ? prompter.ask(info) : Effect.never)).pipe(Effect.flatMap((answer) => settle(entry, answer, "user")))
            )
          )
        }
        if (timeoutMs !== undefined) {
          // a protected path is never approved by policy (--permission allow): only a person may
          waiters.push(Effect.sleep(timeoutMs).pipe(Effect.andThen(settle(entry, asked.why ? { reply: "reject" } : policy, "policy"))))
        }
        yield* Effect.raceAll(waiters).pipe(
          Effect.ensuring(
            Effect.andThen(
              Effect.sync(() => pending.delete(id)),
              questions ? questions.remove(id) : Effect.void
            )
          )
        )
        const { answer, by } = yield* Deferred.await(entry.deferred)
        if (answer.reply === "reject") return yield* rejection(info, answer, asked, by)
      })

      const ask = Effect.fn("Permission.ask")(function* (request: AskRequest) {
        yield* Effect.annotateCurrentSpan({ "permission.name": request.permission })
        const result = (yield* judge(request.sessionID))(request)
        yield* Effect.annotateCurrentSpan({ "permission.action": result.action })
        if (result.action === "allow") return
        if (result.action === "deny") return yield* denied(request.permission, result.pattern, result.why)
        yield* question(request, result)
      })

      const authorize = Effect.fn("Permission.authorize")(function* (requests: ReadonlyArray<AskRequest>) {
        const questions: Array<AskRequest> = []
        for (const request of requests) {
          const result = (yield* judge(request.sessionID))(request)
          if (result.action === "deny") return yield* denied(request.permission, result.pattern, result.why)
          if (result.action === "ask") questions.push(request)
        }
        // grants only add allows, so what was allowed stays allowed; an earlier "always" may cover a later question
        for (const request of questions) yield* ask(request)
      })

      const reply = (id: string, answer: Answer) =>
        Effect.suspend(() => {
          const entry = pending.get(id)
          if (entry) return Effect.as(settle(entry, answer, "user"), true)
          return questions ? questions.answer(id, answer) : Effect.succeed(false)
        })

      const local = (sessionID?: string) => [...pending.values()].map((e) => e.info).filter((p) => sessionID === undefined || p.sessionID === sessionID)

      return Permission.of({
        ask,
        authorize,
        reply,
        pending: local,
        waiting: (sessionID) =>
          questions
            ? questions.list(sessionID)
            : Effect.succeed([...pending.values()].filter((e) => sessionID === undefined || e.info.sessionID === sessionID).map((e) => e.asked)),
        asked: () => [...pending.values()].map((e) => e.asked),
        rulesFor,
        judge,
        isDisabled: (tool) => isDisabled(settings.rules, tool, mode),
        rules: settings.rules,
        mode
      })
    })
  )
}
