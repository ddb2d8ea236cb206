// What servers send, as the tools read it: LSP diagnostics (0-based positions) and tsserver's own (1-based).
import type { Problem } from "@reins/tool"

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)
const severities = [1, 2, 3, 4] as const

const severityOf = (value: unknown): Problem["severity"] => severities.find((s) => s === value) ?? 1

/** `TS2322` for TypeScript's numbers (what people search for), a server's own codes as they are. */
const codeOf = (code: unknown, source: unknown) => {
  if (typeof code !== "number" && typeof code !== "string") return undefined
  return typeof code === "number" && (source === "typescript" || source === "ts" || source === undefined) ? `TS${code}` : String(code)
}

/** The problems of an LSP `Diagnostic[]` (publishDiagnostics, a pull's items); malformed entries skipped. */
export const fromLsp = (diagnostics: unknown): ReadonlyArray<Problem> => {
  if (!Array.isArray(diagnostics)) return []
  return diagnostics.flatMap((d): ReadonlyArray<Problem> => {
    if (!isRecord(d) || typeof d.message !== "string" || !isRecord(d.range) || !isRecord(d.range.start)) return []
    const { line, character } = d.range.start
    if (typeof line !== "number" || typeof character !== "number") return []
    const code = codeOf(d.code, d.source)
    return [{ line: line + 1, column: character + 1, severity: severityOf(d.severity), ...(code !== undefined ? { code } : {}), message: d.message }]
  })
}

const tsSeverity: Record<string, Problem["severity"]> = { error: 1, warning: 2, suggestion: 4, message: 3 }

/** The problems of tsserver's `syntacticDiagnosticsSync`/`semanticDiagnosticsSync` body (1-based line and offset). */
export const fromTsserver = (body: unknown): ReadonlyArray<Problem> => {
  if (!Array.isArray(body)) return []
  return body.flatMap((d): ReadonlyArray<Problem> => {
    if (!isRecord(d) || typeof d.text !== "string" || !isRecord(d.start)) return []
    const { line, offset } = d.start
    if (typeof line !== "number" || typeof offset !== "number") return []
    const code = typeof d.code === "number" ? `TS${d.code}` : undefined
    return [
      {
        line,
        column: offset,
        severity: tsSeverity[typeof d.category === "string" ? d.category : "error"] ?? 1,
        ...(code !== undefined ? { code } : {}),
        message: d.text
      }
    ]
  })
}
