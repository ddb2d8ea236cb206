import { Context } from "effect"
import type { ToolOutputConfig } from "@reins/domain"
import type { Direction } from "./Cut.ts"

/** Default limits: what the model sees of one tool output. */
export const MAX_LINES = 2_000
export const MAX_BYTES = 51_200
export const RETENTION_DAYS = 7
/** A streamed output's spill file keeps at most this much (its start and its end): 256 MiB. */
export const SPILL_MAX_BYTES = 256 * 1024 * 1024

/** One tool's overrides; unset fields fall back to the global settings. */
export interface ToolLimits {
  readonly maxLines?: number
  readonly maxBytes?: number
  readonly direction?: Direction
  readonly reducers?: boolean
}

export interface OutputSettings {
  readonly maxLines: number
  readonly maxBytes: number
  /** Whether reducers compact known outputs before truncation. */
  readonly reducers: boolean
  /** Spill files older than this are deleted. */
  readonly retentionDays: number
  /** The cap of one streamed output's spill file. */
  readonly spillMaxBytes: number
  readonly tools: Readonly<Record<string, ToolLimits>>
}

export const defaultSettings: OutputSettings = {
  maxLines: MAX_LINES,
  maxBytes: MAX_BYTES,
  reducers: true,
  retentionDays: RETENTION_DAYS,
  spillMaxBytes: SPILL_MAX_BYTES,
  tools: {}
}

/** Output settings for the runtime; defaults as SPEC T15. */
export const TruncateSettings = Context.Reference<OutputSettings>("reins/truncate/Settings", {
  defaultValue: () => defaultSettings
})

/** Settings from the `tool_output` section of `reins.json`. */
export const settingsFromConfig = (config: ToolOutputConfig | undefined): OutputSettings => ({
  maxLines: config?.max_lines ?? MAX_LINES,
  maxBytes: config?.max_bytes ?? MAX_BYTES,
  reducers: config?.reducers ?? true,
  retentionDays: config?.retention_days ?? RETENTION_DAYS,
  spillMaxBytes: config?.spill_max_bytes ?? SPILL_MAX_BYTES,
  tools: Object.fromEntries(
    Object.entries(config?.tools ?? {}).map(([tool, t]) => [
      tool,
      {
        ...(t.max_lines !== undefined ? { maxLines: t.max_lines } : {}),
        ...(t.max_bytes !== undefined ? { maxBytes: t.max_bytes } : {}),
        ...(t.direction !== undefined ? { direction: t.direction } : {}),
        ...(t.reducers !== undefined ? { reducers: t.reducers } : {})
      }
    ])
  )
})

/**
 * The limits one call works with: per-call limits over per-tool config over global config; a
 * direction set for the tool in config wins over the tool's own (given as `call.direction`).
 */
export const limitsFor = (
  settings: OutputSettings,
  tool: string,
  call: { readonly maxLines?: number | undefined; readonly maxBytes?: number | undefined; readonly direction?: Direction | undefined } = {}
) => {
  const own = settings.tools[tool] ?? {}
  return {
    maxLines: call.maxLines ?? own.maxLines ?? settings.maxLines,
    maxBytes: call.maxBytes ?? own.maxBytes ?? settings.maxBytes,
    direction: own.direction ?? call.direction ?? ("head" as Direction),
    reducers: own.reducers ?? settings.reducers
  }
}
