// The session side the controller calls into, imported only behind the first frame (with the runtime), so that the
// prompt is drawn before the session, storage and provider modules are loaded.
export { SessionService, Sessions, collectAttachments, ofSession, undoTargets } from "@reins/session"
export { SessionStore } from "@reins/storage"
export { Jobs } from "@reins/tool"
