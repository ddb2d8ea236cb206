#!/usr/bin/env node
// The `reins` npm package's bin (scripts/pack-cli.ts copies it to bin/reins): runs the standalone reins
// executable from the platform package npm installed beside it (reins-<os>-<arch>, one of this package's
// optionalDependencies), with the same arguments and terminal, and exits as it did. Plain CommonJS with no
// dependencies: it runs on any Node from 18 on.
"use strict"
const { spawn } = require("node:child_process")
const fs = require("node:fs")
const path = require("node:path")

const own = require("../package.json")
const platforms = Object.keys(own.optionalDependencies || {}).map((name) => name.replace(/^reins-/, ""))
const os = process.platform === "win32" ? "windows" : process.platform
const here = `${os}-${process.arch}`
const exeName = process.platform === "win32" ? "reins.exe" : "reins"

/** The executable's path: REINS_BINARY, or the platform package's, wherever npm put it (nested or beside this one). */
const findBinary = () => {
  if (process.env.REINS_BINARY) return process.env.REINS_BINARY
  let manifest
  try {
    manifest = require.resolve(`reins-${here}/package.json`)
  } catch {
    return undefined
  }
  const exe = path.join(path.dirname(manifest), "bin", exeName)
  return fs.existsSync(exe) ? exe : undefined
}

const missing = () => {
  const built = platforms.includes(here)
  const lines = [
    `reins: no reins executable for this platform (${here}) is installed.`,
    `reins ${own.version} is published for ${platforms.join(", ")}.`,
    built
      ? `The platform package reins-${here} was not installed: npm leaves optional dependencies out with --omit=optional (or --no-optional), or when a lockfile made on another platform is used. Reinstall with: npm i -g reins@${own.version}`
      : `There is no build for ${here}: build reins from source (Bun 1.4.5: npm run pack in a clone of the repository makes the tarballs for this machine), or run the bundle with bun (bun run build; bun apps/cli/dist/reins.js).`,
    "Or set REINS_BINARY to a reins executable you built. More: docs/install.md in the repository."
  ]
  process.stderr.write(`${lines.join("\n")}\n`)
  process.exit(1)
}

const binary = findBinary()
if (binary === undefined) missing()

const child = spawn(binary, process.argv.slice(2), { stdio: "inherit" })

// The signals that stop reins, sent to the launcher (kill PID), are passed on; the launcher waits for reins to
// finish its cleanup. A terminal's Ctrl-C reaches reins as well (same process group): reins stops once for both.
const forwarded = ["SIGINT", "SIGTERM", "SIGHUP"]
for (const signal of forwarded) {
  try {
    process.on(signal, () => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal)
    })
  } catch {
    // a signal this platform cannot listen for
  }
}

child.on("error", (error) => {
  process.stderr.write(`reins: could not start ${binary}: ${error.message}\n`)
  process.exit(1)
})
child.on("exit", (code, signal) => {
  if (signal !== null) {
    // die of the same signal, so a shell or a parent sees what happened to reins
    for (const s of forwarded) process.removeAllListeners(s)
    process.kill(process.pid, signal)
    return
  }
  process.exit(code ?? 1)
})
