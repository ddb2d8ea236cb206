import { Effect } from "effect"
import type { ScanOptions, ScanRequest } from "./ScanState.ts"

export type { ScanOptions, ScanRequest } from "./ScanState.ts"

/**
 * T18: every permission a shell command needs (the scan is BashScan.ts). The scanner's modules load
 * with the parser, on the first command scanned: a run that scans none never loads them. If either
 * cannot load, the whole command is one opaque request (asked, never silently allowed).
 */
export const scanBash = (source: string, options: ScanOptions): Effect.Effect<ReadonlyArray<ScanRequest>> =>
  Effect.tryPromise({
    try: () => import("./BashScan.ts"),
    catch: (e) => `the bash scanner could not be loaded (${e instanceof Error ? e.message : String(e)})`
  }).pipe(
    Effect.flatMap((scanner) => scanner.scanBash(source, options)),
    Effect.catch((reason) => Effect.succeed([{ permission: "bash" as const, patterns: [source], always: [source], opaque: reason }]))
  )
