import { describe, expect, test } from "bun:test"
import { ARITY, commandPrefix } from "../src/Arity.ts"

const prefix = (command: string) => commandPrefix(command.split(" ")).join(" ")

describe("commandPrefix", () => {
  const examples: ReadonlyArray<readonly [string, string]> = [
    ["git checkout main", "git checkout"],
    ["npm run dev x", "npm run dev"],
    ["docker compose up svc", "docker compose up"],
    ["aws s3 ls b", "aws s3 ls"],
    ["touch a", "touch"],
    ["frobnicate x y", "frobnicate"],
    ["git", "git"],
    ["git --version", "git"],
    ["kubectl get pods -n x", "kubectl get"],
    ["go test ./...", "go test"],
    ["cargo build --release", "cargo build"],
    ["bun run test", "bun run test"],
    ["npx prettier --write .", "npx prettier"],
    ["gh pr create", "gh pr create"],
    ["gcloud compute instances list", "gcloud compute instances list"],
    ["terraform plan", "terraform plan"],
    ["systemctl restart nginx", "systemctl restart"],
    ["make build", "make build"],
    ["pip install x", "pip install"],
    ["uv pip install x", "uv pip install"],
    ["poetry add x", "poetry add"],
    ["docker run -it ubuntu", "docker run"],
    ["helm install r c", "helm install"],
    ["deno task dev", "deno task dev"],
    ["yarn add x", "yarn add"],
    ["pnpm run build", "pnpm run build"],
    ["bunx tsc --noEmit", "bunx tsc"],
    ["ls -la", "ls"],
    ["rm -rf x", "rm"]
  ]
  for (const [command, expected] of examples) {
    test(`${command} → ${expected}`, () => {
      expect(prefix(command)).toBe(expected)
    })
  }

  test("empty → []", () => {
    expect(commandPrefix([])).toEqual([])
  })

  test("longest key wins", () => {
    expect(prefix("git stash pop 1")).toBe("git stash pop")
    expect(prefix("git config user.name x")).toBe("git config user.name")
    expect(prefix("git config --global user.name x")).toBe("git config")
    expect(prefix("consul kv get config/app")).toBe("consul kv get")
    expect(prefix("vault kv put secret/api k=v")).toBe("vault kv put")
    expect(prefix("gcloud auth login")).toBe("gcloud auth login")
    expect(prefix("gcloud compute instances list --zone x")).toBe("gcloud compute instances list")
    expect(prefix("bun test foo")).toBe("bun test")
    expect(prefix("bun x cowsay hi")).toBe("bun x cowsay")
    expect(prefix("npm install left-pad")).toBe("npm install")
    expect(prefix("npm exec tsc -- -p .")).toBe("npm exec tsc")
    expect(prefix("kubectl rollout restart deploy/x")).toBe("kubectl rollout restart")
    expect(prefix("docker-compose up -d")).toBe("docker-compose up")
  })

  test("stops at flags, paths, assignments, numbers, globs and quoted text", () => {
    expect(prefix("docker compose -f x.yml up")).toBe("docker compose")
    expect(prefix("git -C dir status")).toBe("git")
    expect(prefix("bun ./script.ts")).toBe("bun")
    expect(prefix("bun run ./script.ts")).toBe("bun run")
    expect(prefix("make CC=clang")).toBe("make")
    expect(prefix("aws s3 cp a s3://b")).toBe("aws s3 cp")
    expect(prefix("aws --profile p s3 ls")).toBe("aws")
    expect(prefix("nvm use 20")).toBe("nvm use")
    expect(prefix("service 42 x")).toBe("service")
    expect(prefix("make *.o")).toBe("make")
    expect(prefix("cargo ~/x")).toBe("cargo")
    expect(prefix("go . x")).toBe("go")
    expect(commandPrefix(["git", "commit message", "x"])).toEqual(["git"])
    expect(commandPrefix(["npm", "", "x"])).toEqual(["npm"])
  })

  test("scoped npm packages are names, not paths", () => {
    expect(prefix("npx @biomejs/biome check")).toBe("npx @biomejs/biome")
    expect(prefix("bunx @angular/cli@17 new")).toBe("bunx @angular/cli@17")
  })

  test("the first word is kept whatever it looks like", () => {
    expect(prefix("./gradlew build")).toBe("./gradlew")
    expect(prefix("/usr/bin/git status")).toBe("/usr/bin/git")
    expect(prefix("-x y")).toBe("-x")
  })

  test("keys are looked up exactly, never through the prototype", () => {
    expect(prefix("constructor a b")).toBe("constructor")
    expect(prefix("toString a b")).toBe("toString")
    expect(prefix("__proto__ a b")).toBe("__proto__")
    expect(prefix("hasOwnProperty a")).toBe("hasOwnProperty")
    expect(prefix("Git checkout main")).toBe("Git")
  })

  test("the result is a non-empty prefix of at most four words", () => {
    const commands = [...Object.keys(ARITY).map((key) => `${key} a b c d e`), "x", "a b c d e f"]
    for (const command of commands) {
      const tokens = command.split(" ")
      const result = commandPrefix(tokens)
      expect(result.length).toBeGreaterThanOrEqual(1)
      expect(result.length).toBeLessThanOrEqual(4)
      expect(tokens.slice(0, result.length)).toEqual([...result])
    }
  })
})

describe("ARITY", () => {
  const entries = Object.entries(ARITY)

  test("has at least 380 entries (opencode's families and more)", () => {
    expect(entries.length).toBeGreaterThanOrEqual(380)
  })

  test("every value is a whole number ≥ the words in its key and ≤ 4", () => {
    for (const [key, value] of entries) {
      const words = key.split(" ").length
      expect({ key, ok: Number.isInteger(value) && value >= words && value <= 4 }).toEqual({ key, ok: true })
    }
  })

  test("keys are lowercase, single-space separated, trimmed", () => {
    for (const key of Object.keys(ARITY)) {
      expect(key).toBe(key.toLowerCase())
      expect(key).toBe(key.trim())
      expect(key).not.toMatch(/\s{2,}|[\t\n\r]/)
      expect(key.length).toBeGreaterThan(0)
      expect(key.split(" ").length).toBeLessThanOrEqual(4)
    }
  })

  test("no key word looks like an argument (it could never be matched as a subcommand)", () => {
    for (const key of Object.keys(ARITY)) {
      for (const word of key.split(" ")) {
        expect({ key, word, argLike: /^[-.~]|[/\\=*?]|^\d+$/.test(word) }).toEqual({ key, word, argLike: false })
      }
    }
  })

  test("required groups are present", () => {
    const required: Record<string, number> = {
      "npm run": 3,
      "npm exec": 3,
      "pnpm run": 3,
      "yarn run": 3,
      "bun run": 3,
      "bun x": 3,
      "bun test": 2,
      npx: 2,
      bunx: 2,
      pnpx: 2,
      "deno task": 3,
      "docker compose": 3,
      "docker container": 3,
      "docker image": 3,
      "docker network": 3,
      "docker volume": 3,
      "docker buildx": 3,
      "docker-compose": 2,
      kubectl: 2,
      "kubectl config": 3,
      "kubectl rollout": 3,
      helm: 2,
      "helm repo": 3,
      cargo: 2,
      "rustup toolchain": 3,
      "go mod": 3,
      "uv pip": 3,
      "uv tool": 3,
      "gh pr": 3,
      "gh api": 2,
      "git remote": 3,
      "git stash": 3,
      "git submodule": 3,
      "git worktree": 3,
      "git config": 3,
      "git lfs": 3,
      aws: 3,
      gcloud: 3,
      "gcloud compute": 4,
      az: 3,
      "dotnet tool": 3,
      "turbo run": 3,
      "supabase db": 3,
      "prisma migrate": 3,
      "prisma db": 3,
      kind: 3,
      "podman compose": 3,
      sudo: 1,
      journalctl: 1,
      "consul kv": 3,
      "vault kv": 3,
      "ip route": 3,
      "eksctl create": 3,
      "cargo add": 3,
      "npm view": 3
    }
    for (const [key, value] of Object.entries(required)) expect([key, ARITY[key]]).toEqual([key, value])
  })
})

/**
 * One real-looking command per table entry, written `<expected prefix> | <arguments>`. Every entry
 * must be the longest key of at least one example, and every example must give exactly its
 * prefix: a misspelt key, a wrong number or an entry that can never be reached fails here.
 */
const EXAMPLES = `
cat | README.md
cd | src
chmod | 755 run.sh
chown | me:staff file.txt
cp | a.txt b.txt
curl | -sS https://example.com
df | -h
diff | a.txt b.txt
du | -sh dist
echo | hello world
env | FOO=1 node app.js
export | PATH=/usr/bin
find | . -name x
grep | -rn TODO src
head | -n 5 log.txt
jq | .name package.json
kill | 1234
ln | -s a b
ls | -la
lsof | -i :3000
mkdir | build
mv | a.txt b.txt
patch | -p1 fix.diff
printf | hello
ps | aux
pwd |
rg | TODO src
rm | -rf dist
rmdir | empty
rsync | -av src dest
scp | a.txt host:
sed | -n 1p file.txt
awk | NR==1 file.txt
sort | names.txt
ssh | host uptime
tail | -f log.txt
tar | -xzf x.tgz
tee | out.log
top | -b -n 1
touch | a.txt
uniq | -c names.txt
unzip | x.zip
wc | -l a.txt
wget | https://example.com
which | node
xargs | -n1 echo
yq | .a x.yaml
zip | -r x.zip dist
sudo | apt-get update
bash | scripts/test.sh
sh | -c true
zsh | -l
node | app.js
python app.py | --port 8000
python3 serve.py | --port 8000
python manage.py migrate | shop
python3 manage.py runserver | 8000
ruby | app.rb
perl | -pe s/a/b/ x.txt
code | .
k9s | -n dev
journalctl | -u nginx
firewall-cmd | --reload
xcodebuild | -scheme App
ansible-playbook | site.yml
ionice | -c 2 make
killall | node
nice | -n 5 make
nohup | node app.js
sleep | 5
source | ~/.bashrc
stdbuf | -oL make
time | make
timeout | 5 make
unset | FOO
watch | -n 1 date
sqlite3 | app.db .tables
psql shop | -c select
mysql shop | -u root
mongosh test | --quiet
createdb | shop
redis-cli ping |
tsc | --noEmit
eslint | src
prettier | --write .
jest | --ci
npm-check-updates | -u
ncu | -u
vitest run | --coverage
biome check | src
git checkout | main
git config user.name | Ada
git remote add | origin url
git stash pop | 1
git submodule update | --init
git worktree add | ../wt
git lfs pull |
git bisect start |
git notes add | -m hi
git sparse-checkout set | docs
gh browse | 123
gh api | graphql -f query=x
gh pr list |
gh issue create | --title x
gh repo clone | owner/repo
gh release create | v1.0.0
gh run watch | 123
gh workflow run | ci.yml
gh auth login |
gh gist create | a.txt
gh secret set | TOKEN
gh variable list |
gh label create | bug
gh cache delete | --all
gh codespace list |
gh extension install | owner/gh-x
gh project list |
gh search repos | reins
gh ruleset list |
gh org list |
gh ssh-key add | key.pub
gh gpg-key list |
gh alias set | co
gh config get | editor
gh attestation verify | a.tgz
npm install | left-pad
npm run dev | --port 3000
npm run-script build | --prod
npm exec tsc | -- -p .
npm config get | registry
npm cache clean | --force
npm init vue | --yes
npm view react | version
npx prettier | --write .
pnpm install | --frozen-lockfile
pnpm run build | --filter web
pnpm exec vite | build
pnpm dlx create-next-app | app
pnpx prettier | --check .
yarn add | react
yarn run dev | --host
yarn dlx create-react-app | app
yarn workspace web add | react
bun install | --frozen-lockfile
bun run dev | --watch
bun x cowsay | hi
bun test | src
bun pm ls | --all
bunx tsc | --noEmit
deno run | main.ts
deno task dev | --watch
corepack enable |
nvm use | 20
volta install | node
fnm use | 20
lerna run | build
rush build | --to web
changeset version |
nx build | web
nx run web:build | --prod
turbo build | --filter web
turbo run build | --filter web
pm2 start | app.js
docker run | -it ubuntu
docker compose up | svc
docker container ls | -a
docker image prune | -f
docker network inspect | bridge
docker volume ls |
docker buildx build | .
docker system prune | -f
docker context use | prod
docker builder prune | -f
docker service ls |
docker stack deploy | -c stack.yml app
docker swarm init |
docker node ls |
docker secret create | key key.txt
docker plugin ls |
docker manifest inspect | alpine
docker-compose up | -d
podman run | -it alpine
podman compose up | -d
podman container ls | -a
podman image prune | -f
podman volume ls |
podman network create | net
podman pod ps |
podman machine start |
podman-compose up | -d
nerdctl run | alpine
crictl ps | -a
kubectl get | pods -n x
kubectl config use-context | prod
kubectl rollout restart | deploy/api
kubectl create deployment | web --image=nginx
kubectl auth can-i | get pods
kubectl top pods | -A
kubectl kustomize overlays | --enable-helm
kubectl set image | deploy/api api=x
kubectl certificate approve | csr-1
kustomize build | .
helm install | web ./chart
helm repo add | bitnami url
helm plugin install | url
helm dependency update | ./chart
minikube start | --driver docker
kind create cluster | --name dev
skaffold dev | --port-forward
eksctl scale | nodegroup
eksctl create cluster | --name dev
eksctl delete cluster | --name dev
eksctl get clusters | -o json
eksctl upgrade cluster | --approve
eksctl utils associate-iam-oidc-provider | --approve
argocd login | host
argocd app sync | web
argocd cluster list |
argocd repo add | url
argocd proj list |
vagrant up | --provision
cargo build | --release
cargo add tokio | --features full
cargo run server | -- --port 8000
rustup update | stable
rustup toolchain install | nightly
rustup target add | wasm32-unknown-unknown
rustup component add | clippy
go test | ./...
go mod tidy | -v
go work use | ./api
mvn compile | -q
gradle build | --info
dotnet build | -c Release
dotnet tool install | dotnet-ef
dotnet ef migrations | add Init
swift build | -c release
swift package resolve | -v
pip install | numpy
pip3 install | numpy
uv sync | --frozen
uv pip install | numpy
uv tool install | ruff
uv python install | 3.12
uv run pytest | -x
uvx ruff | check .
poetry add | requests
poetry run pytest | -x
pipenv install | flask
pipenv run pytest | -x
pipx install | black
conda install | numpy
pytest | -x tests
pyenv install | 3.11
gem install | rails
bundle install | --jobs 4
bundle exec rspec | spec/a_spec.rb
rails server | -p 3000
rails generate model | User
rake db:migrate | VERSION=1
composer require | laravel/framework
mix test | --trace
flutter build | apk
flutter pub get | --offline
dart analyze | lib
dart pub get | --offline
pod install | --repo-update
rbenv install | 3.2.0
ng generate | component home
hugo new | site blog
wp search-replace | old new
wp plugin install | akismet
wp theme activate | twentytwenty
wp core update | --minor
wp db export | backup.sql
wp user list | --role=admin
wp option get | siteurl
make build | -j4
cmake src | -B build
bazel build | //app:main
aws s3 ls | s3://bucket
gcloud auth login | --brief
gcloud compute instances list | --zone x
gcloud container clusters get-credentials | dev
gcloud iam service-accounts list | --format json
gcloud sql instances list | --project x
gcloud secrets versions access | latest --secret x
gcloud artifacts repositories list | --location eu
az vm create | --name x
terraform apply | -auto-approve
terraform state list | -id x
terraform workspace select | prod
tofu plan | -out plan
tofu state rm | aws_instance.x
tofu workspace new | dev
pulumi up | --yes
pulumi stack output | url
pulumi config set | key value
ansible-galaxy collection install | community.general
cdk deploy | --all
serverless invoke | -f hello
sls deploy | --stage prod
sst deploy | --stage prod
doctl kubernetes cluster | list
sfdx org list | --all
sf org list | --all
cf push | app
mc ls | myminio
mc admin info | myminio
consul members | -detailed
consul kv get | config/app
consul acl token | list
consul catalog services | -tags
consul services register | svc.json
consul snapshot save | backup.snap
consul intention create | web db
consul connect proxy | -sidecar-for web
vault login | -method=oidc
vault auth list | -detailed
vault kv get | secret/api
vault secrets enable | -path=kv kv-v2
vault policy write | admin admin.hcl
vault token lookup | -format=json
vault operator unseal | key
vault lease revoke | -prefix aws/
nomad status | -verbose
nomad job run | web.nomad
nomad node status | -self
nomad alloc logs | abc
nomad namespace list |
packer build | .
vercel deploy | --prod
vercel env pull | .env.local
netlify deploy | --prod
wrangler deploy | --env prod
wrangler d1 execute | db --file x.sql
wrangler kv key | put k v
wrangler r2 object | get b/k
wrangler secret put | TOKEN
firebase deploy | --only hosting
heroku logs | --tail
fly deploy | --remote-only
flyctl deploy | --remote-only
supabase start |
supabase db push | --linked
supabase functions deploy | hello
supabase migration new | init
prisma generate | --watch
prisma migrate dev | --name init
prisma db push | --accept-data-loss
drizzle-kit generate | --config x.ts
systemctl restart | nginx
service nginx restart | --full
launchctl load | ~/Library/x.plist
defaults write | com.apple.dock autohide -bool true
brew install | node
brew services start | postgresql
apt install | curl
apt-get install | -y curl
apt-cache search | curl
dnf install | curl
yum install | curl
pacman | -S curl
snap install | code --classic
asdf install | nodejs 20
asdf plugin add | nodejs
mise use | node@20
openssl genrsa | 2048
ip monitor | all
ip addr show | dev eth0
ip link set | eth0 up
ip netns exec | foo bash
ip route add | default via 1.1.1.1
ip neigh show | dev eth0
ip rule list |
tmux new | -s dev
rtk gain | --all
cargo nextest run | --workspace
cargo llvm-cov report | --html
nmcli device | status
ufw allow | 22
`
  .trim()
  .split("\n")
  .map((line) => {
    const [expected = "", args = ""] = line.split("|")
    return { line, expected: expected.trim(), command: `${expected.trim()} ${args.trim()}`.trim() }
  })

/** The longest table key the words start with, looked up without the table's own length limit. */
const longestKey = (words: ReadonlyArray<string>): string | undefined => {
  for (let k = words.length; k >= 1; k--) {
    const key = words.slice(0, k).join(" ")
    if (Object.hasOwn(ARITY, key)) return key
  }
  return undefined
}

describe("every ARITY entry against an example", () => {
  test("each example gives exactly its prefix, of as many words as its entry says", () => {
    const wrong: Array<string> = []
    for (const { line, expected, command } of EXAMPLES) {
      const words = command.split(/\s+/)
      const key = longestKey(words)
      const got = commandPrefix(words).join(" ")
      const arity = key === undefined ? 1 : ARITY[key]
      if (key === undefined || got !== expected || expected.split(" ").length !== arity) wrong.push(`${line} → ${got} (key ${key}=${arity})`)
    }
    expect(wrong).toEqual([])
  })

  test("each entry has an example that reaches it", () => {
    const reached = new Set(EXAMPLES.map(({ command }) => longestKey(command.split(/\s+/))))
    expect(Object.keys(ARITY).filter((key) => !reached.has(key))).toEqual([])
  })
})
