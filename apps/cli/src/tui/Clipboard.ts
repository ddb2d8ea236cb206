// Copying to the clipboard through the terminal (OSC 52): works over ssh and needs no helper program.

/** The escape sequence that asks the terminal to put `text` on the clipboard (wrapped for tmux and screen). */
export const osc52 = (text: string, env: Record<string, string | undefined> = process.env) => {
  const sequence = `\x1b]52;c;${Buffer.from(text, "utf8").toString("base64")}\x07`
  if (env.TMUX) return `\x1bPtmux;${sequence.replaceAll("\x1b", "\x1b\x1b")}\x1b\\`
  if (env.TERM?.startsWith("screen")) return `\x1bP${sequence}\x1b\\`
  return sequence
}
