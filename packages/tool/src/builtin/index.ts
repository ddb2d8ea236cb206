import { applyPatch } from "./apply_patch.ts"
import { bash } from "./bash.ts"
import { edit } from "./edit.ts"
import { glob } from "./glob.ts"
import { jobKill, jobOutput } from "./job.ts"
import { grep } from "./grep.ts"
import { list } from "./list.ts"
import { read } from "./read.ts"
import { task } from "./task.ts"
import { todoread, todowrite } from "./todo.ts"
import { webfetch } from "./webfetch.ts"
import { write } from "./write.ts"

export { applyPatch, bash, edit, glob, grep, jobKill, jobOutput, list, read, task, todoread, todowrite, webfetch, write }
export { Jobs, layerJobs, makeJobs, defaultJobSettings, type JobSettings, type JobStatus, type JobView, type JobsService } from "./Jobs.ts"
export { jobLine, statusText as jobStatusText } from "./job.ts"
export { renderTodos, Todo, TodoLists } from "./todo.ts"
export { Diagnostics, afterEditText, newErrors, type FileCheck, type Problem, type Written } from "./DiagnosticsPort.ts"
export { diagnostics } from "./diagnostics.ts"
export { WebFetchSettings, type WebFetchOptions } from "./WebRequest.ts"
export { parseTarget, type WebTarget } from "./WebUrl.ts"
export { SubAgents, agentList, type SubAgentInfo, type SubAgentRequest, type SubAgentResult } from "./task.ts"

/** The built-in tools, in the order they are offered to the model. */
export const builtins = [bash, jobOutput, jobKill, read, glob, grep, list, write, edit, applyPatch, task, todowrite, todoread, webfetch] as const
