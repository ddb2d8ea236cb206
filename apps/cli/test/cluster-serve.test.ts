// `reins serve --runner HOST:PORT` (issue 28): three servers on one PostgreSQL database are one cluster of runners.
// Any of them takes any request for any session and hands it to the runner that owns the session; a client follows
// the session on another node; the owner killed -9 mid-command, another runner resumes the turn. Needs
// REINS_TEST_PG_URL (scripts/pg-test.sh starts a server); skips without.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { ClusterTesting, defaultTiming } from "@reins/cluster"
import * as fs from "node:fs"
import * as path from "node:path"
import { waitFor } from "@reins/testkit"
import { api, endSleeping, marker, openEvents, servers, sleeping, type Served, type SseFrame } from "./serve-support.ts"
import { ensureBuilt, projects, reins, type Project } from "./support.ts"

beforeAll(() => ensureBuilt())
const setup = projects()
const serve = servers()
const pgUrl = process.env.REINS_TEST_PG_URL || undefined
const drops: Array<() => Promise<unknown>> = []
afterAll(async () => {
  for (const drop of drops) await drop()
})

const SECRET = "cluster-serve-test-secret-0123456789"
/** Shards a group: the library's default, which the runners keep. */
const SHARDS = 300

/** A runner of the cluster: `reins serve` on the database as HOST:PORT, and the address it took. */
const startRunner = async (p: Project, database: string, extra: ReadonlyArray<string> = [], env: Record<string, string> = {}) => {
  const runner = `127.0.0.1:${ClusterTesting.freePort()}`
  const served = await serve(p, ["--database", database, "--runner", runner, ...extra], { REINS_CLUSTER_SECRET: SECRET, ...env })
  return { ...served, runner }
}

/** A fresh database of its own, dropped after the file. */
const freshDatabase = async () => {
  const db = await ClusterTesting.freshDatabase(pgUrl!)
  drops.push(db.drop)
  return db
}

/** Three runners of the project on `database`, once the shards have settled among them. */
const startCluster = async (p: Project, database: string) => {
  const nodes = await Promise.all([startRunner(p, database), startRunner(p, database), startRunner(p, database)])
  const holders = await ClusterTesting.settled(
    database,
    nodes.map((n) => n.runner),
    SHARDS,
    defaultTiming.lockRefreshMs
  )
  /** The runner holding the shard that `id` (a session's, a singleton's name) falls on. */
  const holderOf = (id: string) => holders.get(ClusterTesting.lockOfShard(ClusterTesting.shardOf(id, SHARDS)))
  return Object.assign(nodes, { holderOf })
}

/** Polls `look` (a request) until it gives a value: for state another process changes. */
const until = async <A>(what: string, look: () => Promise<A | undefined>, ms = 30_000): Promise<A> => {
  const deadline = Date.now() + ms
  for (;;) {
    const found = await look()
    if (found !== undefined) return found
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(50)
  }
}

const gateCommand = "while [ ! -e gate ]; do sleep 0.1; done"
/** The model's turn in the failover tests: a first command (its mark in `marker`), the one held at the gate, then `answer`. */
const twoCommands = (answer: string) => [
  { toolCalls: [{ name: "bash", arguments: { command: "echo STEP-ONE >> marker" } }] },
  { toolCalls: [{ name: "bash", arguments: { command: gateCommand } }] },
  { text: answer }
]

const pgScript = path.join(import.meta.dir, "..", "..", "..", "scripts", "pg-test.sh")
/** A PostgreSQL server of the test's own (scripts/pg-test.sh on a free port), to restart or stop. */
const privatePostgres = async () => {
  const env = { ...process.env, PGPORT: String(ClusterTesting.freePort()) }
  const pg = (command: string) => {
    const done = Bun.spawnSync(["bash", pgScript, command], { env, stdout: "pipe", stderr: "pipe" })
    if (done.exitCode !== 0) throw new Error(`pg-test.sh ${command}: ${done.stderr.toString()}`)
    return done.stdout.toString()
  }
  const url = /REINS_TEST_PG_URL=(\S+)/.exec(pg("start"))![1]!
  return { url, restart: () => void pg("restart"), stop: () => void pg("stop") }
}

describe.skipIf(pgUrl === undefined)("reins serve --runner: one cluster of servers", () => {
  test("any node serves any session: an abort, a permission answer and a queued message through non-owners; the owner killed -9 mid-command, another runner resumes; a client of a third node sees every event once and turn.finished", async () => {
    const db = await freshDatabase()
    const p = await setup(
      [
        // the first session's turn, aborted
        { toolCalls: [{ name: "bash", arguments: { command: gateCommand } }] },
        // the second's
        ...twoCommands("resumed on another runner")
      ],
      { permission: { bash: { "*": "allow", "echo *": "ask" } } }
    )
    // the same project path on every runner (one machine: the shared-volume deployment)
    const nodes = await startCluster(p, db.url)
    const byRunner = (runner: string) => nodes.find((n) => n.runner === runner)!

    // an abort through a node that does not own the session stops the turn on its owner; the caller waiting on another node gets 409
    const aborted = (await api(nodes[0]!.url, "POST", "/session", {})).body.id as string
    const caller = api(nodes[0]!.url, "POST", `/session/${aborted}/message`, { text: "wait for the gate" })
    const abortedOwner = await until("the turn to run on its owner", async () => {
      const found = (await api(nodes[0]!.url, "GET", `/session/${aborted}`)).body.runner as string | undefined
      const messages = (await api(nodes[0]!.url, "GET", `/session/${aborted}/message`)).body as Array<any>
      const running = messages.flatMap((m) => m.parts).some((part: any) => part.type === "tool" && part.state.status === "running")
      return running ? found : undefined
    })
    const aborter = nodes.find((n) => n.runner !== abortedOwner && n !== nodes[0]) ?? nodes.find((n) => n.runner !== abortedOwner)!
    expect((await api(aborter.url, "POST", `/session/${aborted}/abort`)).body).toEqual({ aborted: true })
    const answered = await caller
    expect(answered.status).toBe(409)
    expect(answered.body.message).toContain("aborted")
    const abortedParts = (await api(aborter.url, "GET", `/session/${aborted}/message`)).body as Array<any>
    expect(
      abortedParts
        .flatMap((m) => m.parts)
        .filter((part: any) => part.type === "tool")
        .map((part: any) => part.state.status)
    ).toEqual(["error"])
    expect(p.server.requests).toHaveLength(1)
    expect((await api(aborter.url, "GET", `/session/${aborted}`)).body.runner).toBeUndefined()

    const created = await api(nodes[0]!.url, "POST", "/session", {})
    expect(created.status).toBe(201)
    const sessionID = created.body.id as string

    // the prompt through one node; its owner may be any runner
    const posted = await api(nodes[1]!.url, "POST", `/session/${sessionID}/prompt_async`, { text: "run the two commands" })
    expect(posted.status).toBe(202)
    const question = await until("the permission question", async () => {
      for (const node of nodes) {
        const asked = await api(node.url, "GET", `/session/${sessionID}/permissions`)
        if (asked.status === 200 && asked.body.length > 0) return asked.body[0] as { id: string }
      }
      return undefined
    })
    const ownerAddress = (await api(nodes[2]!.url, "GET", `/session/${sessionID}`)).body.runner as string
    expect(nodes.map((n) => n.runner)).toContain(ownerAddress)
    const owner = byRunner(ownerAddress)
    const others = nodes.filter((n) => n !== owner) as [Served & { runner: string }, Served & { runner: string }]
    // every node names the owner
    for (const node of nodes) expect((await api(node.url, "GET", `/session/${sessionID}`)).body.runner).toBe(ownerAddress)

    // a client following the session on a node that is not the owner, from the first event on
    const follower = await openEvents(others[1].url, { headers: { "last-event-id": "0" }, query: `?sessionID=${sessionID}` })
    // the question answered through a node that did not ask it
    expect((await api(others[0].url, "POST", `/session/${sessionID}/permissions/${question.id}`, { response: "once" })).status).toBe(200)
    // the second command runs on the owner: a message queued into that turn through another node
    await follower.waitFor((f) => f.event === "part.updated" && f.data.part?.state?.status === "running" && f.data.part.state.input?.command === gateCommand)
    const queued = await api(others[0].url, "POST", `/session/${sessionID}/message`, { text: "and mind the queue" })
    expect(queued.status).toBe(202)
    expect(queued.body).toMatchObject({ queued: true, messageID: expect.stringMatching(/^msg_/) })

    owner.child.kill("SIGKILL")
    await owner.exited
    const finished = await follower.waitFor((f) => f.event === "turn.finished", 45_000)
    expect(finished.data.result.text).toBe("resumed on another runner")
    await follower.close()

    // the first step ran once; the command cut off was closed as interrupted, and the model told so with the queued message
    expect(fs.readFileSync(path.join(p.cwd, "marker"), "utf8")).toBe("STEP-ONE\n")
    expect(p.server.requests).toHaveLength(4)
    const last = JSON.stringify(p.server.requests[3]!.body.messages)
    expect(last).toContain("STEP-ONE")
    expect(last).toContain("and mind the queue")
    const messages = (await api(others[0].url, "GET", `/session/${sessionID}/message`)).body as Array<any>
    const tools = messages.flatMap((m) => m.parts).filter((part: any) => part.type === "tool")
    expect(tools.map((part: any) => part.state.status)).toEqual(["completed", "error"])

    // what the follower saw, once each and in order, is the log as any node replays it
    const live = follower.frames.filter((f): f is SseFrame & { id: number } => f.id !== undefined)
    const ids = live.map((f) => f.id)
    expect(new Set(ids).size).toBe(ids.length)
    expect(ids).toEqual([...ids].sort((a, b) => a - b))
    const replay = await openEvents(others[0].url, { headers: { "last-event-id": "0" }, query: `?sessionID=${sessionID}` })
    await replay.waitFor((f) => f.event === "turn.finished")
    await replay.close()
    const replayed = replay.frames.filter((f) => f.id !== undefined)
    expect(live.map((f) => `${f.id} ${f.event}`)).toEqual(replayed.slice(0, live.length).map((f) => `${f.id} ${f.event}`))
    // no runner named any more: the turn ended
    expect((await api(others[0].url, "GET", `/session/${sessionID}`)).body.runner).toBeUndefined()
  }, 90_000)

  test("the owner stopped (SIGTERM) mid-command: it leaves the cluster and exits 0, the turn's prompt goes to another runner, which resumes it", async () => {
    const db = await freshDatabase()
    const p = await setup(twoCommands("resumed after the hand-off"), { permission: { bash: "allow" } })
    const nodes = await startCluster(p, db.url)
    const sessionID = (await api(nodes[0]!.url, "POST", "/session", {})).body.id as string
    expect((await api(nodes[0]!.url, "POST", `/session/${sessionID}/prompt_async`, { text: "run the two commands" })).status).toBe(202)
    const ownerAddress = await until("the second command to run on the owner", async () => {
      const messages = (await api(nodes[0]!.url, "GET", `/session/${sessionID}/message`)).body as Array<any>
      const running = messages
        .flatMap((m) => m.parts)
        .some((part: any) => part.type === "tool" && part.state.status === "running" && part.state.input.command === gateCommand)
      return running ? ((await api(nodes[0]!.url, "GET", `/session/${sessionID}`)).body.runner as string | undefined) : undefined
    })
    const owner = nodes.find((n) => n.runner === ownerAddress)!
    const other = nodes.find((n) => n !== owner)!
    const follower = await openEvents(other.url, { headers: { "last-event-id": "0" }, query: `?sessionID=${sessionID}` })
    owner.child.kill("SIGTERM")
    expect((await owner.exited).code).toBe(0)
    const finished = await follower.waitFor((f) => f.event === "turn.finished", 45_000)
    await follower.close()
    expect(finished.data.result.text).toBe("resumed after the hand-off")
    // no turn.failed told for the hand-off: the turn went on elsewhere
    expect(follower.frames.some((f) => f.event === "turn.failed")).toBe(false)
    expect(fs.readFileSync(path.join(p.cwd, "marker"), "utf8")).toBe("STEP-ONE\n")
    expect(p.server.requests).toHaveLength(3)
    const messages = (await api(other.url, "GET", `/session/${sessionID}/message`)).body as Array<any>
    expect(
      messages
        .flatMap((m) => m.parts)
        .filter((part: any) => part.type === "tool")
        .map((part: any) => part.state.status)
    ).toEqual(["completed", "error"])
  }, 90_000)

  test("the owner frozen (SIGSTOP): its watchdog kills its command before the session moves, another runner resumes the turn, and the frozen runner, woken, writes nothing", async () => {
    const db = await freshDatabase()
    const m = marker()
    const p = await setup([{ toolCalls: [{ name: "bash", arguments: { command: `sleep ${m}` } }] }, { text: "resumed after the freeze" }], {
      permission: { bash: "allow" }
    })
    const nodes = await startCluster(p, db.url)
    const sessionID = (await api(nodes[0]!.url, "POST", "/session", {})).body.id as string
    expect((await api(nodes[0]!.url, "POST", `/session/${sessionID}/prompt_async`, { text: "sleep" })).status).toBe(202)
    await until("the command to run", async () => (sleeping(m) === 1 ? true : undefined))
    const ownerAddress = (await api(nodes[0]!.url, "GET", `/session/${sessionID}`)).body.runner as string
    const owner = nodes.find((n) => n.runner === ownerAddress)!
    const other = nodes.find((n) => n !== owner)!
    const follower = await openEvents(other.url, { headers: { "last-event-id": "0" }, query: `?sessionID=${sessionID}` })
    try {
      owner.child.kill("SIGSTOP")
      // the watchdog: the command is gone before any other runner resumed the turn (the model not asked again)
      await until("the frozen runner's command to be killed", async () => (sleeping(m) === 0 ? true : undefined))
      expect(p.server.requests).toHaveLength(1)
      const finished = await follower.waitFor((f) => f.event === "turn.finished", 45_000)
      expect(finished.data.result.text).toBe("resumed after the freeze")
      const before = (await api(other.url, "GET", `/session/${sessionID}/message`)).body
      const tools = (before as Array<any>).flatMap((m) => m.parts).filter((part: any) => part.type === "tool")
      expect(tools.map((part: any) => part.state.status)).toEqual(["error"])
      const logged = follower.frames.filter((f) => f.id !== undefined).length
      // woken, the runner finds its session taken over and lets it go (its hold ends after every write it tried): it wrote nothing
      owner.child.kill("SIGCONT")
      await until("the woken runner to let the session go", async () => {
        const seen = await api(owner.url, "GET", `/session/${sessionID}`)
        return seen.status === 200 && seen.body.runner === undefined ? true : undefined
      })
      expect((await api(other.url, "GET", `/session/${sessionID}/message`)).body).toEqual(before)
      const replay = await openEvents(other.url, { headers: { "last-event-id": "0" }, query: `?sessionID=${sessionID}` })
      await replay.waitFor((f) => f.event === "turn.finished")
      await replay.close()
      expect(replay.frames.filter((f) => f.id !== undefined)).toHaveLength(logged)
    } finally {
      owner.child.kill("SIGCONT")
      await follower.close()
      endSleeping(m)
    }
  }, 90_000)

  test("the runner running the health check (a cluster singleton) killed -9 mid-command while it owns the turn: the other runners see it gone (no connection left to the database), another runner resumes the turn", async () => {
    const db = await freshDatabase()
    const p = await setup(twoCommands("resumed without the health check's runner"), { permission: { bash: "allow" } })
    const nodes = await startCluster(p, db.url)
    const checker = nodes.find((n) => n.runner === nodes.holderOf(ClusterTesting.healthCheckSingleton))!
    expect(checker).toBeDefined()
    // a session whose shard the health check's runner holds (a third of them)
    let sessionID: string
    do sessionID = (await api(nodes[0]!.url, "POST", "/session", {})).body.id as string
    while (nodes.holderOf(sessionID) !== checker.runner)
    const other = nodes.find((n) => n !== checker)!
    expect((await api(other.url, "POST", `/session/${sessionID}/prompt_async`, { text: "run the two commands" })).status).toBe(202)
    const follower = await openEvents(other.url, { headers: { "last-event-id": "0" }, query: `?sessionID=${sessionID}` })
    await follower.waitFor((f) => f.event === "part.updated" && f.data.part?.state?.status === "running" && f.data.part.state.input?.command === gateCommand)
    expect((await api(other.url, "GET", `/session/${sessionID}`)).body.runner).toBe(checker.runner)
    checker.child.kill("SIGKILL")
    await checker.exited
    const finished = await follower.waitFor((f) => f.event === "turn.finished", 45_000)
    await follower.close()
    expect(finished.data.result.text).toBe("resumed without the health check's runner")
    expect(fs.readFileSync(path.join(p.cwd, "marker"), "utf8")).toBe("STEP-ONE\n")
    expect(p.server.requests).toHaveLength(3)
    const messages = (await api(other.url, "GET", `/session/${sessionID}/message`)).body as Array<any>
    const tools = messages.flatMap((m) => m.parts).filter((part: any) => part.type === "tool")
    expect(tools.map((part: any) => part.state.status)).toEqual(["completed", "error"])
    const owner = (await api(other.url, "GET", `/session/${sessionID}`)).body.runner
    expect(owner).toBeUndefined()
  }, 90_000)

  test("a sub-agent's session runs on its parent's runner (a session tree is one entity); that runner killed -9 mid sub-agent command, another resumes the parent's turn and the model is told the task was cut off", async () => {
    const db = await freshDatabase()
    const p = await setup(
      [
        { toolCalls: [{ name: "task", arguments: { description: "run it", prompt: "run the command", subagent_type: "general" } }] },
        { toolCalls: [{ name: "bash", arguments: { command: gateCommand } }] },
        { text: "the parent resumed on another runner" },
        { text: "the sub-agent's session answered again" }
      ],
      { permission: { bash: "allow" } }
    )
    const nodes = await startCluster(p, db.url)
    const parent = (await api(nodes[0]!.url, "POST", "/session", {})).body.id as string
    const owner = nodes.find((n) => n.runner === nodes.holderOf(parent))!
    const others = nodes.filter((n) => n !== owner)
    expect((await api(others[0]!.url, "POST", `/session/${parent}/prompt_async`, { text: "delegate" })).status).toBe(202)
    // the session's tree on another node's stream: the sub-agent's events too
    const follower = await openEvents(others[1]!.url, { headers: { "last-event-id": "0" }, query: `?sessionID=${parent}` })
    const running = await follower.waitFor(
      (f) => f.event === "part.updated" && f.data.part?.state?.status === "running" && f.data.part.state.input?.command === gateCommand
    )
    const child = running.data.part.sessionID as string
    expect(child).not.toBe(parent)
    // every node names the parent's runner for both (another shard's runner may hold the child's id: it is not the entity)
    for (const node of nodes) {
      expect((await api(node.url, "GET", `/session/${parent}`)).body.runner).toBe(owner.runner)
      expect((await api(node.url, "GET", `/session/${child}`)).body.runner).toBe(owner.runner)
    }
    owner.child.kill("SIGKILL")
    await owner.exited
    const finished = await follower.waitFor((f) => f.event === "turn.finished", 45_000)
    await follower.close()
    expect(finished.data.result.text).toBe("the parent resumed on another runner")
    expect(p.server.requests).toHaveLength(3)
    // the parent's task call closed as interrupted (the model decides; the sub-agent is not run again blindly)
    const parentTools = ((await api(others[0]!.url, "GET", `/session/${parent}/message`)).body as Array<any>)
      .flatMap((m) => m.parts)
      .filter((part: any) => part.type === "tool")
    expect(parentTools.map((part: any) => [part.tool, part.state.status])).toEqual([["task", "error"]])
    expect(JSON.stringify(p.server.requests[2]!.body.messages)).toContain("interrupted")
    // the dead runner's lease on the sub-agent's session went with the tree's take-over: no node names it
    for (const node of others) expect((await api(node.url, "GET", `/session/${child}`)).body.runner).toBeUndefined()
    // and that session takes a prompt through any node: it runs on the tree's new owner
    const again = await api(others[1]!.url, "POST", `/session/${child}/message`, { text: "once more" })
    expect(again.status).toBe(200)
    expect(again.body.text).toBe("the sub-agent's session answered again")
    for (const node of others) expect((await api(node.url, "GET", `/session/${child}`)).body.runner).toBeUndefined()
  }, 90_000)

  test("PostgreSQL restarted (pg_ctl restart) mid-command: the runners reconnect, the turn finishes on one of them, its first step not run again", async () => {
    // a PostgreSQL server of this test's own, so that its restart cuts off no other test
    const pg = await privatePostgres()
    const p = await setup(twoCommands("finished after the restart"), { permission: { bash: "allow" } })
    try {
      const nodes = await startCluster(p, pg.url)
      const sessionID = (await api(nodes[0]!.url, "POST", "/session", {})).body.id as string
      expect((await api(nodes[1]!.url, "POST", `/session/${sessionID}/prompt_async`, { text: "run the two commands" })).status).toBe(202)
      const follower = await openEvents(nodes[2]!.url, { headers: { "last-event-id": "0" }, query: `?sessionID=${sessionID}` })
      await follower.waitFor((f) => f.event === "part.updated" && f.data.part?.state?.status === "running" && f.data.part.state.input?.command === gateCommand)
      pg.restart()
      fs.writeFileSync(path.join(p.cwd, "gate"), "")
      const finished = await follower.waitFor((f) => f.event === "turn.finished", 45_000)
      await follower.close()
      expect(finished.data.result.text).toBe("finished after the restart")
      expect(fs.readFileSync(path.join(p.cwd, "marker"), "utf8")).toBe("STEP-ONE\n")
      const messages = (await api(nodes[0]!.url, "GET", `/session/${sessionID}/message`)).body as Array<any>
      const tools = messages.flatMap((m) => m.parts).filter((part: any) => part.type === "tool")
      expect(tools.map((part: any) => part.state.status)).toEqual(["completed", "completed"])
      // the runners serve on: the lease is released (after turn.finished is stored; after the restart its release may
      // be retried on a new connection)
      await waitFor(async () => (await api(nodes[2]!.url, "GET", `/session/${sessionID}`)).body.runner === undefined, "the turn's lease to be released")
      const ids = follower.frames.filter((f) => f.id !== undefined).map((f) => f.id)
      expect(new Set(ids).size).toBe(ids.length)
    } finally {
      pg.stop()
    }
  }, 90_000)

  test.skipIf(Bun.which("openssl") === null)(
    "runners over mutual TLS (REINS_CLUSTER_TLS_*): a prompt through the node that does not own the session is run by the owner and answered",
    async () => {
      const db = await freshDatabase()
      const p = await setup([{ text: "answered over TLS" }])
      const certs = ClusterTesting.makeCertificates("cluster").dir
      const env = {
        REINS_CLUSTER_TLS_CERT: path.join(certs, "runner.pem"),
        REINS_CLUSTER_TLS_KEY: path.join(certs, "runner-key.pem"),
        REINS_CLUSTER_TLS_CA: path.join(certs, "ca.pem")
      }
      try {
        const nodes = await Promise.all([startRunner(p, db.url, [], env), startRunner(p, db.url, [], env)])
        const holders = await ClusterTesting.settled(
          db.url,
          nodes.map((n) => n.runner),
          SHARDS,
          defaultTiming.lockRefreshMs
        )
        // a session the second runner owns, prompted through the first
        let sessionID: string
        do sessionID = (await api(nodes[0]!.url, "POST", "/session", {})).body.id as string
        while (holders.get(ClusterTesting.lockOfShard(ClusterTesting.shardOf(sessionID, SHARDS))) !== nodes[1]!.runner)
        const answered = await api(nodes[0]!.url, "POST", `/session/${sessionID}/message`, { text: "hello" })
        expect(answered.status).toBe(200)
        expect(answered.body.text).toBe("answered over TLS")
        // one of the three missing: refused with what to give
        const partial = await reins(["--database", db.url, "serve", "--port", "0", "--runner", "127.0.0.1:1"], {
          ...p,
          env: { ...p.env, REINS_CLUSTER_SECRET: SECRET, REINS_CLUSTER_TLS_CERT: env.REINS_CLUSTER_TLS_CERT }
        })
        expect(partial.code).toBe(2)
        expect(partial.stderr).toContain("REINS_CLUSTER_TLS_KEY, REINS_CLUSTER_TLS_CA are not set")
        const notPem = await reins(["--database", db.url, "serve", "--port", "0", "--runner", "127.0.0.1:1"], {
          ...p,
          env: { ...p.env, REINS_CLUSTER_SECRET: SECRET, ...env, REINS_CLUSTER_TLS_CA: path.join(certs, "ext.cnf") }
        })
        expect(notPem.code).toBe(2)
        expect(notPem.stderr).toContain("is not a PEM file")
      } finally {
        fs.rmSync(certs, { recursive: true, force: true })
      }
    },
    90_000
  )

  test("--runner without a PostgreSQL database, with an address that is not HOST:PORT, or without the cluster's secret (or a short one), is refused with what to give", async () => {
    const p = await setup([])
    const sqlite = await reins(["serve", "--port", "0", "--runner", "127.0.0.1:1"], { ...p, env: { ...p.env, REINS_CLUSTER_SECRET: SECRET } })
    expect(sqlite.code).not.toBe(0)
    expect(sqlite.stderr).toContain("--database postgres://")
    const bad = await reins(["--database", pgUrl!, "serve", "--port", "0", "--runner", "not an address"], {
      ...p,
      env: { ...p.env, REINS_CLUSTER_SECRET: SECRET }
    })
    expect(bad.code).not.toBe(0)
    expect(bad.stderr).toContain("--runner")
    const open = await reins(["--database", pgUrl!, "serve", "--port", "0", "--runner", "127.0.0.1:1"], p)
    expect(open.code).toBe(2)
    expect(open.stderr).toContain("REINS_CLUSTER_SECRET")
    const weak = await reins(["--database", pgUrl!, "serve", "--port", "0", "--runner", "127.0.0.1:1"], {
      ...p,
      env: { ...p.env, REINS_CLUSTER_SECRET: "short" }
    })
    expect(weak.code).not.toBe(0)
    expect(weak.stderr).toContain("at least 16 characters")
  }, 60_000)
})
