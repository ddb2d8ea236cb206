import { bash } from "./bash.ts"

export { bash }

/** The built-in tools, in the order they are offered to the model. */
export const builtins = [bash] as const
