// The sandbox of one run: who the commands run as, where, with what
// environment, and how every process they start is found and killed.
//
// user mode (Linux, root or passwordless sudo): one command server per run,
// root in its own PID and mount namespace (server.ts), takes the run's own
// uid (random, never used on the machine before; no account is made), builds
// the agent's own copy of the workspace in a run folder only root can reach,
// hands it over, and runs every command as that uid there. The
// workspace, its .git, RUNNER_TEMP and the runner's files are never writable
// by the agent. When the server ends, the kernel kills the whole namespace.
//
// It fails closed: where any part of that cannot be had, SandboxUnavailable
// stops the run before the agent starts (never a fallback to none).
//
// none mode: plain local execution as the runner user in the workspace
// (environments/plain.ts): the environment allowlist, nothing else.
//
// State before change: what must be undone (the run folder, the namespace) is
// saved through `saveState` before it is made, so the post step
// (recoverSandbox) puts it right whatever moment the main step died at.
import os from 'node:os'
import path from 'node:path'
import { randomBytes } from 'node:crypto'
import { SandboxedEnvironment, type Sandbox } from '../environments/sandboxed'
import { messageOf } from '../util'
import type { Redactor } from '../report/redact'
import { commandEnv } from './env'
import type { ServerConfig } from '../trusted/protocol'
import { startServer, withTimeout, type ServerClient } from './client'
import {
  asRootArgv,
  canUnshare,
  findPrivilege,
  findProgram,
  realpathOr,
  serverBundle,
  serverShell,
  trustedFile,
  unshareArgs,
  type Privilege
} from './privilege'
export { serverShell }
import { isRunDir, newRunDir, readWorkspaceGit } from './copy'
import { recoverAsRoot, type SavedState } from './recover'

export { recoverSandbox } from './recover'
import { scanCredentials } from './credentials'
import { nestedPlan, type NestedPlan } from './nested'
import { PlainEnvironment } from '../environments/plain'
import { MAX_PROCESSES, newRunUser } from './user'
import { proxySource, startProxyProcess, type NetworkReport, type ProxyProcess } from '../network/launch'
import { proxyEnv } from './env'
import { memoryBytes, planCgroup } from './memory'
import { secretCheck, type SecretFile } from './secret-files'

import type { SandboxMode } from '../settings'
export type { SandboxMode, Sandbox }

export interface SandboxOptions {
  mode: SandboxMode
  workspace: string
  env: NodeJS.ProcessEnv
  redactor: Redactor
  log: (message: string) => void
  /** saves what the post step needs to put things right; called before each change (core.saveState) */
  saveState?: (value: string) => void
  /** names of extra variables the commands may see (input pass-env) */
  passEnv?: string[]
  /** the run folder (planWorkdir), so the prompt can name the copy before set-up ends */
  runDir?: string
  /** `sudo`: through sudo even as root; `unavailable`: as where neither root nor sudo is */
  privilege?: 'auto' | 'sudo' | 'unavailable'
  /** network: allowlist contains the commands' network (user mode); absent or open: the runner's network */
  network?: { mode: 'allowlist' | 'open'; allowed: string[] }
  /** MiB the commands and their temporary files may use (user mode; never more than half the machine's memory) */
  memoryMiB?: number
}

/** How long set-up may take before the sandbox counts as unavailable (a huge workspace copy). */
const SETUP_MAX_MS = 10 * 60_000

/** The run folder and the copy's path, known before set-up so the prompt can name it. */
export function planWorkdir(mode: SandboxMode, workspace: string): { runDir?: string; workdir: string } {
  if (mode !== 'user' || process.platform !== 'linux') return { workdir: workspace }
  const runDir = newRunDir()
  return { runDir, workdir: path.join(runDir, path.basename(path.resolve(workspace)) || 'repo') }
}

/** The commands' environment: the allowlist of env.ts, with the run's own HOME, USER, TMPDIR and workspace. */
function envFor(
  env: NodeJS.ProcessEnv,
  o: { redactor: Redactor; passEnv: string[]; home?: string; user?: string; tmpdir?: string; workdir: string }
): Record<string, string> {
  const me = os.userInfo()
  const out = commandEnv(env, {
    passEnv: o.passEnv,
    redactor: o.redactor,
    home: o.home ?? env.HOME ?? me.homedir,
    user: o.user ?? me.username,
    tmpdir: o.tmpdir ?? env.TMPDIR ?? os.tmpdir()
  })
  out.GITHUB_WORKSPACE = o.workdir
  return out
}

/** What both modes start from: the programs, the privilege, and how to launch the server. */
interface Host {
  opts: SandboxOptions
  log: (message: string) => void
  save: (value: string) => void
  bins: Record<string, string>
  priv: Privilege
  namespaced: boolean
  /** network namespaces can be made too (probed only for a user sandbox with network: allowlist) */
  netNamespaced: boolean
  launch: (config: ServerConfig) => ServerClient
  baseState: () => SavedState
  /** the node that runs as root: one nobody else could have changed */
  node: string
  /** a random word marking this run's namespace (and, without one, its commands' environment) */
  key: string
}

/**
 * A sandbox set up failed: the run stops before the agent starts (no model request, no command). The message
 * says what was missing and that `sandbox: none` runs the agent uncontained.
 */
export class SandboxUnavailable extends Error {
  constructor(readonly why: string) {
    super(
      `the user sandbox could not be set up (${why}), so the agent did not start. \`sandbox: none\` runs the agent uncontained, as the runner user with everything it can read (the job's token and key included): for trusted repositories only.`
    )
  }
}

export async function prepareSandbox(opts: SandboxOptions): Promise<Sandbox> {
  if (opts.mode === 'none') {
    opts.log('Sandbox: none; the commands run as the runner user in the workspace, not contained.')
    const env = envFor(opts.env, { redactor: opts.redactor, passEnv: opts.passEnv ?? [], workdir: opts.workspace })
    return new PlainEnvironment(opts.workspace, env, readWorkspaceGit(opts.workspace)?.baseSha)
  }
  // Side by side: the host's probes, the secret check's list of files (it needs no secret), and the credential
  // scan: the workspace's credentials are taught to the redactor (whose secrets the check then searches for); the
  // copy gets its nested repositories' configs with only the keys known to be harmless, and no credential store
  // (nested.ts). Unchecked, no copy is made.
  const probed = findHost(opts)
  probed.catch(() => {}) // awaited below
  const check = secretCheck(opts.workspace)
  const nested = await scanCredentials(opts.workspace, opts.redactor, opts.log, { home: opts.env.HOME })
    .then(s => nestedPlan(opts.workspace, s))
    .catch((e: unknown) => {
      throw new SandboxUnavailable(`the workspace's repositories could not be checked for credentials: ${messageOf(e)}`)
    })
  const withhold = check(opts.redactor.values())
  withhold.catch(() => {}) // awaited by prepareUser, or the set-up stopped before it
  const host = await probed.catch((e: unknown) => {
    throw new SandboxUnavailable(messageOf(e))
  })
  const missing = ['bash', 'git', 'cp', 'chown', 'mount', 'umount', 'pivot_root', 'find', 'rm', 'unshare'].filter(n => !host.bins[n])
  let why = ''
  if (process.platform !== 'linux') why = `it needs Linux, and this is ${process.platform}`
  else if (host.priv.kind === 'none') why = host.priv.why
  else if (!host.namespaced) why = 'PID namespaces (unshare) are not available'
  else if (missing.length) why = `${missing.join(', ')} not found`
  else if (opts.network?.mode === 'allowlist' && !host.netNamespaced) why = 'network namespaces (unshare --net) are not available'
  if (why) throw new SandboxUnavailable(why)
  return prepareUser(host, nested, withhold)
}

async function findHost(opts: SandboxOptions): Promise<Host> {
  const avoid = realpathOr(opts.workspace)
  const find = (name: string) => findProgram(name, opts.env.PATH, avoid)
  const bins: Record<string, string> = {}
  for (const name of [
    'bash',
    'git',
    'cp',
    'chown',
    'mount',
    'prlimit',
    'rm',
    'true',
    'unshare',
    'mknod',
    'umount',
    'ip',
    'find',
    'perl',
    'pivot_root',
    'setpriv'
  ]) {
    const p = find(name)
    if (p) bins[name] = p
  }
  const priv = await findPrivilege(opts.env.PATH, opts.workspace, opts.privilege)
  if (priv.kind === 'none') throw new Error(priv.why)
  // run as root (the server, the recovery helper): only a node nobody else could have changed
  const node = trustedFile(process.execPath, avoid)
  if (!node) throw new Error(`the node running the action (${process.execPath}) is in a folder others can change; it is not run as root`)
  // the server's own bundle, from the action's folder: never a file the agent could change
  const bundle = serverBundle()
  const server = trustedFile(bundle, avoid)
  if (!server) throw new Error(`the command server (${bundle}) is missing or in a folder others can change; it is not run as root`)
  const { namespaced, netNamespaced } = await namespaces(opts, priv, bins)
  const key = randomBytes(16).toString('hex')
  const launch = (config: ServerConfig): ServerClient =>
    startServer(asRootArgv(priv, [...unshareArgs(bins.unshare, config.net), ...serverShell(bins.bash), node]), server, config, key)
  const baseState = (): SavedState => ({
    v: 1,
    priv: priv.kind,
    sudo: priv.kind === 'sudo' ? priv.sudo : undefined,
    node,
    server,
    rm: bins.rm ?? '/bin/rm',
    key
  })
  const save = opts.saveState ?? (() => undefined)
  return { opts, log: opts.log, save, bins, priv, node, namespaced, netNamespaced, launch, baseState, key }
}

/** Which namespaces unshare can make here: one probe when the run needs both (a network namespace made with the PID and IPC ones shows all three can be). */
async function namespaces(
  opts: SandboxOptions,
  priv: Privilege,
  bins: Record<string, string>
): Promise<{ namespaced: boolean; netNamespaced: boolean }> {
  const probe = async (net: boolean) =>
    priv.kind !== 'none' && !!bins.bash && (await canUnshare(priv, bins.unshare, bins.true ?? '/bin/true', net))
  const netNamespaced = opts.mode === 'user' && opts.network?.mode === 'allowlist' && (await probe(true))
  return { namespaced: netNamespaced || (await probe(false)), netNamespaced }
}

/** What the command server is told to build in user mode. */
function userServerConfig(
  host: Host,
  o: {
    git: ReturnType<typeof readWorkspaceGit>
    runDir: string
    user: { name: string; uid: number }
    nested: NestedPlan
    cgroup?: string
    withhold: SecretFile[]
  }
): ServerConfig {
  const { opts } = host
  return {
    user: o.user.name,
    uid: o.user.uid,
    maxProcesses: MAX_PROCESSES,
    workspace: opts.workspace,
    runDir: o.runDir,
    objects: o.git?.objects,
    baseSha: o.git?.baseSha,
    remotes: o.git?.remotes,
    replace: o.nested.replace,
    tools: opts.env.RUNNER_TOOL_CACHE ? [realpathOr(opts.env.RUNNER_TOOL_CACHE)] : [],
    net: opts.network?.mode === 'allowlist',
    proxyBundle: opts.network?.mode === 'allowlist' ? proxySource(realpathOr(opts.workspace)) : undefined,
    memory: memoryBytes(opts.memoryMiB),
    cgroup: o.cgroup,
    bins: host.bins,
    withhold: o.withhold.map(f => f.path)
  }
}

/** The files the copy leaves out, each logged: those holding a secret the action knows, the credential stores. */
async function withheldFiles(nested: NestedPlan, checked: Promise<SecretFile[]>, log: (m: string) => void): Promise<SecretFile[]> {
  const holding = await checked.catch((e: unknown) => {
    throw new Error(`the workspace could not be checked for files holding secrets: ${messageOf(e)}`)
  })
  const withhold = [...holding, ...nested.withhold.filter(f => !holding.some(h => h.path === f.path))]
  for (const f of withhold) log(`Sandbox: not given to the agent: ${JSON.stringify(f.path)} (${f.why}).`)
  return withhold
}

/** The user sandbox, whole, or SandboxUnavailable saying what could not be had. */
async function prepareUser(host: Host, nested: NestedPlan, checked: Promise<SecretFile[]>): Promise<Sandbox> {
  const { opts, log, save } = host
  const git = readWorkspaceGit(opts.workspace)
  // files holding a secret the action knows are not in the copy (SPEC "Not given"); unchecked, no copy is made
  const withhold = await withheldFiles(nested, checked, log)
  const runDir = isRunDir(opts.runDir) ? opts.runDir : newRunDir()
  const run = newRunUser()
  const user = run.name
  const cgroup = planCgroup()
  const state = { ...host.baseState(), runDir, uid: run.uid, cgroup }
  save(JSON.stringify(state)) // before the folder, the cgroup and any process of the uid exist
  const server = host.launch(userServerConfig(host, { git, runDir, user: run, nested, cgroup, withhold }))
  try {
    const ready = await withTimeout(server.ready, SETUP_MAX_MS)
    save(JSON.stringify({ ...state, ns: ready.ns }))
    const how = ready.kind === 'overlay' ? 'an overlay on the workspace, which stays read-only' : 'copied files'
    log(
      `Sandbox: commands run as the unprivileged user ${user} (uid ${ready.uid}, this run's own: random, used by nothing on this machine before, no account made) in its own copy of the workspace (${how}), ${ready.workdir}.`
    )
    // a part of the view that could not be made is no sandbox (fail closed)
    const parts = [ready.copyProblem, ready.netProblem].filter((p): p is string => !!p)
    if (parts.length) throw new Error(parts.join('; '))
    if (ready.memoryNote) log(`Sandbox: ${ready.memoryNote}.`)
    if (ready.copyNote) log(`Sandbox: ${ready.copyNote}.`)
    const proxy = await networkOf(host, ready, runDir, log)
    const env = envFor(opts.env, {
      redactor: opts.redactor,
      passEnv: opts.passEnv ?? [],
      home: ready.home,
      user,
      tmpdir: ready.tmp,
      workdir: ready.workdir
    })
    if (ready.proxyPort) Object.assign(env, proxyEnv(ready.proxyPort))
    return new SandboxedEnvironment({
      ...{
        mode: 'user',
        note: `user (${user})`,
        workdir: ready.workdir,
        baseSha: git?.baseSha,
        startTree: ready.startTree,
        startObjects: ready.startObjects,
        upper: ready.upper,
        env,
        withheld: withhold
      },
      ...{ server, state: { ...state, ns: ready.ns }, save, namespaced: true, priv: host.priv, proxy }
    })
  } catch (e) {
    const why = messageOf(e)
    await server.end(5000)
    // a uid refused as in use is not this run's: what has it is never killed
    const r = await recoverAsRoot({ ...state, uid: /^uid \d+ is refused/.test(why) ? undefined : run.uid }, 60_000)
    if (r.done) save('')
    else log(`Sandbox: ${r.problems.join('; ')}`)
    throw new SandboxUnavailable(why)
  }
}

/** The network of a user sandbox: the proxy started (network: allowlist), or why not contained. */
async function networkOf(
  host: Host,
  ready: { proxySocket?: string; netProblem?: string; uid?: number; gid?: number },
  runDir: string,
  log: (m: string) => void
): Promise<ProxyProcess | NetworkReport> {
  const n = host.opts.network
  if (n?.mode !== 'allowlist') return { contained: false, why: 'network: open' }
  const closed = (problem: string): NetworkReport => {
    log(`Network: ${problem}.`)
    return { contained: true, problem, reached: [], refused: [], otherReached: 0, otherRefused: 0 }
  }
  if (ready.netProblem || !ready.proxySocket)
    return closed(ready.netProblem ?? 'no bridge to the proxy: the commands had no network at all')
  // the server staged node and the bundle in the run's folder, where the run's uid reaches them (view.ts netBridge)
  const [node, source] = ['node', 'proxy.js'].map(n => trustedFile(path.join(runDir, 'bin', n)))
  if (!node || !source)
    return closed(
      "the proxy's program was not found in the run's folder (or others could change it), so the commands had no network at all"
    )
  if (!host.bins.setpriv)
    return closed("setpriv (util-linux), which starts the proxy as the run's user, was not found: the commands had no network at all")
  const p = await startProxyProcess({
    ...{ priv: host.priv, setpriv: host.bins.setpriv, node, source, socket: ready.proxySocket },
    ...{ uid: ready.uid as number, gid: ready.gid as number, allowed: n.allowed, log }
  })
  log(
    `Network: the commands reach ${n.allowed.length ? `only ${n.allowed.join(', ')}` : 'no host (allowed-domains is empty)'}, through the run's proxy.`
  )
  return p
}
