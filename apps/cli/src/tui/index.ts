// The interactive session (`reins`, `reins chat`): loaded only by a dynamic import, so React and Ink stay out of `--version` and `run`.
export { runTui, type TuiOptions } from "./Tui.tsx"
