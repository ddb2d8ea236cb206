import type { Reducer } from "../../Reducer.ts"
import { runs, sniff, toLines } from "../../Text.ts"
import { parse } from "./parse.ts"
import { BUILD_COMMAND, BUILD_SNIFF } from "./patterns.ts"
import { render } from "./render.ts"

/** Whether a line near the head or the tail of the text matches (build errors come last). */
const sniffEnds = (text: string, pattern: RegExp) =>
  sniff(text, pattern, 300) ||
  toLines(text.slice(-16_384))
    .slice(-200)
    .some((line) => pattern.test(line))

/**
 * Compiler and linter output (tsc, eslint, rustc/cargo, gcc/clang/make, go build/vet, javac,
 * mvn): every error and warning with its location and snippet, repeats of one message grouped
 * into a list of locations, summaries kept, compile commands, downloads and progress dropped.
 */
export const buildDiagnostics: Reducer = {
  name: "build_diagnostics",
  matches: (input) => runs(input.command, BUILD_COMMAND) || sniffEnds(input.text, BUILD_SNIFF),
  reduce: (input) => {
    const parsed = parse(toLines(input.text))
    const recognised = parsed.diagnostics > 0 || parsed.noise + parsed.progress > 0
    if (!recognised) return undefined
    const result = render(parsed)
    return result.reasons.length === 0 ? undefined : result
  }
}

/** Build-diagnostic reducers (compilers, linters). */
export const buildReducers: ReadonlyArray<Reducer> = [buildDiagnostics]
