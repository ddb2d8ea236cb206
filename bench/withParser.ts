// Preloaded into bench/baseline.ts by bash300: the bare AI SDK loop with reins's bash parser
// (web-tree-sitter) loaded, as reins has it from its first bash call. The parser's wasm memory is
// extra memory to the garbage collector, which then lets more garbage pile up between collections.
import { loadParser } from "@reins/permission"

const parser = await loadParser()
parser.parse("echo loaded")?.delete()
