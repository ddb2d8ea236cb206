// The platform services effect/cli and the commands run on (files, paths, stdio, the terminal, child
// processes), from @effect/platform-node-shared: what @effect/platform-node's NodeServices layer is,
// without that package's `redis` peer (12 MB installed for nothing in a Bun app).
import * as NodeChildProcessSpawner from "@effect/platform-node-shared/NodeChildProcessSpawner"
import * as NodeFileSystem from "@effect/platform-node-shared/NodeFileSystem"
import * as NodePath from "@effect/platform-node-shared/NodePath"
import * as NodeStdio from "@effect/platform-node-shared/NodeStdio"
import * as NodeTerminal from "@effect/platform-node-shared/NodeTerminal"
import { Layer } from "effect"

/** Files, paths, stdio, the terminal and child processes for the CLI. */
export const layer = Layer.provideMerge(
  NodeChildProcessSpawner.layer,
  Layer.mergeAll(NodeFileSystem.layer, NodePath.layer, NodeStdio.layer, NodeTerminal.layer)
)
