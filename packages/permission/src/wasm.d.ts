declare module "*.wasm" {
  /** The file's path: absolute when run from source, relative to the chunk when bundled. */
  const path: string
  export default path
}
