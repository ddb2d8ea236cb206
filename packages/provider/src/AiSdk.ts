// What a model call uses of the AI SDK, imported by name: the bundle then keeps only the code these need, not the
// whole `ai` module (agents, UI streams, embeddings …), so the first call parses less. Loaded with `import()`.
export { experimental_streamTextLowMemory, jsonSchema, tool } from "ai"
