export { addNotice, addUsage, CHUNK_MIN_CHARS, fromHistory, lastAnswer, reduceTranscript, tokenCount } from "./Fold.ts"
export { Footer, footerParts, type FooterInfo } from "./Footer.tsx"
export { Markdown, useMarkdownReady } from "./Markdown.tsx"
export { loadMarkdown, markdownLines } from "./MarkdownLines.ts"
export { itemLines, type ItemOptions } from "./ItemLines.ts"
export { toolLines, type ToolLineOptions } from "./ToolLines.ts"
export { PermissionQuestion, questionLines, type PermissionAnswer, type PermissionQuestionProps, type PermissionReply } from "./PermissionQuestion.tsx"
export {
  allItems,
  cacheHitRate,
  initialTranscript,
  isDone,
  type PendingPermission,
  type TranscriptItem,
  type TranscriptState,
  type TranscriptStatus,
  type TranscriptUsage
} from "./State.ts"
export { defaultTheme, makeTheme, ThemeContext, themeFor, themeOf, toAscii, useTheme, type Theme } from "./Theme.ts"
export { ToolView } from "./ToolView.tsx"
export { Transcript, type TranscriptProps } from "./Transcript.tsx"
