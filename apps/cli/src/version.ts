import pkg from "../package.json" with { type: "json" }

/** The version `reins --version` prints. */
export const VERSION: string = pkg.version
