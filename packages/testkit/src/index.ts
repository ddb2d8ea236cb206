export {
  SCRIPTED_MODEL_ID,
  splitPieces,
  startScriptedServer,
  type ScriptedRequest,
  type ScriptedServer,
  type ScriptedServerOptions,
  type ScriptedStep,
  type ScriptedToolCall,
} from "./ScriptedServer.ts"
