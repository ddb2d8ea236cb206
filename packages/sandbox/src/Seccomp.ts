// A seccomp filter for sandboxed commands: no Unix-domain sockets (socket(AF_UNIX, …) fails with EPERM)
// and no io_uring (which could make one). A path socket needs no network namespace to reach a program
// outside: docker's, the session bus, tmux, an X server, an editor's server. socketpair stays (pipes
// between a command's own processes); other syscall ABIs (x32, 32-bit) are refused whole. The kernel's
// keyrings are refused too (add_key, request_key, keyctl).
// Classic BPF over struct seccomp_data { int nr; u32 arch; u64 ip; u64 args[6] }, as bwrap --seccomp reads it.
import * as fs from "node:fs"
import * as path from "node:path"

const LD_ABS = 0x20 // BPF_LD | BPF_W | BPF_ABS
const JEQ = 0x15 // BPF_JMP | BPF_JEQ | BPF_K
const JGE = 0x35 // BPF_JMP | BPF_JGE | BPF_K
const RET = 0x06 // BPF_RET | BPF_K
const ALLOW = 0x7fff0000
const EPERM = 0x00050000 | 1
const AF_UNIX = 1
const IO_URING_SETUP = 425

type Insn = readonly [code: number, jt: number, jf: number, k: number]

const ARCHES: Readonly<Record<string, { readonly audit: number; readonly socket: number; readonly keys: ReadonlyArray<number>; readonly x32: boolean }>> = {
  // keys: add_key, request_key, keyctl
  x64: { audit: 0xc000003e, socket: 41, keys: [248, 249, 250], x32: true },
  arm64: { audit: 0xc00000b7, socket: 198, keys: [217, 218, 219], x32: false }
}

/** The filter's instructions for this CPU; undefined where reins has no table for it (no filter then). */
export const seccompProgram = (arch: string = process.arch): ReadonlyArray<Insn> | undefined => {
  const a = ARCHES[arch]
  if (a === undefined) return undefined
  // ALLOW and DENY are the last two instructions; jumps count from the next instruction
  const body: Array<(at: number, allow: number, deny: number) => Insn> = [
    () => [LD_ABS, 0, 0, 4],
    (at, _allow, deny) => [JEQ, 0, deny - at - 1, a.audit],
    () => [LD_ABS, 0, 0, 0],
    ...(a.x32 ? [(at: number, _allow: number, deny: number): Insn => [JGE, deny - at - 1, 0, 0x40000000]] : []),
    (at, _allow, deny) => [JEQ, deny - at - 1, 0, IO_URING_SETUP],
    // the kernel's keyrings: the session keyring reins inherited (a Kerberos ticket), and one a long-lived sandbox's
    // commands would share
    ...a.keys.map(
      (nr) =>
        (at: number, _allow: number, deny: number): Insn => [JEQ, deny - at - 1, 0, nr]
    ),
    (at, allow) => [JEQ, 0, allow - at - 1, a.socket],
    () => [LD_ABS, 0, 0, 16],
    (at, allow, deny) => [JEQ, deny - at - 1, allow - at - 1, AF_UNIX]
  ]
  const allow = body.length
  const deny = body.length + 1
  return [...body.map((make, at) => make(at, allow, deny)), [RET, 0, 0, ALLOW], [RET, 0, 0, EPERM]]
}

/** The program as the kernel reads it: 8 bytes an instruction, little-endian. */
export const seccompBytes = (program: ReadonlyArray<Insn>) => {
  const out = Buffer.alloc(program.length * 8)
  program.forEach(([code, jt, jf, k], i) => {
    out.writeUInt16LE(code, i * 8)
    out.writeUInt8(jt, i * 8 + 2)
    out.writeUInt8(jf, i * 8 + 3)
    out.writeUInt32LE(k >>> 0, i * 8 + 4)
  })
  return out
}

/**
 * The filter's file in `dir` (reins's data dir: not writable inside the sandbox), checked and rewritten
 * before each use if anything changed it; undefined when there is no filter for this CPU or it cannot be written.
 */
export const seccompFile = (dir: string): (() => string | undefined) => {
  const program = seccompProgram()
  if (program === undefined) return () => undefined
  const bytes = seccompBytes(program)
  const file = path.join(dir, "sandbox", `unix-sockets-${process.arch}.bpf`)
  return () => {
    try {
      if (fs.existsSync(file) && fs.readFileSync(file).equals(bytes)) return file
      fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
      const temp = `${file}.${process.pid}.tmp`
      fs.writeFileSync(temp, bytes, { mode: 0o600 })
      fs.renameSync(temp, file)
      return file
    } catch {
      return undefined
    }
  }
}
