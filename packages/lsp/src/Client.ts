// One language server for one root: initialized once, files opened and changed with their whole text, and each
// sync answered with the file's problems — pulled (`textDocument/diagnostic`, or tsserver's own request through
// typescript-language-server) when the server can, else the pushed `publishDiagnostics` once they settle.
import { Deferred, Effect, Option, type Scope } from "effect"
import { fileURLToPath, pathToFileURL } from "node:url"
import type { Problem } from "@reins/tool"
import { type Launch, open } from "./Connection.ts"
import { LspError } from "./LspError.ts"
import { fromLsp, fromTsserver } from "./Problems.ts"

/** Which server, for which root, and how it names its languages. */
export interface ClientSpec {
  /** Shown in results: `typescript-language-server`. */
  readonly name: string
  readonly root: string
  readonly languageId: (file: string) => string
  readonly initializationOptions?: unknown
  /**
   * Told to the server as the client's process (it exits when that one is gone): null in a sandbox with its own pid
   * namespace, where reins's pid means nothing (typescript-language-server exited at once; bwrap ends it with reins).
   */
  readonly parentPid: number | null
}

/** A file's problems after a sync, and those it had before the change when the server had it already. */
export interface Synced {
  readonly problems: ReadonlyArray<Problem>
  readonly before?: ReadonlyArray<Problem>
}

/** A started, initialized server. */
export interface Client {
  readonly name: string
  readonly pid: number | undefined
  /** Done when the process ended. */
  readonly exited: Deferred.Deferred<string>
  readonly closing: () => boolean
  readonly stderrTail: () => string
  /**
   * Gives the server `text` as the file's content and waits for its problems, or undefined after `timeoutMs`. `before`:
   * the file's text before the edit, for a file the server does not have yet: opened with it first, its problems are
   * the baseline (`Synced.before`), then changed to `text` (each step waits up to `timeoutMs`).
   */
  sync(file: string, text: string, timeoutMs: number, before?: string): Effect.Effect<Synced | undefined, LspError>
  /** The files the server has open, with the text it was given. */
  readonly opened: () => ReadonlyMap<string, string>
  /** Gives the server an open file's new text without waiting for its problems. */
  change(file: string, text: string): Effect.Effect<void>
  /** Closes a file (deleted, moved away or unreadable): the server goes back to the disk for it. */
  close(file: string): Effect.Effect<void>
}

/** After a pushed report, how long the server may take to send the next one (tsserver sends syntax, then semantics). */
const SETTLE_MS = 400
const TSSERVER_REQUEST = "typescript.tsserverRequest"

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)
const uriOf = (file: string) => pathToFileURL(file).href

/** The file a `file:` URI names (a server may encode it differently from us), undefined for another URI. */
const fileOf = (uri: string) => {
  try {
    return fileURLToPath(uri)
  } catch {
    return undefined
  }
}

interface Pushed {
  readonly version: number | undefined
  readonly problems: ReadonlyArray<Problem>
  /** How many reports came for the file so far. */
  readonly count: number
}

type Strategy = "pull" | "tsserver" | "push"

const strategyOf = (capabilities: unknown): Strategy => {
  if (!isRecord(capabilities)) return "push"
  if (capabilities.diagnosticProvider !== undefined && capabilities.diagnosticProvider !== null) return "pull"
  const commands = isRecord(capabilities.executeCommandProvider) ? capabilities.executeCommandProvider.commands : undefined
  return Array.isArray(commands) && commands.includes(TSSERVER_REQUEST) ? "tsserver" : "push"
}

/** Starts the server, initializes it for `spec.root` within `startupTimeoutMs`; the scope shuts it down. */
export const start = (spec: ClientSpec, launch: Launch, startupTimeoutMs: number): Effect.Effect<Client, LspError, Scope.Scope> =>
  Effect.gen(function* () {
    // by file; reports are kept for open files only (a server may report on the whole project)
    const pushed = new Map<string, Pushed>()
    const listeners = new Set<(file: string) => void>()
    const documents = new Map<string, { version: number; text: string; last?: ReadonlyArray<Problem> }>()
    const connection = yield* open(spec.name, launch, {
      notification: (method, params) => {
        if (method !== "textDocument/publishDiagnostics" || !isRecord(params) || typeof params.uri !== "string") return
        const file = fileOf(params.uri)
        if (file === undefined || !documents.has(file)) return
        pushed.set(file, {
          version: typeof params.version === "number" ? params.version : undefined,
          problems: fromLsp(params.diagnostics),
          count: (pushed.get(file)?.count ?? 0) + 1
        })
        // a copy: a listener wakes a reader in this call, which may add a listener of its own (told from the next report)
        for (const listener of [...listeners]) listener(file)
      },
      request: (method, params) => {
        if (method === "workspace/configuration") return { result: isRecord(params) && Array.isArray(params.items) ? params.items.map(() => null) : [] }
        if (method === "workspace/workspaceFolders") return { result: [{ uri: uriOf(spec.root), name: spec.root }] }
        if (
          method === "client/registerCapability" ||
          method === "client/unregisterCapability" ||
          method === "window/workDoneProgress/create" ||
          method === "window/showMessageRequest" ||
          method === "workspace/diagnostic/refresh"
        )
          return { result: null }
        return undefined
      }
    })
    const initialized = yield* connection.request(
      "initialize",
      {
        processId: spec.parentPid,
        clientInfo: { name: "reins" },
        rootUri: uriOf(spec.root),
        rootPath: spec.root,
        workspaceFolders: [{ uri: uriOf(spec.root), name: spec.root }],
        capabilities: {
          textDocument: {
            synchronization: { dynamicRegistration: false, didSave: false },
            publishDiagnostics: { versionSupport: true },
            diagnostic: { dynamicRegistration: false, relatedDocumentSupport: false }
          },
          workspace: { configuration: true, workspaceFolders: true },
          window: { workDoneProgress: false }
        },
        ...(spec.initializationOptions !== undefined ? { initializationOptions: spec.initializationOptions } : {})
      },
      startupTimeoutMs
    )
    yield* connection.notify("initialized", {})
    const strategy = strategyOf(isRecord(initialized) ? initialized.capabilities : undefined)

    /** The next pushed report for `file` after `count` (at `version` or later when the server says), then quiet for SETTLE_MS. */
    const settled = (file: string, count: number, version: number) =>
      Effect.gen(function* () {
        const arrived = yield* Deferred.make<void>()
        const fresh = () => {
          const now = pushed.get(file)
          return now !== undefined && now.count > count && (now.version === undefined || now.version >= version)
        }
        const listener = (at: string) => {
          if (at === file && fresh()) Deferred.doneUnsafe(arrived, Effect.void)
        }
        listeners.add(listener)
        if (fresh()) Deferred.doneUnsafe(arrived, Effect.void)
        yield* Deferred.await(arrived).pipe(Effect.ensuring(Effect.sync(() => listeners.delete(listener))))
        // a server that says the version answered for it; one that does not may send more (syntax, then semantics)
        for (;;) {
          const seen = pushed.get(file)
          if (seen === undefined || seen.version !== undefined) return seen?.problems ?? []
          yield* Effect.sleep(SETTLE_MS)
          if (pushed.get(file)?.count === seen.count) return seen.problems
        }
      })

    const pull = (file: string, uri: string, timeoutMs: number): Effect.Effect<ReadonlyArray<Problem>, LspError> =>
      strategy === "pull"
        ? Effect.map(connection.request("textDocument/diagnostic", { textDocument: { uri } }, timeoutMs), (report) =>
            isRecord(report) && report.kind === "full" ? fromLsp(report.items) : (documents.get(file)?.last ?? [])
          )
        : Effect.map(
            Effect.all(
              ["syntacticDiagnosticsSync", "semanticDiagnosticsSync"].map((command) =>
                connection.request("workspace/executeCommand", { command: TSSERVER_REQUEST, arguments: [command, { file }] }, timeoutMs)
              )
            ),
            (answers) => answers.flatMap((answer) => fromTsserver(isRecord(answer) && "body" in answer ? answer.body : answer))
          )

    /** Sends `text` as the file's content: the version sent, or undefined when the server has that text already. */
    const put = (file: string, text: string) =>
      Effect.suspend((): Effect.Effect<number | undefined> => {
        const open = documents.get(file)
        if (open === undefined) {
          documents.set(file, { version: 1, text })
          return Effect.as(
            connection.notify("textDocument/didOpen", { textDocument: { uri: uriOf(file), languageId: spec.languageId(file), version: 1, text } }),
            1
          )
        }
        if (open.text === text) return Effect.succeed(undefined)
        const version = open.version + 1
        documents.set(file, { ...open, version, text })
        return Effect.as(connection.notify("textDocument/didChange", { textDocument: { uri: uriOf(file), version }, contentChanges: [{ text }] }), version)
      })

    // a server that stops meanwhile ends the wait at once
    const stopped = Effect.flatMap(Deferred.await(connection.exited), (how) =>
      Effect.fail(new LspError({ server: spec.name, reason: "exited", message: `${spec.name} stopped (${how})` }))
    )

    /** Sends `text` and waits for the file's problems (kept as its last); None after `timeoutMs`. */
    const check = (file: string, text: string, timeoutMs: number) =>
      Effect.gen(function* () {
        const count = pushed.get(file)?.count ?? 0
        const version = yield* put(file, text)
        const last = documents.get(file)?.last
        if (version === undefined && strategy === "push") return Option.some(last ?? pushed.get(file)?.problems ?? [])
        const problems = yield* (strategy === "push" ? settled(file, count, version ?? 1) : pull(file, uriOf(file), timeoutMs)).pipe(
          Effect.raceFirst(stopped),
          Effect.timeoutOption(timeoutMs)
        )
        const current = documents.get(file)
        if (Option.isSome(problems) && current !== undefined) documents.set(file, { ...current, last: problems.value })
        return problems
      })

    const sync = (file: string, text: string, timeoutMs: number, before?: string) =>
      Effect.gen(function* () {
        let baseline = documents.get(file)?.last
        // a file new to the server is opened as it was first: its old errors are not reported as the edit's
        if (!documents.has(file) && before !== undefined && before !== text) {
          const first = yield* check(file, before, timeoutMs)
          if (Option.isNone(first)) return undefined
          baseline = first.value
        }
        const problems = yield* check(file, text, timeoutMs)
        if (Option.isNone(problems)) return undefined
        return { problems: problems.value, ...(baseline !== undefined ? { before: baseline } : {}) } satisfies Synced
      })

    const close = (file: string) =>
      Effect.suspend(() => {
        if (!documents.delete(file)) return Effect.void
        pushed.delete(file)
        return connection.notify("textDocument/didClose", { textDocument: { uri: uriOf(file) } })
      })

    return {
      name: spec.name,
      pid: connection.pid,
      exited: connection.exited,
      closing: connection.closing,
      stderrTail: connection.stderrTail,
      sync,
      opened: () => new Map([...documents].map(([file, doc]) => [file, doc.text])),
      change: (file, text) => Effect.asVoid(put(file, text)),
      close
    } satisfies Client
  })
