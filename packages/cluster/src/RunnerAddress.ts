import { Option, Result } from "effect"
import { RunnerAddress } from "effect/cluster/RunnerAddress"

/**
 * Reads a runner's address as the user writes it (`--runner HOST:PORT`, config `runner`): a host name or an IPv4
 * address, or an IPv6 address in brackets (`[::1]:7101`), and a port from 1 to 65535. The failure is a sentence that
 * says what to write.
 */
export const parseRunnerAddress = (text: string): Result.Result<RunnerAddress, string> => {
  const trimmed = text.trim()
  const bracketed = /^\[([0-9A-Fa-f:.]+)\]:(\d+)$/.exec(trimmed)
  const plain = /^([A-Za-z0-9.-]+):(\d+)$/.exec(trimmed)
  const match = bracketed ?? plain
  const hint = `Write it as HOST:PORT, the address the other runners reach this one at (for example 10.0.0.5:7101, or [::1]:7101 for IPv6).`
  if (match === null) return Result.fail(`"${text}" is not a runner address. ${hint}`)
  const port = Number(match[2])
  if (!Number.isInteger(port) || port < 1 || port > 65535) return Result.fail(`The port of the runner address "${text}" must be from 1 to 65535. ${hint}`)
  const host = match[1]!
  if (host.startsWith(".") || host.endsWith(".") || host.startsWith("-")) return Result.fail(`"${host}" is not a host name. ${hint}`)
  return Result.succeed(RunnerAddress.make({ host, port }))
}

/** `HOST:PORT` again (brackets around an IPv6 host), as `GET /session/{id}` names the runner that owns a session. */
export const formatRunnerAddress = (address: RunnerAddress): string =>
  address.host.includes(":") ? `[${address.host}]:${address.port}` : `${address.host}:${address.port}`

/** The address in the form `ShardingConfig` takes it: an `Option` of a real `RunnerAddress` (a plain object hangs every call). */
export const configAddress = (address: RunnerAddress): Option.Option<RunnerAddress> => Option.some(address)
