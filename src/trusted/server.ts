// The command server of one run (`dist/trusted/index.js serve`), as root in new PID, IPC and mount namespaces
// (unshare --pid --ipc --mount --fork --kill-child, bash as their init, which reaps orphans). It reads its
// configuration, then requests, as JSON lines on stdin and answers in binary frames on stdout (protocol.ts); it
// sets up the sandbox (the view, the copy), then spawns every command as the run's uid in its own process group
// and cgroup. When it exits, the kernel kills every process of the namespace: nothing a command started outlives it.
import { spawn, type ChildProcess } from 'node:child_process'
import { readlinkSync } from 'node:fs'
import type { Readable, Writable } from 'node:stream'
import { FRAME, frame, frameHeader, jsonFrame } from './protocol'
import type { Exited, Message, Request, ServerConfig, SetUpInfo } from './protocol'
import { killTree, living, pids, signal } from './proc'
import { quietEnv, run } from './exec'
import { bindWorkspace, buildCopy, claimIds, identity } from './setup'
import { enterView, netBridge, newRoot } from './view'
import { agentCgroup, gated, joinCgroup, oomKilled, type AgentCgroup } from './memory'
import { listUpper } from './upper'

type Ids = { uid: number; gid: number }

/** Serve one run: the configuration, then requests, from stdin; frames to stdout. */
export function commandServer(): void {
  const server = new CommandServer(new FrameWriter(process.stdout))
  let buffered = ''
  process.stdin.setEncoding('utf8')
  process.stdin.on('data', (d: string) => {
    buffered += d
    let nl: number
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl)
      buffered = buffered.slice(nl + 1)
      server.onLine(line)
    }
  })
  // The action is gone (or done): end, and with us the namespace and all it holds. A write to the
  // action that fails (EPIPE: it died mid-run) says the same, rather than crashing before stopAll.
  let ending = false
  const end = () => {
    if (ending) return
    ending = true
    void server.stopAll().finally(() => process.exit(0))
  }
  process.stdin.on('end', end)
  process.stdout.on('error', end)
  process.on('SIGTERM', () => undefined)
  process.on('SIGINT', () => undefined)
}

/** Our stdout: frames, with commands' outputs paused while it cannot keep up. */
class FrameWriter {
  /** commands' outputs paused until our stdout drains */
  private readonly paused = new Set<Readable>()
  /** output bytes since the last young-generation collection */
  private passed = 0
  constructor(private readonly out: Writable) {
    out.on('drain', () => {
      for (const s of this.paused) s.resume()
      this.paused.clear()
    })
  }
  write(b: Buffer): void {
    this.out.write(b)
  }
  send(id: number, msg: Message): void {
    this.write(jsonFrame(FRAME.message, id, msg))
  }
  exit(id: number, msg: Exited): void {
    this.write(jsonFrame(FRAME.exit, id, msg))
  }
  /** A chunk of `from`'s output: the header, then the chunk itself (no copy of it). */
  data(type: typeof FRAME.data | typeof FRAME.execOut, id: number, d: Buffer, from?: Readable): void {
    this.passed += d.length
    if (this.passed >= 1024 * 1024) {
      // each chunk is a buffer outside the JS heap, which V8 collects only after tens of megabytes
      this.passed = 0
      ;(globalThis as { gc?: (o: { type: 'minor' }) => void }).gc?.({ type: 'minor' })
    }
    this.out.cork()
    this.out.write(frameHeader(type, id, d.length))
    const more = this.out.write(d)
    this.out.uncork()
    if (more || !from) return
    // the action reads slower than the command prints: wait, or our stdout buffer grows with the output
    from.pause()
    this.paused.add(from)
  }
}

// One bash per command: stderr joins stdout, then the command runs as the script's own text, no positional parameters.
// The text comes in the environment, never argv: any local user reads a process's cmdline, only its uid its environ.
const SCRIPT = 'exec 2>&1; eval "unset __bash_agent_command; $__bash_agent_command"'

class CommandServer {
  private cfg: ServerConfig | undefined
  private account: Ids | undefined
  private workdir = ''
  private cgroup: AgentCgroup = {}
  /** the upper layer and how set-up left it (upper.ts) */
  private upper: { path: string; snapshot: Set<string> } | undefined
  private ready: Promise<void> | undefined
  private readonly children = new Map<number, ChildProcess>()

  constructor(private readonly out: FrameWriter) {}

  /** The first line is the configuration, then one request a line. */
  onLine(line: string): void {
    if (!this.ready) {
      this.ready = this.start(JSON.parse(line) as ServerConfig)
      return
    }
    const req = JSON.parse(line) as Request
    void this.ready.then(() => this.onRequest(req)).catch(e => this.out.exit(req.id, { error: (e as Error).message }))
  }

  private async start(cfg: ServerConfig): Promise<void> {
    this.cfg = cfg
    const ns = readlinkSync('/proc/self/ns/pid')
    try {
      const account = (this.account = await claimIds(cfg))
      const { cgroup, upperSnapshot, ...info } = await setUpUser(cfg, account)
      this.cgroup = cgroup
      if (info.upper && upperSnapshot) this.upper = { path: info.upper, snapshot: upperSnapshot }
      this.workdir = info.workdir
      this.out.send(0, { type: 'ready', ns, pid: process.pid, ...info, ...account })
    } catch (e) {
      this.out.send(0, { type: 'failed', ns, error: (e as Error).message })
    }
  }

  private async onRequest(req: Request): Promise<void> {
    if (req.op === 'run') this.startCommand(req)
    else if (req.op === 'kill') {
      const c = this.children.get(req.id)
      if (c?.pid) killTree(c.pid)
    } else if (req.op === 'forget') {
      const c = this.children.get(req.id)
      this.children.delete(req.id)
      c?.stdout?.destroy()
    } else if (req.op === 'exec') await this.exec(req)
    else if (req.op === 'stop') this.out.send(req.id, await this.stopAll())
    else if (req.op === 'upper') await this.listUpper(req.id)
  }

  private startCommand(req: Extract<Request, { op: 'run' }>): void {
    let child: ChildProcess | undefined
    let own: string | undefined
    const cgroup = this.cgroup
    try {
      // in a cgroup of its own before it runs anything: it waits on fd 3 until put there
      child = spawn((this.cfg as ServerConfig).bins.bash, ['-c', gated(SCRIPT, cgroup), 'bash'], {
        cwd: req.cwd || this.workdir,
        env: { ...req.env, __bash_agent_command: req.command },
        stdio: ['ignore', 'pipe', 'ignore', ...(cgroup.dir ? (['pipe'] as const) : [])],
        detached: true,
        ...this.account
      })
      if (child.pid !== undefined) own = joinCgroup(cgroup, child, req.id)
    } catch (e) {
      child?.kill('SIGKILL') // never run outside the limit
      child?.stdout?.destroy()
      return this.out.exit(req.id, { error: (e as Error).message })
    }
    if (child.pid === undefined) {
      // it did not start (ENOENT, EMFILE...): Node says why in its 'error', and nothing else follows
      child.on('error', e => this.out.exit(req.id, { error: e.message }))
      child.stdout?.destroy()
      return
    }
    this.children.set(req.id, child)
    // nothing is said of the start (the action would wake for it while the command runs): its exit says all
    this.follow(req.id, child, () => (oomKilled(cgroup, own) ? cgroup.limitMiB : undefined))
  }

  /**
   * A command's output and end. Its exit, then its output's close, go out in one write when both come
   * together, and then it is forgotten without being asked: one wake-up of the action, none of us.
   */
  private follow(id: number, child: ChildProcess, oom: () => number | undefined): void {
    const stdout = child.stdout as Readable
    let pendingExit: Buffer | undefined
    let exited = false
    let closed = false
    stdout.on('data', (d: Buffer) => {
      if (this.children.has(id)) this.out.data(FRAME.data, id, d, stdout)
    })
    stdout.on('close', () => {
      closed = true
      if (!this.children.has(id)) return
      if (exited) this.children.delete(id)
      this.out.write(Buffer.concat([pendingExit ?? Buffer.alloc(0), frame(FRAME.closed, id, Buffer.alloc(0))]))
      pendingExit = undefined
    })
    // after a start, an error (a failed signal) changes nothing: the exit follows
    child.on('error', () => undefined)
    child.on('exit', (code, sig) => {
      exited = true
      const msg = jsonFrame(FRAME.exit, id, { code, signal: sig, oom: oom() })
      if (closed) {
        this.children.delete(id)
        return this.out.write(msg)
      }
      pendingExit = msg
      setImmediate(() => {
        // its output is still open (a background process holds it): the exit is said now
        if (pendingExit) this.out.write(pendingExit)
        pendingExit = undefined
      })
    })
  }

  private async exec(req: Extract<Request, { op: 'exec' }>): Promise<void> {
    const r = await run(req.file, req.args, {
      cwd: req.cwd ?? this.workdir,
      env: req.env ?? quietEnv,
      input: typeof req.input === 'string' ? Buffer.from(req.input, 'base64') : undefined,
      ids: req.asRoot ? undefined : this.account,
      // raw frames as the output comes (a patch can be 100 MiB): no base64, no copy of the whole here
      onStdout: d => this.out.data(FRAME.execOut, req.id, d)
    })
    this.out.send(req.id, { code: r.code, stderr: r.stderr })
  }

  /** The upper layer, listed as root (see Request `upper`). */
  private async listUpper(id: number): Promise<void> {
    const find = (this.cfg as ServerConfig).bins.find
    if (!this.upper || !find) return this.out.send(id, { error: 'there is no upper layer' })
    const r = await listUpper(find, this.upper.path, this.upper.snapshot)
    if (r.stdout.length) this.out.data(FRAME.execOut, id, r.stdout)
    this.out.send(id, { code: r.code, stderr: r.stderr })
  }

  /** Kill everything in the namespace but us; in a namespace that is kill(-1) until /proc shows nobody. */
  async stopAll(): Promise<{ ok: boolean; detail?: string }> {
    for (const c of this.children.values()) if (c.pid) killTree(c.pid)
    for (let round = 0; round < 200; round++) {
      if (others().length === 0) return { ok: true }
      signal(-1)
      await sleep(10)
    }
    return { ok: false, detail: `${others().length} processes of the run are still alive` }
  }
}

const sleep = (ms: number) => new Promise(r => setTimeout(r, ms))

/** Live processes of this PID namespace other than us and our parent (init), from the private /proc. */
const others = (): number[] => pids().filter(p => p !== process.pid && p !== 1 && living(p))

/**
 * user mode, in order: the run's tmpfs as a new root; what is bound into it from the host (the workspace and its
 * objects, the agent's cgroup, the proxy's folder); the view entered (view.ts); the copy made in it; the process limit.
 */
async function setUpUser(cfg: ServerConfig, account: Ids): Promise<SetUpInfo & { cgroup: AgentCgroup; upperSnapshot?: Set<string> }> {
  const root = await newRoot(cfg)
  const idmapNote = await bindWorkspace(cfg, account, root)
  const { note: memoryNote, ...cgroup } = await agentCgroup(cfg, root)
  const net = cfg.net ? await netBridge(cfg, root, account) : {}
  await enterView(cfg, root, identity(cfg, account, root))
  const copy = await buildCopy(cfg, account, idmapNote)
  if (cfg.bins.prlimit && cfg.maxProcesses) {
    // inherited by every command; root (this server) is exempt
    await run(cfg.bins.prlimit, ['--pid', String(process.pid), `--nproc=${cfg.maxProcesses}:${cfg.maxProcesses}`])
  }
  return { ...copy, ...net, memoryNote, cgroup }
}
