/** Image types reins sends to models that take images, recognised by their first bytes. */
export type ImageType = "image/png" | "image/jpeg" | "image/gif" | "image/webp"

/** The largest image reins sends (Anthropic refuses images over 5 MB). */
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024

const starts = (bytes: Uint8Array, sig: ReadonlyArray<number>, at = 0) => bytes.length >= at + sig.length && sig.every((b, i) => bytes[at + i] === b)

/**
 * The image type of some bytes, from their signature, not the file's name: a `.png` that is text is
 * not an image, and a PNG named `.dat` is one.
 */
export const sniffImage = (bytes: Uint8Array): ImageType | undefined => {
  if (starts(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "image/png"
  if (starts(bytes, [0xff, 0xd8, 0xff])) return "image/jpeg"
  if (starts(bytes, [0x47, 0x49, 0x46, 0x38]) && (bytes[4] === 0x37 || bytes[4] === 0x39) && bytes[5] === 0x61) return "image/gif"
  if (starts(bytes, [0x52, 0x49, 0x46, 0x46]) && starts(bytes, [0x57, 0x45, 0x42, 0x50], 8)) return "image/webp"
  return undefined
}

/** Bytes as a base64 data: URL. */
export const dataUrl = (mime: string, bytes: Uint8Array) =>
  `data:${mime};base64,${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64")}`

/** The bytes of a base64 data: URL (empty for anything else). */
export const dataUrlBytes = (url: string): Uint8Array => {
  const comma = url.indexOf(",")
  if (!url.startsWith("data:") || comma < 0) return new Uint8Array()
  const body = url.slice(comma + 1)
  return url.slice(0, comma).endsWith(";base64") ? Buffer.from(body, "base64") : Buffer.from(decodeURIComponent(body), "utf8")
}

/** A size for people: 812 B, 12.3 KB, 4.1 MB. */
export const byteSize = (n: number) => (n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`)
