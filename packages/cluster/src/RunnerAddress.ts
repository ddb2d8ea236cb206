import { Result } from "effect"
import { RunnerAddress } from "effect/cluster/RunnerAddress"
import { isIP } from "node:net"

const HINT =
  "Write it as HOST:PORT, the address the other runners reach this one at (for example 10.0.0.5:7101, runner-1.internal:7101, or [::1]:7101 for IPv6)."
/** The runners' table stores HOST:PORT in 255 characters; a longer one would never register (and say so only in a debug log). */
const MAX_HOST = 253

/** A DNS name: labels of letters, digits, `-` and `_` (Docker's names), none starting or ending with `-`, an optional final dot. */
const isHostName = (host: string) => {
  const labels = (host.endsWith(".") ? host.slice(0, -1) : host).split(".")
  if (labels.every((label) => /^\d+$/.test(label))) return false // 1.2.3, 123: read as (bad) IPv4 by resolvers
  return labels.every((label) => /^[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?$/.test(label))
}

/**
 * Reads a runner's address as the user writes it (`--runner HOST:PORT`, config `runner`): a host name, an IPv4
 * address, or an IPv6 address in brackets (`[::1]:7101`), and a port from 1 to 65535. The address others connect to
 * cannot be an unspecified one (0.0.0.0, ::): that is where to listen, not where to be reached. The failure is a
 * sentence that says what to write.
 */
export const parseRunnerAddress = (text: string): Result.Result<RunnerAddress, string> => {
  const trimmed = text.trim()
  const match = /^\[([^\]]+)\]:(\d{1,5})$/.exec(trimmed) ?? /^([^:[\]\s]+):(\d{1,5})$/.exec(trimmed)
  if (match === null) return Result.fail(`"${text.slice(0, 300)}" is not a runner address. ${HINT}`)
  const [, host, digits] = match as unknown as [string, string, string]
  const port = Number(digits)
  if (port < 1 || port > 65535) return Result.fail(`The port of the runner address "${trimmed}" must be from 1 to 65535. ${HINT}`)
  const bracketed = trimmed.startsWith("[")
  const ip = isIP(host)
  if (bracketed ? ip !== 6 : ip === 6)
    return Result.fail(`"${trimmed}" is not a runner address: an IPv6 address goes in brackets, and only an IPv6 address. ${HINT}`)
  if (ip === 0 && (host.length > MAX_HOST || !isHostName(host))) return Result.fail(`"${host.slice(0, 300)}" is not a host name. ${HINT}`)
  if (host === "0.0.0.0" || /^[0:]+$/.test(host))
    return Result.fail(
      `${trimmed} is an unspecified address: the other runners cannot connect to it. Give this machine's address on the runners' network. ${HINT}`
    )
  return Result.succeed(RunnerAddress.make({ host, port }))
}

/** `HOST:PORT` again (brackets around an IPv6 host), as `GET /session/{id}` names the runner that owns a session. */
export const formatRunnerAddress = (address: RunnerAddress): string =>
  address.host.includes(":") ? `[${address.host}]:${address.port}` : `${address.host}:${address.port}`
