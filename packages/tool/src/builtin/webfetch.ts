// `webfetch` (issue 30, item 3): a URL's content as Markdown, text or HTML. Every URL it requests — the one
// given and each redirect's — is judged first: permission `webfetch` on the normalized URL, then the OS
// sandbox's network policy when one is on (asked as `sandbox` `network <host>`, as bash asks), and only then
// is the host looked up. A loopback or private address (an IP literal, `localhost`, or a name that resolves
// there) is never allowed by a broad rule: only a rule naming that URL's host, or a person, allows it. The
// connection goes to the address that was checked.
import { Clock, Effect, Option, Schema } from "effect"
import { Permission, check, type PermissionError, type Rule } from "@reins/permission"
import { escalationPatterns, isPrivateAddress, Sandbox } from "@reins/sandbox"
import { define, render, ToolError, type PermissionNeed } from "../Tool.ts"
import { htmlToMarkdown, htmlToText } from "./HtmlConvert.ts"
import { type Exchange, exchange, formatBytes, resolveTarget, WebFetchSettings } from "./WebRequest.ts"
import { alwaysPattern, parseTarget, type WebTarget } from "./WebUrl.ts"
import template from "./webfetch.txt" with { type: "text" }

const DEFAULT_TIMEOUT_S = 30
const MAX_TIMEOUT_S = 120

const Format = Schema.Literals(["markdown", "text", "html"])
type Format = typeof Format.Type

const Parameters = Schema.Struct({
  // no descriptions: the tool's says it all (every request carries these)
  url: Schema.String,
  format: Schema.optionalKey(Format),
  timeout: Schema.optionalKey(Schema.Finite)
})

const ACCEPT: Record<Format, string> = {
  markdown: "text/markdown;q=1.0, text/x-markdown;q=0.9, text/plain;q=0.8, text/html;q=0.7, */*;q=0.1",
  text: "text/plain;q=1.0, text/markdown;q=0.9, text/html;q=0.8, */*;q=0.1",
  html: "text/html;q=1.0, application/xhtml+xml;q=0.9, text/plain;q=0.8, */*;q=0.1"
}

const failed = (message: string) => new ToolError({ reason: "failed", message })

type SandboxService = Sandbox["Service"]

/** Why a private destination is refused unless a rule in the config names its host. */
const privateWhy = (target: WebTarget, address?: string) =>
  `${target.host}${address !== undefined && address !== target.host ? ` resolves to ${address}, which is` : " is"} a loopback or private address (this machine or its network)`

/** A pattern whose scheme and host are written out (the port may be a wildcard): `http://127.0.0.1:*`, `http://[::1]:8080/*`. */
const namesHost = (pattern: string) => {
  const origin = /^([a-z][a-z0-9+.-]*):\/\/(\[[^\]/]*\]|[^/:]*)/i.exec(pattern)
  return origin !== null && origin[2] !== "" && !/[*?]/.test(origin[1]!) && !/[*?]/.test(origin[2]!)
}

/**
 * A private destination is fetched only when the config's `webfetch` rules allow it with a rule naming its host:
 * never by a wildcard host (`*`, `http://*`), an "always" answer to the question about its name, `--yolo` or the
 * non-interactive policy (a prompt-injected model must not reach the cloud's metadata service unattended).
 */
const privateAllowed = (rules: ReadonlyArray<Rule>, target: WebTarget) =>
  check(
    rules.filter((r) => r.permission === "webfetch" && (r.action !== "allow" || namesHost(r.pattern))),
    { permission: "webfetch", patterns: [target.subject] }
  ).action === "allow"

/** What fetching `target` needs: `webfetch` on its URL, and the network beyond the sandbox's policy when that lacks the host. */
export const needsFor = (target: WebTarget, sandbox: Option.Option<SandboxService>): Array<PermissionNeed> => {
  const fetch: PermissionNeed = {
    permission: "webfetch",
    patterns: [target.subject],
    always: [alwaysPattern(target)],
    title: `Fetch ${target.subject}`
  }
  const escalation = Option.isSome(sandbox) ? sandbox.value.escalation({ network: { hosts: [target.host] } }) : undefined
  if (escalation === undefined) return [fetch]
  const { patterns, always } = escalationPatterns(escalation)
  return [fetch, { permission: "sandbox", patterns, always, title: `Let webfetch reach ${target.host}, which the sandbox's network policy does not` }]
}

/** What a status says to the model, with the start of what the server wrote. */
const statusFailure = (target: WebTarget, response: Exchange, excerpt: string) => {
  const s = response.status
  const hint =
    s === 404 || s === 410
      ? "The page does not exist: check the URL."
      : s === 401 || s === 403
        ? "The site refuses this request (it may need a login, or refuse automated clients)."
        : s === 429
          ? "The site is rate limiting: wait before trying again, or use another source."
          : s >= 500
            ? "The server failed: try again later."
            : ""
  const body = excerpt === "" ? "" : `\nThe response began: ${excerpt}`
  return failed(`${target.subject} answered HTTP ${s}${response.statusText ? ` ${response.statusText}` : ""}. ${hint}${body}`.replace(/ \n/, "\n"))
}

const mimeOf = (contentType: string | undefined) => contentType?.split(";")[0]?.trim().toLowerCase() ?? ""
const isHtml = (mime: string) => mime === "text/html" || mime === "application/xhtml+xml"
const TEXT_APPLICATIONS =
  /^application\/(json|xml|javascript|ecmascript|x-javascript|x-yaml|yaml|toml|x-toml|sql|graphql|x-sh|x-ndjson|ndjson|rss\+xml|atom\+xml|markdown|x-www-form-urlencoded)$/
const isTextual = (mime: string) => mime.startsWith("text/") || TEXT_APPLICATIONS.test(mime) || /\+(json|xml)$/.test(mime)

/** Whether bytes with no content type read as text: no NUL, valid UTF-8 in the first 8 KiB. */
const looksLikeText = (body: Uint8Array) => {
  const head = body.subarray(0, 8192)
  if (head.includes(0)) return false
  return new TextDecoder("utf-8", { fatal: false }).decode(head).includes("\uFFFD") === false
}

const decoderFor = (contentType: string | undefined) => {
  const label = /charset\s*=\s*"?([\w.:-]+)/i.exec(contentType ?? "")?.[1]
  try {
    return new TextDecoder((label ?? "utf-8") as ConstructorParameters<typeof TextDecoder>[0])
  } catch {
    // an unknown charset: UTF-8, the web's default, is the best guess
    return new TextDecoder("utf-8")
  }
}

/** The body as the model reads it in `format`. */
const present = (response: Exchange, format: Format, html: boolean) => {
  const text = decoderFor(response.contentType).decode(response.body)
  if (!html || format === "html") return Effect.succeed(text)
  return format === "markdown" ? htmlToMarkdown(text) : htmlToText(text)
}

/** The first few hundred characters of an error page, as text. */
const excerptOf = (response: Exchange) =>
  Effect.map(present(response, "text", isHtml(mimeOf(response.contentType))), (text) => {
    const flat = text.replace(/\s+/g, " ").trim()
    return flat.length > 300 ? `${flat.slice(0, 300)}…` : flat
  })

/** `webfetch`: a URL's content as Markdown (default), text or HTML. */
export const webfetch = define("webfetch", {
  description: render(template, { maxMiB: 5, defaultTimeout: DEFAULT_TIMEOUT_S, maxTimeout: MAX_TIMEOUT_S }),
  parameters: Parameters,
  reduce: false,
  permissions: (args) =>
    Effect.gen(function* () {
      const target = parseTarget(args.url)
      // a URL that cannot be fetched asks nothing: execute says why
      if (typeof target === "string") return []
      return needsFor(target, yield* Effect.serviceOption(Sandbox))
    }),
  execute: (args, ctx) =>
    Effect.gen(function* () {
      const first = parseTarget(args.url)
      if (typeof first === "string") return yield* failed(first)
      const settings = yield* WebFetchSettings
      const permission = yield* Permission
      const sandbox = yield* Effect.serviceOption(Sandbox)
      const format = args.format ?? "markdown"
      const timeoutMs = Math.min(args.timeout === undefined || args.timeout <= 0 ? settings.defaultTimeoutMs : args.timeout * 1000, settings.maxTimeoutMs)
      const authorize = (needs: ReadonlyArray<PermissionNeed>, context: string) =>
        permission
          .authorize(needs.map((need) => ({ ...need, sessionID: ctx.sessionID, callID: ctx.callID })))
          .pipe(Effect.mapError((e: PermissionError) => new ToolError({ reason: "permission", message: `${context}${e.message}` })))

      // the time limit counts the network only, not a person answering a redirect's question
      let spent = 0
      const timed = <A>(network: Effect.Effect<A, ToolError>) =>
        Effect.gen(function* () {
          const start = yield* Clock.currentTimeMillis
          const left = Math.max(0, timeoutMs - spent)
          const result = yield* network.pipe(
            Effect.timeoutOrElse({
              duration: left,
              orElse: () =>
                Effect.fail(
                  new ToolError({
                    reason: "timeout",
                    message: `${args.url} did not answer within ${Math.round(timeoutMs / 100) / 10} s: the fetch was stopped. Try again with a longer timeout (at most ${settings.maxTimeoutMs / 1000} s) or another URL.`
                  })
                )
            }),
            Effect.ensuring(Effect.map(Clock.currentTimeMillis, (now) => void (spent += now - start)))
          )
          return result
        })

      let target = first
      const redirects: Array<string> = []
      let response: Exchange
      for (;;) {
        const current = target
        const refused = (address: string) =>
          new ToolError({
            reason: "permission",
            message: `${current.subject} was not fetched: ${privateWhy(current, address)}. webfetch reaches such an address only with a rule in reins.json naming its host, e.g. {"permission": {"webfetch": {"${current.url.protocol}//${current.url.host}/*": "allow"}}}.`
          })
        // an address of this machine or its network, written or resolved, only by a rule naming it (before any lookup when written)
        if (current.privateHost && !privateAllowed(permission.rules, current)) return yield* refused(current.host)
        const addresses = yield* timed(resolveTarget(current, settings.resolve))
        const inner = current.privateHost ? undefined : addresses.find((a) => isPrivateAddress(a.address))?.address
        if (inner !== undefined && !privateAllowed(permission.rules, current)) return yield* refused(inner)
        response = yield* timed(exchange(current, addresses[0]!, { accept: ACCEPT[format], maxBytes: settings.maxBytes }))
        if (response.status < 300 || response.status >= 400 || response.location === undefined) break
        if (redirects.length >= settings.maxRedirects)
          return yield* failed(`${args.url} redirected more than ${settings.maxRedirects} times (last to ${response.location}): not followed further.`)
        const next = parseTarget(response.location, current.url)
        if (typeof next === "string") return yield* failed(`${current.subject} redirected to ${response.location}, which is not followed: ${next}`)
        // each hop is judged as a URL the model gave: a redirect reaches no host the rules or the sandbox would not
        yield* authorize(needsFor(next, sandbox), `${current.subject} redirected to ${next.subject}, which was not fetched. `)
        redirects.push(next.subject)
        target = next
      }

      const final = target
      const mime = mimeOf(response.contentType)
      if (response.status >= 300) return yield* statusFailure(final, response, yield* excerptOf(response))
      const html = isHtml(mime) || (mime === "" && /<html[\s>]/i.test(new TextDecoder().decode(response.body.subarray(0, 2048))))
      if (!html && !(mime === "" ? looksLikeText(response.body) : isTextual(mime)))
        return yield* failed(
          `${final.subject} is ${mime || "binary data"} (${formatBytes(response.body.length)}), not text: webfetch returns text, HTML, JSON and the like only. Its content was not read.`
        )
      const body = yield* present(response, format, html)
      const note = redirects.length > 0 ? `(redirected to ${final.subject})\n\n` : ""
      return {
        title: `${final.subject} (${mime || "text"}, ${formatBytes(response.body.length)})`,
        output: `${note}${body.trim() === "" ? "(the page has no text)" : body}`,
        metadata: { url: first.subject, finalUrl: final.subject, status: response.status, contentType: mime, bytes: response.body.length, redirects }
      }
    })
})
