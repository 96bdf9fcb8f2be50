// What the action and the command server say to each other: the server's
// configuration, then one request a JSON line; the server answers in frames.

/** Frame types (server to action): a 9-byte header, u32 payload length, u32 id, u8 type. */
export const FRAME = { message: 0, data: 1, exit: 2, closed: 3, execOut: 4 } as const

export interface ServerConfig {
  mode: 'user' | 'none'
  /** the sandbox user's name (user mode) */
  user?: string
  /** the user is the run's own: it must not exist yet */
  newUser?: boolean
  /** groups that make a user too powerful */
  powerfulGroups?: string[]
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
  /** files of the workspace (relative) the action's scan found credentials in: cleaned in the copy */
  credentialFiles?: string[]
  /** remote URLs to copy into the copy's config (credentials already taken out) */
  remotes?: Array<[string, string]>
  /** drop to this user before serving (none mode through sudo: commands run as the runner user) */
  dropTo?: { uid: number; gid: number; name: string }
  /** whether the server is pid 1's child in its own namespace (private /proc) */
  namespaced: boolean
  /** without a namespace: the value of BASH_AGENT_RUN in every command's environment, to find what they left by */
  runKey?: string
  /** the runner's private places (its home, RUNNER_TEMP, work folder, installation): hidden from the agent */
  hide?: string[]
  /** folders brought back when under a hidden place (the tool cache) */
  reexpose?: string[]
  /** in a network namespace of its own (network: allowlist): the bridge to the proxy's socket is made */
  net?: boolean
  /** programs resolved by the action before the agent ran */
  bins: Record<string, string>
}
