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
    expect(prefix("git config user.name x")).toBe("git config")
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

  test("has at least 136 entries", () => {
    expect(entries.length).toBeGreaterThanOrEqual(136)
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
      "git config": 2,
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
      journalctl: 1
    }
    for (const [key, value] of Object.entries(required)) expect([key, ARITY[key]]).toEqual([key, value])
  })
})
