// What the action and the command server say to each other over the server's
// stdin and stdout: first the configuration (one JSON line), then one request
// a JSON line; the server answers in binary frames (a 9-byte header: u32
// payload length, u32 request id, u8 frame type), JSON unless said otherwise.

/**
 * Frame types (server to action). message: JSON, the answer to an `exec` or a `stop`, or a request that failed (a
 * `run` has none: its exit frame says all); data: a command's output, raw; exit: JSON, a command exited or could not
 * start (`Exited`); closed: empty, a command's output closed; execOut: an exec's output, raw.
 */
export const FRAME = { message: 0, data: 1, exit: 2, closed: 3, execOut: 4 } as const
export type FrameType = (typeof FRAME)[keyof typeof FRAME]

export const HEADER_BYTES = 9

/** The header of a frame of `length` payload bytes. */
export function frameHeader(type: FrameType, id: number, length: number): Buffer {
  const h = Buffer.allocUnsafe(HEADER_BYTES)
  h.writeUInt32BE(length, 0)
  h.writeUInt32BE(id, 4)
  h.writeUInt8(type, 8)
  return h
}

export const frame = (type: FrameType, id: number, payload: Buffer): Buffer =>
  Buffer.concat([frameHeader(type, id, payload.length), payload])

export const jsonFrame = (type: FrameType, id: number, msg: Message | Exited): Buffer => frame(type, id, Buffer.from(JSON.stringify(msg)))

/** One request (action to server), by its `op`. */
export type Request =
  /** run a command with bash as the sandbox user; its frames come under `id` until forgotten */
  | { op: 'run'; id: number; command: string; cwd: string; env: Record<string, string> }
  /** kill a command's whole process tree */
  | { op: 'kill'; id: number }
  /** nothing more of a command is wanted */
  | { op: 'forget'; id: number }
  /**
   * one program, no shell; `input` in base64. As the sandbox user, or with `asRoot` as root in the server's
   * namespaces: how the action reads the overlay's upper layer (`upper`), which only root can (the hand-back
   * lists it: `find <upper> -printf ...`; a whiteout is a character device 0/0, an opaque folder carries the
   * xattr trusted.overlay.opaque=y). Only the action sends requests: the agent never reaches this pipe.
   */
  | { op: 'exec'; id: number; file: string; args: string[]; cwd?: string; env?: Record<string, string>; input?: string; asRoot?: boolean }
  /** kill every process of the run and verify it */
  | { op: 'stop'; id: number }
  /**
   * root-only: the overlay's upper layer (SetUpInfo.upper) listed, as exec output (execOut frames, then an
   * ExecDone): one `<fresh> <type> <path>` record per entry, NUL-terminated; `fresh` 1 when the entry is not
   * as set-up left it, `type` find's %y, `path` relative ('' is the layer's root); every `.git` left out
   */
  | { op: 'upper'; id: number }

/** What set-up made (user mode), in the `ready` message. */
export interface SetUpInfo {
  workdir: string
  home?: string
  tmp?: string
  startTree?: string
  startObjects?: string
  /** the overlay's upper layer (what the agent wrote), as the server's root sees it: listed by the `upper` request */
  upper?: string
  uid?: number
  gid?: number
  copyProblem?: string
  /** how the files were handed over, when it was the slow way */
  copyNote?: string
  /** how the commands' memory is bounded */
  memoryNote?: string
  /** network: allowlist: the bridge's port in the namespace and the proxy's socket, or why there is no way out */
  proxyPort?: number
  proxySocket?: string
  netProblem?: string
  /** how the copy was made (user mode) */
  kind?: 'overlay' | 'copy'
}

/** The first message, under id 0: set-up done, or refused. */
export type Hello = ({ type: 'ready'; ns: string; pid: number } & SetUpInfo) | { type: 'failed'; ns: string; error: string }
export type Ready = Extract<Hello, { type: 'ready' }>

/** An `exec` ended, a `stop` done, or a request failed. */
export type ExecDone = { code: number | null; stderr: string }
export type StopDone = { ok: boolean; detail?: string }
export type Failure = { error: string }
export type Message = Hello | ExecDone | StopDone | Failure

/** What an exec came to (and how the server runs its own helpers). */
export type ExecResult = { code: number | null; stdout: Buffer; stderr: string }

/** The payload of an exit frame. */
export type Exited =
  | {
      code: number | null
      signal: NodeJS.Signals | null
      /** the kernel killed one of this command's own processes (its cgroup's) for memory: the limit in MiB */
      oom?: number
    }
  | Failure

/**
 * The uids a run's is picked from at random (gid the same), never one used before: keyrings outlive a uid's processes.
 * Above every range handed out by default (users and nobody below 65,536, shadow's subordinate ids to 600,100,000,
 * systemd's containers to 1,879,048,191, SSSD's directory users to 2,000,200,000), below systemd's foreign range and 2^31.
 */
export const RUN_UIDS = { from: 2_000_200_000, to: 2_147_352_576 }

export interface ServerConfig {
  /** the sandbox user's name (bash-agent-<8 hex>) and uid (gid the same) in user mode: no account, refused unless unused */
  user?: string
  uid?: number
  /** RLIMIT_NPROC of the sandbox user's commands */
  maxProcesses?: number
  /** the runner's workspace */
  workspace: string
  /** the run's own folder (user mode): built root-only, handed to the sandbox user once ready */
  runDir?: string
  /** the workspace's git object store, to share read-only with the copy */
  objects?: string
  /** the commit checked out in the workspace */
  baseSha?: string
  /** workspace-relative paths of files that must not be in the copy (they hold a secret the action knows): whiteouts in the upper layer */
  withhold?: string[]
  /** files of the copy (workspace-relative) and what they hold there: the nested repositories' configs as the action cleaned them */
  replace?: Array<{ path: string; content: string }>
  /** remote URLs to copy into the copy's config (credentials already taken out) */
  remotes?: Array<[string, string]>
  /** the tool folders the view shows read-only beside the system's (the tool cache) */
  tools?: string[]
  /** the proxy's bundle (network: allowlist): staged with the node running the server in <runDir>/bin */
  proxyBundle?: string
  /** in a network namespace of its own (network: allowlist): the bridge to the proxy's socket is made */
  net?: boolean
  /** bytes of memory the agent's commands and temporary folders may use (the run's tmpfs, its cgroup) */
  memory?: number
  /** where the agent's cgroup goes (planned by the action, for the post step) */
  cgroup?: string
  /** programs resolved by the action before the agent ran */
  bins: Record<string, string>
}
