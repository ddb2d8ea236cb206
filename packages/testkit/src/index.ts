export {
  SCRIPTED_MODEL_ID,
  splitPieces,
  startScriptedServer,
  type ScriptedServer,
  type ScriptedStep,
  type ScriptedToolCall,
} from "./ScriptedServer.ts"
