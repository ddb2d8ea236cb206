// The sandbox host as the standalone executable's helper entry point (`reins --reins-helper SandboxHost`);
// under bun it runs from `hostScript` instead (Host.ts).
import { hostMain } from "./HostBody.ts"

hostMain()
