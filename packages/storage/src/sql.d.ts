// Bun imports any file as a string with `with { type: "text" }`; used for the migration .sql files.
declare module "*.sql" {
  const text: string
  export default text
}
