// What code outside reins hands back (plugin answers, tool exports, model arguments) is checked with these.

/** A plain object (not null, not an array). */
export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)
