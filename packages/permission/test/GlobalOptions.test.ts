// Issue 25, item 3: options before a subcommand do not hide it from a multi-word rule.
import { describe, expect, test } from "bun:test"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { scanBash } from "../src/BashScan.ts"
import { withoutGlobalOptions } from "../src/GlobalOptions.ts"
import { check } from "../src/Permission.ts"
import { defaultRules, fromConfig } from "../src/Rules.ts"

const wt = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "reins-globalopts-")))
const home = path.join(wt, "home")
const rules = [
  ...defaultRules,
  ...fromConfig(
    {
      bash: {
        "*": "allow",
        "git push *": "deny",
        "git reset --hard *": "deny",
        "npm publish *": "deny",
        "kubectl delete *": "deny",
        "docker rm *": "deny",
        "helm uninstall *": "deny",
        "cargo publish *": "deny",
        "aws s3 rm *": "deny",
        "gh repo delete *": "deny",
        "pnpm publish *": "deny",
        "yarn publish *": "deny",
        "bun publish *": "deny",
        "make deploy *": "deny",
        "systemctl stop *": "deny",
        "terraform destroy *": "deny",
        "gcloud projects delete *": "deny"
      }
    },
    home
  )
]
const verdict = async (command: string) => {
  const actions = (await Effect.runPromise(scanBash(command, { cwd: wt, worktree: wt, home }))).map((r) => check(rules, r).action)
  return actions.includes("deny") ? "deny" : actions.includes("ask") ? "ask" : "allow"
}

describe("a deny on the subcommand holds whatever options come first", () => {
  const denied = [
    "git --no-pager push",
    "git -C . push origin main",
    "git -c k=v push",
    "git -c core.sshCommand=ssh push --force",
    "git --git-dir=.git push",
    "git --git-dir .git --work-tree . push",
    "git -P push",
    "git --no-optional-locks -C . reset --hard HEAD~1",
    "git --unknown-flag value push",
    "npm --loglevel silent publish",
    "npm -g --registry https://r.example publish",
    "npm --otp=123456 publish",
    "pnpm -C packages/a publish",
    "pnpm --filter app publish",
    "yarn --cwd app publish",
    "bun --cwd app publish",
    "kubectl -n prod delete pod x",
    "kubectl --context staging --namespace=prod delete deploy y",
    "kubectl --kubeconfig ~/.kube/other delete ns z",
    "docker -H tcp://x:2375 rm -f c",
    "docker --context remote rm c",
    "helm -n prod uninstall release",
    "cargo +nightly publish",
    "cargo -Z unstable-options publish",
    "aws --profile prod s3 rm s3://bucket/key",
    "aws --region eu-west-1 --profile prod s3 rm s3://b/k",
    "gh -R owner/repo repo delete",
    "make -C deploy deploy prod",
    "systemctl --user stop app",
    "gcloud --project p projects delete p",
    "terraform -chdir=infra destroy"
  ]
  for (const command of denied) {
    test(command, async () => {
      expect(await verdict(command)).toBe("deny")
    })
  }
})

describe("ordinary commands with options stay allowed", () => {
  const quiet = [
    "git --no-pager log --oneline",
    "git -C . status",
    "git -c color.ui=never diff",
    "npm --loglevel silent test",
    "npm -w app run build",
    "pnpm -C packages/a install",
    "kubectl -n prod get pods",
    "docker --context remote ps",
    "cargo +nightly build",
    "aws --profile dev s3 ls",
    "make -C docs html",
    "systemctl --user status app",
    "git push-notes-helper"
  ]
  for (const command of quiet) {
    test(command, async () => {
      expect(await verdict(command)).toBe("allow")
    })
  }
})

test("withoutGlobalOptions: the forms it judges", () => {
  expect(withoutGlobalOptions("git -C . push origin")).toEqual(["git push origin"])
  expect(withoutGlobalOptions("git --no-pager log")).toEqual(["git log"])
  expect(withoutGlobalOptions("git --unknown v push")).toEqual(["git v push", "git push"])
  expect(withoutGlobalOptions("git push")).toEqual([])
  expect(withoutGlobalOptions("ls -la x")).toEqual([])
})
