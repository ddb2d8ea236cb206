export * as LanguageServers from "./LanguageServers.ts"
export type { LspSettings } from "./LanguageServers.ts"
export * as Servers from "./Servers.ts"
export { LspError } from "./LspError.ts"
