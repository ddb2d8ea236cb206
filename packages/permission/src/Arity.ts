/**
 * Command arity: how many leading words name a shell command (`git checkout main` → `git checkout`),
 * used to suggest the "always allow" pattern `<prefix> *`. Keys are lowercase words joined by one space.
 */

/** How many leading words name a command, keyed by the words themselves (longest key wins). */
export const ARITY: Readonly<Record<string, number>> = Object.freeze({
  // Core utilities, shells, interpreters and one-word tools: the first word is the command.
  cat: 1,
  cd: 1,
  chmod: 1,
  chown: 1,
  cp: 1,
  curl: 1,
  df: 1,
  diff: 1,
  du: 1,
  echo: 1,
  env: 1,
  export: 1,
  find: 1,
  grep: 1,
  head: 1,
  jq: 1,
  kill: 1,
  ln: 1,
  ls: 1,
  lsof: 1,
  mkdir: 1,
  mv: 1,
  patch: 1,
  printf: 1,
  ps: 1,
  pwd: 1,
  rg: 1,
  rm: 1,
  rmdir: 1,
  rsync: 1,
  scp: 1,
  sed: 1,
  awk: 1,
  sort: 1,
  ssh: 1,
  tail: 1,
  tar: 1,
  tee: 1,
  top: 1,
  touch: 1,
  uniq: 1,
  unzip: 1,
  wc: 1,
  wget: 1,
  which: 1,
  xargs: 1,
  yq: 1,
  zip: 1,
  sudo: 1,
  bash: 1,
  sh: 1,
  zsh: 1,
  node: 1,
  python: 1,
  python3: 1,
  ruby: 1,
  perl: 1,
  code: 1,
  k9s: 1,
  journalctl: 1,
  "firewall-cmd": 1,
  xcodebuild: 1,
  "ansible-playbook": 1,

  // Databases.
  sqlite3: 1,
  psql: 1,
  mysql: 1,
  mongosh: 1,
  createdb: 1,
  "redis-cli": 2,

  // JavaScript linters, compilers and test runners.
  tsc: 1,
  eslint: 1,
  prettier: 1,
  jest: 1,
  "npm-check-updates": 1,
  ncu: 1,
  vitest: 2,
  biome: 2,

  // git: `git <sub>`; sub-subcommand groups get three words.
  git: 2,
  "git config": 2,
  "git remote": 3,
  "git stash": 3,
  "git submodule": 3,
  "git worktree": 3,
  "git lfs": 3,
  "git bisect": 3,
  "git notes": 3,
  "git sparse-checkout": 3,

  // GitHub CLI: `gh <group> <action>`.
  gh: 2,
  "gh api": 2,
  "gh pr": 3,
  "gh issue": 3,
  "gh repo": 3,
  "gh release": 3,
  "gh run": 3,
  "gh workflow": 3,
  "gh auth": 3,
  "gh gist": 3,
  "gh secret": 3,
  "gh variable": 3,
  "gh label": 3,
  "gh cache": 3,
  "gh codespace": 3,
  "gh extension": 3,
  "gh project": 3,

  // Node package managers and runners: script and package names are part of the command.
  npm: 2,
  "npm run": 3,
  "npm run-script": 3,
  "npm exec": 3,
  "npm config": 3,
  "npm cache": 3,
  npx: 2,
  pnpm: 2,
  "pnpm run": 3,
  "pnpm exec": 3,
  "pnpm dlx": 3,
  pnpx: 2,
  yarn: 2,
  "yarn run": 3,
  "yarn dlx": 3,
  "yarn workspace": 4,
  bun: 2,
  "bun run": 3,
  "bun x": 3,
  "bun test": 2,
  "bun pm": 3,
  bunx: 2,
  deno: 2,
  "deno task": 3,
  corepack: 2,
  nvm: 2,
  volta: 2,
  fnm: 2,
  lerna: 2,
  rush: 2,
  changeset: 2,
  nx: 2,
  "nx run": 3,
  turbo: 2,
  "turbo run": 3,
  pm2: 2,

  // Containers and clusters.
  docker: 2,
  "docker compose": 3,
  "docker container": 3,
  "docker image": 3,
  "docker network": 3,
  "docker volume": 3,
  "docker buildx": 3,
  "docker system": 3,
  "docker context": 3,
  "docker-compose": 2,
  podman: 2,
  "podman compose": 3,
  "podman container": 3,
  "podman image": 3,
  "podman-compose": 2,
  nerdctl: 2,
  crictl: 2,
  kubectl: 2,
  "kubectl config": 3,
  "kubectl rollout": 3,
  "kubectl create": 3,
  "kubectl auth": 3,
  "kubectl top": 3,
  helm: 2,
  "helm repo": 3,
  "helm plugin": 3,
  "helm dependency": 3,
  minikube: 2,
  kind: 3,
  skaffold: 2,
  vagrant: 2,

  // Rust, Go, JVM, .NET, Swift.
  cargo: 2,
  rustup: 2,
  "rustup toolchain": 3,
  "rustup target": 3,
  "rustup component": 3,
  go: 2,
  "go mod": 3,
  "go work": 3,
  mvn: 2,
  gradle: 2,
  dotnet: 2,
  "dotnet tool": 3,
  "dotnet ef": 3,
  swift: 2,
  "swift package": 3,

  // Python.
  pip: 2,
  pip3: 2,
  uv: 2,
  "uv pip": 3,
  "uv tool": 3,
  "uv python": 3,
  "uv run": 3,
  uvx: 2,
  poetry: 2,
  "poetry run": 3,
  pipenv: 2,
  "pipenv run": 3,
  pipx: 2,
  conda: 2,
  pytest: 1,

  // Ruby, PHP, Elixir, Dart/Flutter, CocoaPods.
  gem: 2,
  bundle: 2,
  "bundle exec": 3,
  rails: 2,
  "rails generate": 3,
  rake: 2,
  composer: 2,
  mix: 2,
  flutter: 2,
  "flutter pub": 3,
  dart: 2,
  "dart pub": 3,
  pod: 2,

  // Build tools.
  make: 2,

  // Cloud CLIs: `aws <service> <operation>`, `gcloud <group> [<resource>] <verb>`, `az <group> <verb>`.
  aws: 3,
  gcloud: 3,
  "gcloud compute": 4,
  "gcloud container": 4,
  "gcloud iam": 4,
  "gcloud sql": 4,
  "gcloud secrets": 4,
  "gcloud artifacts": 4,
  az: 3,
  terraform: 2,
  "terraform state": 3,
  "terraform workspace": 3,
  tofu: 2,
  "tofu state": 3,
  "tofu workspace": 3,
  pulumi: 2,
  "pulumi stack": 3,
  "pulumi config": 3,
  "ansible-galaxy": 3,

  // Hosting and backend platforms.
  vercel: 2,
  "vercel env": 3,
  netlify: 2,
  wrangler: 2,
  "wrangler d1": 3,
  "wrangler kv": 3,
  "wrangler r2": 3,
  "wrangler secret": 3,
  firebase: 2,
  heroku: 2,
  fly: 2,
  flyctl: 2,
  supabase: 2,
  "supabase db": 3,
  "supabase functions": 3,
  "supabase migration": 3,
  prisma: 2,
  "prisma migrate": 3,
  "prisma db": 3,
  "drizzle-kit": 2,

  // System services, packages and networking.
  systemctl: 2,
  service: 3,
  launchctl: 2,
  defaults: 2,
  brew: 2,
  "brew services": 3,
  apt: 2,
  "apt-get": 2,
  "apt-cache": 2,
  dnf: 2,
  yum: 2,
  pacman: 2,
  snap: 2,
  asdf: 2,
  "asdf plugin": 3,
  mise: 2,
  openssl: 2,
  ip: 2,
  nmcli: 2,
  ufw: 2
})

/** Longest key the table knows, in words; lookups never try more. */
const MAX_KEY_WORDS = 4

/** A scoped npm package (`@scope/name`, optionally `@version`): a name despite its slash. */
const SCOPED_PACKAGE = /^@[a-z0-9][\w.-]*\/[\w.-]+(@[\w.^~<>=-]*)?$/i

/** True for a word that is an argument, not a subcommand: flags, paths, assignments, numbers, globs, quoted text. */
const isArgLike = (word: string): boolean => {
  if (word === "" || /\s/.test(word)) return true
  if (word.startsWith("-")) return true
  if (word.includes("*") || word.includes("?")) return true
  if (SCOPED_PACKAGE.test(word)) return false
  if (word.includes("/") || word.includes("\\") || word.includes("=")) return true
  if (word.startsWith(".") || word.startsWith("~")) return true
  return /^\+?\d+(\.\d+)*$/.test(word)
}

const arityOf = (tokens: ReadonlyArray<string>): number => {
  for (let k = Math.min(tokens.length, MAX_KEY_WORDS); k >= 1; k--) {
    const key = tokens.slice(0, k).join(" ")
    if (Object.hasOwn(ARITY, key)) return ARITY[key] ?? 1
  }
  return 1
}

/** The words that name the command: `git checkout main` → ["git","checkout"]. tokens are already-unquoted words of one simple command (no redirections, no env assignments). */
export const commandPrefix = (tokens: ReadonlyArray<string>): ReadonlyArray<string> => {
  if (tokens.length === 0) return []
  const n = Math.min(arityOf(tokens), tokens.length)
  let end = 1
  while (end < n && !isArgLike(tokens[end] ?? "")) end++
  return tokens.slice(0, end)
}
