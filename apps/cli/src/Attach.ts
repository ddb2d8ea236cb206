import { Effect } from "effect"
import type { ModelRef } from "@reins/domain"
import { Permission } from "@reins/permission"
import { Provider } from "@reins/provider"
import { authorizeAttachments, collectAttachments, imagesRefused, type AttachTarget } from "@reins/session"
import type { Attachment } from "@reins/domain"
import { failure, usage } from "./CliError.ts"

/** What a message attaches: the files read, and where they are (for the outside-the-project question). */
export interface Attached {
  readonly targets: ReadonlyArray<AttachTarget>
  readonly attachments: ReadonlyArray<Attachment>
}

/** `-f` files and `@path` mentions, read; a missing or unusable file is a usage error (exit 2). */
export const attachFiles = (input: { readonly cwd: string; readonly text: string; readonly files: ReadonlyArray<string>; readonly home?: string }) =>
  collectAttachments(input).pipe(Effect.mapError((e) => usage(e.message)))

/**
 * Before anything is stored or sent: images refused for a model that takes none (exit 2), and
 * files outside the project asked for as `external_directory` (a denial fails the run).
 */
export const admitAttachments = (model: ModelRef, sessionID: string, cwd: string, attached: Attached) =>
  Effect.gen(function* () {
    if (attached.attachments.length === 0) return
    const provider = yield* Provider
    const refused = imagesRefused(model, provider.info(model).images, attached.attachments)
    if (refused !== undefined) return yield* usage(refused)
    const permission = yield* Permission
    yield* authorizeAttachments(permission, sessionID, cwd, attached.targets).pipe(Effect.mapError((e) => failure(e.message)))
  })
