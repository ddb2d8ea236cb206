import type { ContentBlock } from "@agentclientprotocol/sdk"
import type { Attachment } from "@reins/domain"
import { fileURLToPath } from "node:url"

/** A prompt as reins takes it: the message text and the files attached to it. */
export interface PromptInput {
  readonly text: string
  readonly files: ReadonlyArray<Attachment>
}

/** A `file://` URI as a path; any other URI as it is. */
const pathOf = (uri: string) => {
  if (!uri.startsWith("file://")) return uri
  return fileURLToPath(uri)
}

const dataUrl = (mime: string, base64: string) => `data:${mime};base64,${base64}`

/**
 * An ACP prompt as a reins message: text blocks are its text; a linked file is named in it (the
 * agent reads it with its tools); an embedded file (a text resource) and an image are attached,
 * as `reins run --file` attaches them: the text under its path, the image for models that take
 * images. Audio and other binary resources are named, not sent.
 */
export const promptInput = (blocks: ReadonlyArray<ContentBlock>): PromptInput => {
  const text: Array<string> = []
  const files: Array<Attachment> = []
  for (const block of blocks) {
    switch (block.type) {
      case "text":
        text.push(block.text)
        break
      case "resource_link":
        text.push(`@${pathOf(block.uri)}`)
        break
      case "image":
        files.push({ mime: block.mimeType, url: dataUrl(block.mimeType, block.data), ...(block.uri ? { filename: pathOf(block.uri) } : {}) })
        break
      case "resource": {
        const resource = block.resource
        const filename = pathOf(resource.uri)
        if ("text" in resource) {
          const mime = resource.mimeType?.startsWith("text/") ? resource.mimeType : "text/plain"
          files.push({ mime, filename, url: dataUrl(mime, Buffer.from(resource.text, "utf8").toString("base64")) })
        } else if (resource.mimeType?.startsWith("image/")) {
          files.push({ mime: resource.mimeType, filename, url: dataUrl(resource.mimeType, resource.blob) })
        } else {
          text.push(`@${filename}`)
        }
        break
      }
      case "audio":
        text.push("[audio not supported by reins]")
        break
    }
  }
  return { text: text.join("\n").trim(), files }
}
