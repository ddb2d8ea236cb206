// Agents and sub-agents through the composed runtime (T19): the `task` tool runs a sub-agent in a
// child session over the real AI SDK provider talking HTTP to the scripted server; the server
// answers each request by who asks (the parent, or which child), so concurrent children are told apart.
import { afterEach, describe, expect, test } from "bun:test"
import { Effect, Layer, Option, Stream, Tracer } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import type { SessionEvent, ToolPart } from "@reins/domain"
import { Agents, SessionService } from "@reins/session"
import { SessionStore, Storage } from "@reins/storage"
import { ProcessGroup } from "@reins/tool"
import { eventually, startScriptedServer, type ScriptedServer, type ScriptedStep } from "@reins/testkit"
import { makeRuntime, type RuntimeOptions } from "../src/Runtime.ts"
import { aliveIn, tmp } from "./support.ts"

const stops: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop()
})

const MODEL = { providerID: "local", modelID: "m" }

/** The text of a request's messages (system, user, tool results). */
const textOf = (body: any) => JSON.stringify(body?.messages ?? [])
/** The first user message's text: a child's is the prompt its `task` call gave. */
const firstUser = (body: any): string => {
  const m = (body?.messages ?? []).find((x: any) => x.role === "user")
  return typeof m?.content === "string" ? m.content : JSON.stringify(m?.content ?? "")
}
const toolResults = (body: any) => (body?.messages ?? []).filter((m: any) => m.role === "tool").length
const toolNames = (body: any): Array<string> => (body?.tools ?? []).map((t: any) => t.function?.name)

interface Setup {
  readonly respond: (body: any) => ScriptedStep | undefined
  readonly config?: Record<string, unknown>
  readonly permission?: RuntimeOptions["permission"]
  readonly cwd?: string
  readonly home?: string
}

const setup = async (options: Setup) => {
  const server: ScriptedServer = await startScriptedServer([], { respond: (body) => options.respond(body) ?? { text: "unexpected request" } })
  stops.push(() => server.stop())
  const spans: Array<Tracer.NativeSpan> = []
  const capture = Tracer.make({
    span(o) {
      const span = new Tracer.NativeSpan(o)
      spans.push(span)
      return span
    }
  })
  const cwd = options.cwd ?? tmp()
  const layer = makeRuntime({
    cwd,
    dataDir: tmp(),
    env: {},
    home: options.home ?? tmp("reins-home-"),
    config: {
      provider: { local: { type: "openai-compatible", baseURL: server.url, models: { m: { context: 32_000, output: 2_000 } } } },
      retry: { attempts: 1, initial_delay_ms: 1, max_delay_ms: 1 },
      ...options.config
    } as RuntimeOptions["config"],
    store: Storage.layerMemory,
    permission: options.permission ?? { yolo: true },
    telemetry: Layer.succeed(Tracer.Tracer, capture)
  })
  return { server, spans, cwd, layer }
}

describe("the task tool", () => {
  test("two task calls in one step: two child sessions run concurrently, their answers reach the parent's next request, one trace", async () => {
    const bothStarted = Promise.withResolvers<void>()
    let started = 0
    const { server, spans, cwd, layer } = await setup({
      respond: (body) => {
        const text = firstUser(body)
        if (!text.includes("-TASK")) {
          if (toolResults(body) === 0) {
            return {
              toolCalls: [
                { name: "task", arguments: { description: "alpha work", prompt: "ALPHA-TASK: count the files", subagent_type: "general" } },
                { name: "task", arguments: { description: "beta work", prompt: "BETA-TASK: read the readme", subagent_type: "explore" } }
              ],
              usage: { prompt_tokens: 100, completion_tokens: 10 }
            }
          }
          return { text: "Both sub-agents answered.", usage: { prompt_tokens: 300, completion_tokens: 5 } }
        }
        const who = text.includes("ALPHA-TASK") ? "alpha" : "beta"
        // each child makes a tool step, then answers; its first step is answered once both children
        // have asked for theirs (children run one after the other would wait here for ever)
        if (toolResults(body) === 0) {
          if (++started === 2) bothStarted.resolve()
          return {
            toolCalls: [{ name: "bash", arguments: { command: `echo ${who}-ran` } }],
            holdUntil: bothStarted.promise,
            usage: { prompt_tokens: 40, completion_tokens: 4 }
          }
        }
        return { text: `${who} answer: 7`, usage: { prompt_tokens: 60, completion_tokens: 6 } }
      }
    })
    const out = await Effect.runPromise(
      Effect.gen(function* () {
        const sessions = yield* SessionService
        const store = yield* SessionStore
        const session = yield* sessions.create({ directory: cwd })
        const events = yield* sessions.stream({ sessionID: session.id, text: "do two things", model: MODEL }).pipe(Stream.runCollect)
        const all = yield* store.listSessions()
        const parts = (yield* store.messages(session.id)).flatMap((m) => m.parts)
        const totals = (yield* store.totals([session.id])).get(session.id)
        return { parent: session.id, events: [...events], all, parts, totals }
      }).pipe(Effect.withSpan("reins run"), Effect.provide(layer), Effect.scoped)
    )
    const children = out.all.filter((s) => s.parentID === out.parent)
    expect(children).toHaveLength(2)
    // the children's requests overlap: each one's first request came before the other's last answer
    const requestsOf = (who: string) => server.requests.filter((r) => firstUser(r.body).includes(who))
    const alpha = requestsOf("ALPHA-TASK")
    const beta = requestsOf("BETA-TASK")
    expect(alpha).toHaveLength(2)
    expect(beta).toHaveLength(2)
    expect(alpha[0]!.receivedAt).toBeLessThan(beta[1]!.receivedAt)
    expect(beta[0]!.receivedAt).toBeLessThan(alpha[1]!.receivedAt)
    // the answers and the child session ids reach the parent's second request
    const last = textOf(server.requests.at(-1)!.body)
    expect(last).toContain("alpha answer: 7")
    expect(last).toContain("beta answer: 7")
    for (const child of children) expect(last).toContain(`task_id: ${child.id}`)
    // the tool parts carry the child's usage and cost
    const tasks = out.parts.filter((p): p is ToolPart => p.type === "tool" && p.tool === "task")
    expect(tasks.map((t) => t.state.status)).toEqual(["completed", "completed"])
    for (const t of tasks) {
      const meta = t.state.status === "completed" ? t.state.metadata : {}
      expect(children.map((c) => c.id)).toContain(meta.sessionID as string)
      expect((meta.usage as { input: number }).input).toBe(100)
      expect((meta.usage as { output: number }).output).toBe(10)
    }
    // the children's progress streams as the parent's events
    const childIDs = new Set(children.map((c) => c.id))
    const forwarded = out.events.filter(
      (e: SessionEvent) => e.type === "part.updated" && childIDs.has(e.part.sessionID) && e.part.type === "tool" && e.part.tool === "bash"
    )
    expect(forwarded.length).toBeGreaterThan(0)
    expect(out.events.at(-1)?.type).toBe("turn.finished")
    // one trace: each child's invoke_agent is a child of an execute_tool task span of the parent's turn
    const root = spans.find((s) => s.name === "invoke_agent build")!
    const taskSpans = spans.filter((s) => s.name === "execute_tool task")
    const childAgents = spans.filter((s) => s.name === "invoke_agent general" || s.name === "invoke_agent explore")
    expect(taskSpans).toHaveLength(2)
    expect(childAgents).toHaveLength(2)
    for (const span of [...taskSpans, ...childAgents]) expect(span.traceId).toBe(root.traceId)
    for (const t of taskSpans) expect(Option.getOrUndefined(t.parent)?.spanId).toBe(root.spanId)
    const taskIds = new Set(taskSpans.map((t) => t.spanId))
    for (const c of childAgents) expect(taskIds.has(Option.getOrUndefined(c.parent)?.spanId ?? "")).toBe(true)
    expect(new Set(childAgents.map((c) => Option.getOrUndefined(c.parent)?.spanId)).size).toBe(2)
    // the parent's turn counts its sub-agents' tokens in (its own 100 + 300 in, 10 + 5 out; each child 40 + 60 in, 4 + 6 out), and shows them apart
    const a = Object.fromEntries(root.attributes)
    expect(a["gen_ai.usage.input_tokens"]).toBe(400 + 2 * 100)
    expect(a["gen_ai.usage.output_tokens"]).toBe(15 + 2 * 10)
    expect(a["reins.subagents.usage.input_tokens"]).toBe(200)
    expect(a["reins.subagents.usage.output_tokens"]).toBe(20)
    // a child's own turn counts only its own
    for (const c of childAgents) expect(Object.fromEntries(c.attributes)["gen_ai.usage.output_tokens"]).toBe(10)
    expect(Object.fromEntries(childAgents[0]!.attributes)["reins.subagents.usage.input_tokens"]).toBeUndefined()
    // the store sums the children apart from the parent's own steps
    expect(out.totals?.usage.output).toBe(15)
    expect(out.totals?.subAgents).toMatchObject({ sessions: 2, usage: { input: 200, output: 20 } })
  })

  test("depth: a sub-agent may start one more level; at depth 2 task is not offered", async () => {
    const { server, cwd, layer } = await setup({
      respond: (body) => {
        const text = firstUser(body)
        const done = toolResults(body) > 0
        const usage = { prompt_tokens: 10, completion_tokens: 1 }
        if (text.includes("LEVEL-2")) return { text: "level 2 done", usage }
        if (text.includes("LEVEL-1"))
          return done
            ? { text: "level 1 done", usage }
            : { toolCalls: [{ name: "task", arguments: { description: "deeper", prompt: "LEVEL-2 go", subagent_type: "general" } }], usage }
        return done
          ? { text: "top done", usage }
          : { toolCalls: [{ name: "task", arguments: { description: "first", prompt: "LEVEL-1 go", subagent_type: "general" } }], usage }
      }
    })
    const { out, parts } = await Effect.runPromise(
      Effect.gen(function* () {
        const sessions = yield* SessionService
        const store = yield* SessionStore
        const session = yield* sessions.create({ directory: cwd })
        const out = yield* sessions.prompt({ sessionID: session.id, text: "start", model: MODEL })
        return { out, parts: (yield* store.messages(session.id)).flatMap((m) => m.parts) }
      }).pipe(Effect.provide(layer), Effect.scoped)
    )
    expect(out.text).toBe("top done")
    // the top's task call counts its sub-agent's two steps and the grandchild's one: 3 outputs of 1 token
    const call = parts.find((p): p is ToolPart => p.type === "tool" && p.tool === "task")!
    expect(call.state.status === "completed" ? call.state.metadata.usage : undefined).toMatchObject({ output: 3 })
    const first = (marker: string) => server.requests.find((r) => firstUser(r.body).includes(marker))!
    expect(toolNames(server.requests[0]!.body)).toContain("task")
    expect(toolNames(first("LEVEL-1").body)).toContain("task")
    expect(toolNames(first("LEVEL-2").body)).not.toContain("task")
    expect(toolNames(first("LEVEL-2").body)).toContain("bash")
  })

  test("with every sub-agent disabled, task is not offered", async () => {
    const { server, cwd, layer } = await setup({
      config: { agent: { general: { disable: true }, explore: { disable: true } } },
      respond: () => ({ text: "alone" })
    })
    await Effect.runPromise(
      Effect.gen(function* () {
        const sessions = yield* SessionService
        const session = yield* sessions.create({ directory: cwd })
        return yield* sessions.prompt({ sessionID: session.id, text: "start", model: MODEL })
      }).pipe(Effect.provide(layer), Effect.scoped)
    )
    expect(toolNames(server.requests[0]!.body)).not.toContain("task")
    expect(toolNames(server.requests[0]!.body)).toContain("bash")
  })

  test("an unknown sub-agent is the tool's error, naming the available ones", async () => {
    const { server, cwd, layer } = await setup({
      respond: (body) =>
        toolResults(body) === 0 ? { toolCalls: [{ name: "task", arguments: { description: "x", prompt: "y", subagent_type: "nobody" } }] } : { text: "ok" }
    })
    await Effect.runPromise(
      Effect.gen(function* () {
        const sessions = yield* SessionService
        const session = yield* sessions.create({ directory: cwd })
        return yield* sessions.prompt({ sessionID: session.id, text: "start", model: MODEL })
      }).pipe(Effect.provide(layer), Effect.scoped)
    )
    const last = textOf(server.requests.at(-1)!.body)
    expect(last).toContain('There is no sub-agent named \\"nobody\\". Available sub-agents: general, explore.')
    // the description lists the sub-agents
    const task = server.requests[0]!.body.tools.find((t: any) => t.function.name === "task")
    expect(task.function.description).toContain("- explore: Fast read-only search")
    expect(task.function.description).toContain("- general: General-purpose agent")
  })

  test("a sub-agent that fails is the task call's error; the parent's turn goes on", async () => {
    const { server, cwd, layer } = await setup({
      respond: (body) => {
        if (firstUser(body).includes("DOOMED")) return { error: { status: 400, message: "the child's request was refused" } }
        return toolResults(body) === 0
          ? { toolCalls: [{ name: "task", arguments: { description: "x", prompt: "DOOMED", subagent_type: "general" } }] }
          : { text: "carried on" }
      }
    })
    const out = await Effect.runPromise(
      Effect.gen(function* () {
        const sessions = yield* SessionService
        const session = yield* sessions.create({ directory: cwd })
        return yield* sessions.prompt({ sessionID: session.id, text: "start", model: MODEL })
      }).pipe(Effect.provide(layer), Effect.scoped)
    )
    expect(out.text).toBe("carried on")
    const result = textOf(server.requests.at(-1)!.body)
    expect(result).toMatch(/The general sub-agent \(session ses_\w+\) failed: .*the child's request was refused/)
  })

  test("interrupting the parent's turn stops both children and their commands: no process is left", async () => {
    const n = `3${Math.floor(Math.random() * 90000) + 10000}.5`
    const { cwd, layer } = await setup({
      respond: (body) => {
        const text = firstUser(body)
        if (!text.includes("SLEEPS")) {
          return toolResults(body) === 0
            ? {
                toolCalls: [
                  { name: "task", arguments: { description: "one", prompt: "ONE SLEEPS", subagent_type: "general" } },
                  { name: "task", arguments: { description: "two", prompt: "TWO SLEEPS", subagent_type: "general" } }
                ]
              }
            : { text: "parent resumed" }
        }
        return toolResults(body) === 0 ? { toolCalls: [{ name: "bash", arguments: { command: `sleep ${n}` } }] } : { text: "child done" }
      }
    })
    const groupOf = (e: SessionEvent) =>
      e.type === "part.updated" && e.part.type === "tool" && e.part.state.status === "running" ? ProcessGroup.recordOf(e.part.state.metadata) : undefined
    const out = await Effect.runPromise(
      Effect.gen(function* () {
        const sessions = yield* SessionService
        const store = yield* SessionStore
        const session = yield* sessions.create({ directory: cwd })
        const seen = new Map<number, ProcessGroup.GroupRecord>()
        yield* sessions.stream({ sessionID: session.id, text: "sleep twice", model: MODEL }).pipe(
          Stream.tap((e) =>
            Effect.sync(() => {
              const g = groupOf(e)
              if (g) seen.set(g.pgid, g)
            })
          ),
          Stream.takeUntil(() => seen.size === 2),
          Stream.runDrain
        )
        const groups = [...seen.values()]
        // every member was killed; a killed process can still be running its last instructions for a moment (R) on a busy machine
        const alive = yield* eventually(
          Effect.sync(() => groups.flatMap((g) => aliveIn(g.pgid))).pipe(Effect.map((left) => left.length === 0 && left)),
          "the commands' processes to be gone after the interrupt"
        )
        const children = (yield* store.listSessions()).filter((s) => s.parentID === session.id)
        const open = (yield* Effect.forEach(children, (c) => store.messages(c.id)))
          .flat()
          .flatMap((m) => m.parts)
          .filter((p) => p.type === "tool" && (p.state.status === "running" || p.state.status === "pending"))
        return { groups, alive, open, children }
      }).pipe(Effect.provide(layer), Effect.scoped)
    )
    expect(out.groups).toHaveLength(2)
    expect(out.children).toHaveLength(2)
    expect(out.alive).toEqual([])
    expect(out.open).toEqual([])
  })
})

describe("agents", () => {
  test("the plan agent: no editing tools offered, an edit call fails, a writing command is denied (even under yolo), reading works", async () => {
    const { server, cwd, layer } = await setup({
      respond: (body) => {
        const n = toolResults(body)
        if (n === 0) {
          return {
            toolCalls: [
              { name: "edit", arguments: { filePath: "a.txt", oldString: "one", newString: "two" } },
              { name: "bash", arguments: { command: "echo two > a.txt" } },
              { name: "bash", arguments: { command: "cat a.txt" } }
            ]
          }
        }
        return { text: "planned" }
      }
    })
    fs.writeFileSync(path.join(cwd, "a.txt"), "one\n")
    await Effect.runPromise(
      Effect.gen(function* () {
        const sessions = yield* SessionService
        const session = yield* sessions.create({ directory: cwd })
        return yield* sessions.prompt({ sessionID: session.id, text: "plan it", model: MODEL, agent: "plan" })
      }).pipe(Effect.provide(layer), Effect.scoped)
    )
    const tools = toolNames(server.requests[0]!.body)
    expect(tools).not.toContain("edit")
    expect(tools).not.toContain("write")
    expect(tools).not.toContain("apply_patch")
    expect(tools).toContain("read")
    expect(textOf(server.requests[0]!.body)).toContain("You are in plan mode")
    const results = (server.requests[1]!.body.messages as Array<any>).filter((m) => m.role === "tool").map((m) => JSON.stringify(m.content))
    expect(results[0]).toContain("unavailable tool 'edit'")
    expect(results[1]).toContain("deny edit")
    expect(results[2]).toContain("one")
    expect(fs.readFileSync(path.join(cwd, "a.txt"), "utf8")).toBe("one\n")
  })

  test("agents from Markdown files (project and home) and config; a broken file is skipped with its reason; a file agent's body is its prompt", async () => {
    const cwd = tmp()
    const home = tmp("reins-home-")
    fs.mkdirSync(path.join(cwd, ".reins", "agents"), { recursive: true })
    fs.mkdirSync(path.join(home, ".config", "reins", "agents"), { recursive: true })
    fs.writeFileSync(
      path.join(cwd, ".reins", "agents", "reviewer.md"),
      "---\ndescription: Reviews diffs\nmode: subagent\ntools: [read, grep]\nsteps: 3\n---\nYou review code. Be terse.\n"
    )
    fs.writeFileSync(path.join(home, ".config", "reins", "agents", "helper.md"), "---\ndescription: Helps at home\nmode: primary\n---\nHome helper prompt.\n")
    fs.writeFileSync(path.join(cwd, ".reins", "agents", "broken.md"), "---\ndescription: [unclosed\n---\nx\n")
    fs.writeFileSync(path.join(cwd, ".reins", "agents", "typo.md"), "---\ndescripton: misspelt\n---\nx\n")
    const { server, layer } = await setup({
      cwd,
      home,
      config: { agent: { steps: 9, docs: { description: "Writes docs", mode: "subagent", permission: { bash: "deny" } } } },
      respond: (body) => {
        const text = firstUser(body)
        if (text.includes("REVIEW-THIS")) return { text: "looks fine" }
        return toolResults(body) === 0
          ? { toolCalls: [{ name: "task", arguments: { description: "review", prompt: "REVIEW-THIS diff", subagent_type: "reviewer" } }] }
          : { text: "reviewed" }
      }
    })
    const catalog = await Effect.runPromise(
      Effect.gen(function* () {
        const agents = yield* Agents
        const sessions = yield* SessionService
        const session = yield* sessions.create({ directory: cwd })
        yield* sessions.prompt({ sessionID: session.id, text: "review please", model: MODEL })
        return agents.catalog
      }).pipe(Effect.provide(layer), Effect.scoped)
    )
    const byName = Object.fromEntries(catalog.agents.map((a) => [a.name, a]))
    expect(Object.keys(byName).sort()).toEqual(["build", "docs", "explore", "general", "helper", "plan", "reviewer"])
    expect(byName.reviewer!.source).toBe(path.join(cwd, ".reins", "agents", "reviewer.md"))
    expect(byName.helper!.source).toBe(path.join(home, ".config", "reins", "agents", "helper.md"))
    expect(byName.docs!.rules).toEqual([{ permission: "bash", pattern: "*", action: "deny" }])
    expect(catalog.skipped.map((s) => path.basename(s.source)).sort()).toEqual(["broken.md", "typo.md"])
    expect(catalog.skipped.find((s) => s.source.endsWith("typo.md"))!.reason).toContain("descripton")
    // the reviewer's request: its body as the header, only its tools
    const review = server.requests.find((r) => firstUser(r.body).includes("REVIEW-THIS"))!
    expect(review.body.messages[0].content.startsWith("You review code. Be terse.")).toBe(true)
    expect(toolNames(review.body).sort()).toEqual(["grep", "read"])
    const parentTask = server.requests[0]!.body.tools.find((t: any) => t.function.name === "task")
    expect(parentTask.function.description).toContain("- reviewer: Reviews diffs")
    expect(parentTask.function.description).not.toContain("helper")
  })

  test("a parent's \"always\" answer holds in its sub-agents, except where the sub-agent's own rules deny", async () => {
    let asks = 0
    const { server, cwd, layer } = await setup({
      config: { permission: { bash: "ask" }, agent: { careful: { description: "No echo", mode: "subagent", permission: { bash: { "echo *": "deny" } } } } },
      permission: {
        nonInteractive: "deny",
        prompter: {
          ask: () =>
            Effect.sync(() => {
              asks++
              return { reply: "always" as const }
            })
        }
      },
      respond: (body) => {
        const who = firstUser(body)
        const n = toolResults(body)
        if (who.includes("CHILD-")) return n === 0 ? { toolCalls: [{ name: "bash", arguments: { command: "echo hi" } }] } : { text: `${who} finished` }
        if (n === 0) return { toolCalls: [{ name: "bash", arguments: { command: "echo hi" } }] }
        if (n === 1) {
          return {
            toolCalls: [
              { name: "task", arguments: { description: "a", prompt: "CHILD-GENERAL", subagent_type: "general" } },
              { name: "task", arguments: { description: "b", prompt: "CHILD-CAREFUL", subagent_type: "careful" } }
            ]
          }
        }
        return { text: "all done" }
      }
    })
    await Effect.runPromise(
      Effect.gen(function* () {
        const sessions = yield* SessionService
        const session = yield* sessions.create({ directory: cwd })
        return yield* sessions.prompt({ sessionID: session.id, text: "echo then delegate", model: MODEL })
      }).pipe(Effect.provide(layer), Effect.scoped)
    )
    // asked once, by the parent; the general child ran it on the parent's answer
    expect(asks).toBe(1)
    const resultOf = (who: string) => {
      const last = server.requests.filter((r) => firstUser(r.body) === who).at(-1)!
      return JSON.stringify(last.body.messages.filter((m: any) => m.role === "tool"))
    }
    expect(resultOf("CHILD-GENERAL")).toContain("hi")
    expect(resultOf("CHILD-GENERAL")).not.toContain("deny")
    expect(resultOf("CHILD-CAREFUL")).toContain("deny bash")
  })
})
