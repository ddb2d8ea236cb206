import { visible } from "./Terminal.ts"
/** A count with thousands separators: `14,200` (by hand: the first toLocaleString loads ICU, ~5 ms of every run's end). */
export const count = (n: number): string => {
  const whole = Math.round(n)
  const digits = String(Math.abs(whole)).replace(/\B(?=(\d{3})+(?!\d))/g, ",")
  return whole < 0 ? `-${digits}` : digits
}

/** `1 file`, `2 files`. */
export const plural = (n: number, one: string, many: string): string => `${count(n)} ${n === 1 ? one : many}`

/** A size: `512 B`, `3.4 KiB`, `12.0 MiB`, `1.2 GiB`. */
export const byteSize = (n: number): string => {
  if (n < 1024) return `${n} B`
  const units = ["KiB", "MiB", "GiB"] as const
  let value = n / 1024
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  return `${value.toFixed(1)} ${units[unit]}`
}

/** A token count, short: `830`, `12.4k`, `1.2M`. */
export const tokens = (n: number): string => {
  if (n < 1000) return String(Math.round(n))
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0).replace(/\.0$/, "")}k`
  return `${(n / 1_000_000).toFixed(1).replace(/\.0$/, "")}M`
}

/** A duration: `320ms`, `4.2s`, `2m 05s`, `1h 02m`. */
export const duration = (ms: number): string => {
  const safe = Math.max(0, ms)
  if (safe < 1000) return `${Math.round(safe)}ms`
  if (safe < 60_000) return `${(safe / 1000).toFixed(1)}s`
  const seconds = Math.floor(safe / 1000)
  const pad = (n: number) => String(n).padStart(2, "0")
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m ${pad(seconds % 60)}s`
  return `${Math.floor(seconds / 3600)}h ${pad(Math.floor((seconds % 3600) / 60))}m`
}

/** Elapsed time on a spinner, whole seconds: `0s`, `12s`, `2m 05s`. */
export const elapsed = (ms: number): string => {
  const seconds = Math.floor(Math.max(0, ms) / 1000)
  return seconds < 60 ? `${seconds}s` : duration(seconds * 1000)
}

/** Dollars: `$0.00` for nothing, four decimals under a cent, else two. */
export const cost = (dollars: number): string => {
  if (dollars === 0) return "$0.00"
  if (dollars < 0.01) return `$${dollars.toFixed(4)}`
  return `$${dollars.toFixed(2)}`
}

/** The first line of a text, cut to `max` characters with an ellipsis. */
export const firstLine = (s: string, max = 120, ellipsis = "…"): string => {
  // a command or an error message is shown, never acted on by the terminal
  const line = visible((s.split("\n")[0] ?? "").trimEnd())
  return line.length > max ? `${line.slice(0, Math.max(0, max - ellipsis.length))}${ellipsis}` : line
}
