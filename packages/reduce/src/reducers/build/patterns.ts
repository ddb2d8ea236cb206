/**
 * Line patterns for compiler and linter output: diagnostics (with their location), summaries that
 * are always kept, and noise that is dropped. All patterns are anchored and linear.
 */

/** Commands whose output this reducer understands, e.g. `cd app && npx tsc --noEmit 2>&1`. */
export const BUILD_COMMAND =
  /(?:tsc|vue-tsc|eslint|cargo\s+(?:\+\S+\s+)?(?:build|b|check|c|clippy|run|r|rustc|doc|install)|rustc|g?make|ninja|cmake\s+--build|gcc|g\+\+|clang\+\+|clang|cc|c\+\+|go\s+(?:build|vet|install|run)|javac|mvnw?|\.\/mvnw|gradlew?|\.\/gradlew|(?:npm|pnpm|yarn|bun)\s+(?:run\s+)?(?:build|lint|typecheck|type-check|tsc|compile|check))(?=\s|$|[;&|)])/

/** Lines that tell compiler or linter output apart from anything else (tried on the head and tail). */
export const BUILD_SNIFF = new RegExp(
  [
    /^\S.*\(\d+,\d+\): (?:error|warning) TS\d+: /,
    /^\S.*:\d+:\d+ - (?:error|warning) TS\d+: /,
    /^\s*--> \S.*:\d+:\d+$/,
    /^\S.*:\d+:(?:\d+:)? (?:fatal error|error|warning): /,
    /^\s+\d+:\d+\s+(?:error|warning)\s{2}/,
    /^\s*✖ \d+ problems? \(/,
    /^\[(?:ERROR|WARNING)\] \S.*:\[\d+,\d+\] /,
    /^\[INFO\] (?:BUILD (?:SUCCESS|FAILURE)|Scanning for projects)/,
    /^\s{0,12}(?:Compiling|Checking) \S+ v\d/,
    /^g?make(?:\[\d+\])?: /,
    /^go: downloading /,
    /^\S+\.go:\d+(?::\d+)?: /,
    /^(?:error: could not compile|\d+ errors?$|Found \d+ errors?)/
  ]
    .map((r) => r.source)
    .join("|")
)

/** One anchored regex from several `^…` ones, so a failing line costs one look at its start. */
const alternation = (parts: ReadonlyArray<RegExp>) => new RegExp(`^(?:${parts.map((r) => `(?:${r.source.replace(/^\^/, "")})`).join("|")})`)

/** Compile commands, dependency downloads, per-crate status lines, directory changes. */
export const NOISE = alternation([
  /^ {0,12}(?:Compiling|Checking|Fresh|Documenting|Downloading|Downloaded|Updating|Locking|Adding|Removing|Blocking|Unpacking|Packaging|Verifying|Archiving|Installing|Replacing|Installed|Running|Dirty|Scraping|Vendoring|Packaged|Uploading|Generated) \S/,
  /^\s*(?:\S*\/)?(?:ccache\s+|distcc\s+)?(?:[\w.+]+-)?(?:cc|gcc|g\+\+|c\+\+|clang|clang\+\+|ld|ld\.lld|ld\.gold|ranlib|as|nasm|strip|objcopy|gfortran|nvcc|icc|icpc)(?:-\d+(?:\.\d+)*)?\s+-\S/,
  /^\s*(?:\S*\/)?(?:[\w.+]+-)?ar\s+-?[rcsuvqdt]+\s+\S/,
  /^libtool: (?:compile|link|install): /,
  /^(?:mkdir|rm|cp|ln|install|touch|mv)\s+-[\w-]+\s+\S/,
  /^g?make(?:\[\d+\])?: (?:Entering|Leaving) directory /,
  /^g?make(?:\[\d+\])?: (?:Nothing to be done for|'[^']*' is up to date)/,
  /^\s+(?:CC|CXX|LD|AR|AS|CPP|HOSTCC|HOSTCXX|HOSTLD|GEN|CHK|UPD|INSTALL|LINK|CCLD|CXXLD|OBJCOPY|STRIP|SIGN|MODPOST|SYNC|WRAP|DESCEND|LDS|DTC|SHIPPED|KSYM|MKDIR|COPY)\s+\S+$/,
  /^-- (?:The \S+ compiler|Check|Detecting|Looking for|Performing|Found|Configuring done|Generating done|Build files have)/,
  /^go: (?:downloading|finding|extracting|found) /,
  /^npm (?:WARN|notice|http|timing|info|verb|sill) /,
  /^> \S/,
  /^\[INFO\]/,
  /^Download(?:ing|ed) from \S+: /,
  /^\[ERROR\] (?:-> \[Help \d+\]|To see the full stack trace|Re-run Maven using|For more information about the errors|\[Help \d+\] https?:)/,
  /^\[ERROR\]\s*$/,
  /^> Task :\S+/,
  /^Download https?:\/\//
])

/** Progress bars, spinners, percentage and step counters, watch-mode banners. */
export const PROGRESS = alternation([
  /^ {0,12}Building \[[=> -]*\]/,
  /^Progress \(\d+\): /,
  /^\[\s*\d+%\] (?:Building|Linking|Built|Generating|Scanning|Automatic)/,
  /^\[\d+\/\d+\] /,
  /^[⠁-⣿◐◓◑◒]\s+\S/,
  /^\s*\d{1,3}(?:\.\d+)?%(?:\s|$)/,
  /^\s*\[[=#>. -]{6,}\]/,
  /^<[-=]+> \d+% /,
  /^\[?\d{1,2}:\d{2}:\d{2}(?: [AP]M)?\]? - (?:Starting compilation|File change detected|Starting incremental)/
])

/** Summaries that need not start the line (tsc watch mode prefixes a time). */
const SUMMARY_INSIDE = /\bFound \d+ errors?\b|potentially fixable with the `--fix` option/

/** Final summaries and build verdicts: always kept. */
const SUMMARY_START = alternation([
  /^Errors\s+Files$/,
  /^\s*✖ \d+ problems?/,
  /^\d+ problems?$/,
  /^ESLint found too many warnings/,
  /^error: could not compile /,
  /^error: aborting due to /,
  /^warning: .+ generated \d+ warnings?\b/,
  /^warning: build failed, waiting for other jobs/,
  /^Some errors have detailed explanations/,
  /^For more information about (?:this|an) error/,
  /^ {0,12}Finished [`\w]/,
  /^g?make(?:\[\d+\])?: \*\*\* /,
  /^g?make(?:\[\d+\])?: Target .* not remade/,
  /^ninja: build stopped/,
  /^FAILED: /,
  /^collect2: error: /,
  /^compilation terminated\./,
  /^\d+ (?:warnings?|errors?)(?: and \d+ errors?)? generated\.?$/,
  /^\d+ (?:errors?|warnings?)$/,
  /^Note: /,
  /^\[(?:INFO|ERROR)\] BUILD (?:SUCCESS|FAILURE)/,
  /^\[INFO\] (?:Total time:|Finished at:|Reactor Summary)/,
  /^\[INFO\] \S.* \.{2,} ?(?:SUCCESS|FAILURE|SKIPPED)/,
  /^\[(?:INFO|ERROR|WARNING)\] Tests run: /,
  /^\[INFO\] \d+ (?:errors?|warnings?)\s*$/,
  /^\[ERROR\] (?:Failed to execute goal|COMPILATION ERROR|After correcting the problems|\s+mvn <args>)/,
  /^BUILD (?:SUCCESSFUL|FAILED)/,
  /^FAILURE: Build failed/
])

export const SUMMARY = {
  test: (line: string) => SUMMARY_START.test(line) || ((line.includes("Found ") || line.includes("fixable")) && SUMMARY_INSIDE.test(line))
}

/** Unlocated errors in formats without a parser here (webpack, linkers, generic tools): never cut. */
export const IMPORTANT =
  /^(?:(?:ERROR|WARNING) in \S|(?:error|fatal error|fatal|FATAL|ERROR)(?:\[\w+\])?: \S|error TS\d+: |\S+: undefined reference to |\/\S*ld: |\S+:\d+: \*\*\* )/

/** Lines that set the scene for the next diagnostic (gcc/clang include chains and functions). */
export const CONTEXT =
  /^(?:In file included from \S|\s+from \S.*[:,]$|\S.*: (?:In (?:function|member function|constructor|destructor|instantiation|static member function|lambda)|At (?:top level|global scope)|In (?:substitution|expansion) of)\b)/

/** A caret or squiggle line under a snippet, as gcc, clang and javac print it. */
export const CARET = /^[\s|0-9]*[~^][~^ \t+-]*$/

/** The tsc --pretty "Errors  Files" table rows that follow the summary. */
export const TSC_TABLE_ROW = /^\s+\d+\s+\S/

/** Severity words a diagnostic can carry. */
export const SEVERITY = /\b(fatal error|error|warning|note|remark|message)\b/i
