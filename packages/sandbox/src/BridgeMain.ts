// The bridge as the standalone executable's helper entry point (`reins --reins-helper BridgeMain ORDER`);
// under bun it runs from `bridgeScript` instead (Bridge.ts).
import { bridgeMain } from "./Bridge.ts"
import { muxCodec, muxEndpoint } from "./Mux.ts"

await bridgeMain(muxCodec, muxEndpoint, process.argv.at(-1) ?? "")
