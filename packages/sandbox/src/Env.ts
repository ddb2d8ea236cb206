// The environment a sandboxed command gets: the user's, less every variable that looks like a secret
// (`*_KEY`, `*_TOKEN`, `*_SECRET`, `*PASSWORD*`, credentials, the ssh and gpg agents' sockets) unless
// the config passes its name through (`sandbox.env.pass`). REINS_DATABASE_URL (where reins keeps its sessions) goes too.

const SECRET_NAME =
  /(_KEY|_KEYS|_TOKEN|_TOKENS|_SECRET|_SECRETS|PASSWORD|PASSWD|_PASS|_PAT|CREDENTIAL|CREDENTIALS|_COOKIE|APIKEY|ACCESS_KEY_ID|_DSN|_JWT|_JWT_V2|_WEBHOOK_URL|_CONNECTION_STRING)$|PASSWORD|SECRET|TOKEN(?!IZER)|PASSPHRASE|SESSION|AUTH(?!OR)|^(SSH_AUTH_SOCK|GPG_AGENT_INFO|GNUPGHOME|KRB5CCNAME|DATABASE_URL|REINS_DATABASE_URL|REDIS_URL|MONGODB_URI|POSTGRES_URL|AMQP_URL|DOCKER_AUTH_CONFIG|VSCODE_GIT_IPC_HANDLE|GH_PAT|GITHUB_PAT|BW_SESSION)$|^(OP_SESSION_|TF_TOKEN_|BUNDLE_)/i

/** A value that carries credentials in a URL (`https://user:pass@host`), whatever its variable's name. */
const CREDENTIAL_URL = /^[a-z][a-z0-9+.-]*:\/\/[^/\s:@]+:[^/\s@]+@/i

/** Whether a variable's name says it holds a secret. */
export const isSecretName = (name: string) => SECRET_NAME.test(name)

/**
 * `env` without its secret-looking variables, except the names in `pass` (exact, or `PREFIX_*`);
 * `removed` names what was taken out (names only, never values).
 */
export const scrubEnv = (env: Readonly<Record<string, string | undefined>>, pass: ReadonlyArray<string> = []) => {
  const passes = (name: string) => pass.some((p) => (p.endsWith("*") ? name.startsWith(p.slice(0, -1)) : p === name))
  const out: Record<string, string> = {}
  const removed: Array<string> = []
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue
    if ((isSecretName(name) || CREDENTIAL_URL.test(value)) && !passes(name)) removed.push(name)
    else out[name] = value
  }
  return { env: out, removed: removed.sort() }
}
