// The action's end of the command server's pipe: JSON lines out, binary frames in.
import { spawn, type ChildProcess } from 'node:child_process'
import { EventEmitter } from 'node:events'
import { PassThrough } from 'node:stream'
import {
  FRAME,
  HEADER_BYTES,
  type ExecResult,
  type Exited,
  type Message,
  type Ready,
  type Request,
  type ServerConfig
} from '../trusted/protocol'
import type { Started } from '../environments/types'

/** One running command, as runBash follows it. */
class RemoteCommand extends EventEmitter implements Started {
  readonly stdout = new PassThrough()
  /** its exit and the end of its output both came: the server has forgotten it already */
  exited = false
  ended = false
  /** the kernel killed one of this command's own processes (its cgroup's) for memory: the limit in MiB */
  oom?: number
  constructor(
    private readonly server: ServerClient,
    readonly id: number
  ) {
    super()
  }
  kill(): void {
    this.server.request({ op: 'kill', id: this.id })
  }
  onExit(msg: Exited): void {
    this.exited = true
    if ('oom' in msg && typeof msg.oom === 'number') this.oom = msg.oom
    // an error is a command that never started (the server says nothing of a start)
    if ('error' in msg) this.emit('error', new Error(msg.error))
    else this.emit('exit', 'code' in msg ? msg.code : null)
  }
  forget(): void {
    this.server.drop(this.id)
  }
}

const EMPTY = Buffer.alloc(0)

export class ServerClient {
  private nextId = 1
  private readonly commands = new Map<number, RemoteCommand>()
  private readonly waiting = new Map<number, (msg: Message) => void>()
  /** the output not yet cut into frames, and the header of the frame being read */
  private parts: Buffer[] = []
  /** the first part not yet taken (an index, not shift(): a frame may lie in thousands of small chunks) */
  private first = 0
  private partsLength = 0
  private header: { length: number; id: number; type: number } | undefined
  /** the output of each running exec, chunk by chunk (joined once, at its end) */
  private readonly execOut = new Map<number, Buffer[]>()
  private exited = false
  readonly ready: Promise<Ready>
  /** resolves when the server's process tree has exited */
  readonly closed: Promise<number | null>

  constructor(
    private readonly child: ChildProcess,
    config: ServerConfig
  ) {
    let onReady: (r: Ready) => void = () => undefined
    let onFail: (e: Error) => void = () => undefined
    this.ready = new Promise<Ready>((res, rej) => {
      onReady = res
      onFail = rej
    })
    let stderr = ''
    child.stderr?.on('data', (d: Buffer) => {
      if (stderr.length < 4000) stderr += d.toString()
    })
    this.waiting.set(0, msg => {
      if ('type' in msg && msg.type === 'ready') onReady(msg)
      // a refusal (no safe user, a copy that failed): the caller may fall back to none
      else onFail(Object.assign(new Error('error' in msg ? msg.error : 'the command server did not start'), { refused: true }))
    })
    child.stdout?.on('data', (d: Buffer) => this.onData(d))
    this.closed = new Promise(resolve => {
      child.on('error', e => {
        onFail(e)
        resolve(null)
      })
      child.on('close', code => {
        this.exited = true
        onFail(new Error(`the command server ended (${(stderr.trim() || `exit ${code}`).split('\n')[0]})`))
        for (const c of this.commands.values()) {
          c.emit('exit', null)
          c.stdout.end()
        }
        this.commands.clear()
        for (const w of this.waiting.values()) w({ error: 'the command server ended' })
        this.waiting.clear()
        resolve(code)
      })
    })
    child.stdin?.on('error', () => undefined)
    child.stdin?.write(`${JSON.stringify(config)}\n`)
  }

  get alive(): boolean {
    return !this.exited
  }

  request(msg: Request): void {
    if (this.exited) return
    this.child.stdin?.write(`${JSON.stringify(msg)}\n`)
  }

  private ask(msg: (id: number) => Request, before?: (id: number) => void): Promise<Message> {
    const id = this.nextId++
    return new Promise(resolve => {
      if (this.exited) return resolve({ error: 'the command server ended' })
      before?.(id)
      this.waiting.set(id, r => {
        this.execOut.delete(id)
        resolve(r)
      })
      this.request(msg(id))
    })
  }

  private onData(d: Buffer): void {
    // Frames are cut from the chunks as views, never joined here: an exec's output (a patch can be
    // 100 MiB) is copied once, at its end; a frame straddling chunks costs no copy of it.
    this.parts.push(d)
    this.partsLength += d.length
    for (;;) {
      if (!this.header) {
        if (this.partsLength < HEADER_BYTES) return
        const h = this.take(HEADER_BYTES)
        const b = h.length === 1 ? h[0] : Buffer.concat(h)
        this.header = { length: b.readUInt32BE(0), id: b.readUInt32BE(4), type: b.readUInt8(8) }
      }
      if (this.partsLength < this.header.length) return
      const { type, id, length } = this.header
      this.header = undefined
      this.onFrame(type, id, this.take(length))
    }
  }

  /** The next `n` bytes, as views of the chunks that hold them. */
  private take(n: number): Buffer[] {
    const out: Buffer[] = []
    this.partsLength -= n
    while (n > 0) {
      const p = this.parts[this.first]
      if (p.length <= n) {
        out.push(p)
        this.parts[this.first++] = EMPTY // not kept by this list until it is compacted
        n -= p.length
      } else {
        out.push(p.subarray(0, n))
        this.parts[this.first] = p.subarray(n)
        n = 0
      }
    }
    if (this.first === this.parts.length) {
      this.parts = []
      this.first = 0
    } else if (this.first >= 1024) {
      this.parts = this.parts.slice(this.first)
      this.first = 0
    }
    return out
  }

  private onFrame(type: number, id: number, payload: Buffer[]): void {
    const cmd = this.commands.get(id)
    // an exec's output is all kept and joined once at its end: views, not copies;
    // a command's output is copied, as only a bounded part of it is kept
    if (type === FRAME.execOut) this.execOut.get(id)?.push(...payload)
    else if (type === FRAME.data) cmd?.stdout.write(Buffer.concat(payload))
    else if (type === FRAME.closed) {
      if (cmd) cmd.ended = true
      cmd?.stdout.end()
    } else if (cmd && type === FRAME.exit) cmd.onExit(JSON.parse(Buffer.concat(payload).toString()) as Exited)
    else if (type === FRAME.message) {
      if (!cmd) this.answer(id, JSON.parse(Buffer.concat(payload).toString()) as Message)
    }
  }

  private answer(id: number, msg: Message): void {
    const w = this.waiting.get(id)
    if (!w) return
    if (id !== 0) this.waiting.delete(id)
    w(msg)
  }

  /** Start one command; it is ours until forgotten. */
  start(command: string, cwd: string, env: Record<string, string>): RemoteCommand {
    const id = this.nextId++
    const cmd = new RemoteCommand(this, id)
    this.commands.set(id, cmd)
    if (this.exited) {
      queueMicrotask(() => cmd.emit('error', new Error('the command server ended')))
      return cmd
    }
    this.request({ op: 'run', id, command, cwd, env })
    return cmd
  }

  /** Nothing more of command `id` is wanted: its frames are no longer sent. */
  drop(id: number): void {
    const cmd = this.commands.get(id)
    this.commands.delete(id)
    if (!(cmd?.exited && cmd.ended)) this.request({ op: 'forget', id })
  }

  async exec(
    file: string,
    args: string[],
    o: { cwd?: string; input?: Buffer; env?: Record<string, string>; asRoot?: boolean } = {}
  ): Promise<ExecResult> {
    const out: Buffer[] = []
    const r = await this.ask(
      id => ({ op: 'exec', id, file, args, cwd: o.cwd, env: o.env, input: o.input?.toString('base64'), asRoot: o.asRoot }),
      id => this.execOut.set(id, out)
    )
    if ('error' in r) return { code: null, stdout: Buffer.alloc(0), stderr: r.error }
    if (!('stderr' in r)) return { code: null, stdout: Buffer.alloc(0), stderr: 'the command server answered something else' }
    return { code: r.code, stdout: Buffer.concat(out), stderr: r.stderr }
  }

  /** The overlay's upper layer listed by the server as root (Request `upper`). */
  async listUpper(): Promise<ExecResult> {
    const out: Buffer[] = []
    const r = await this.ask(
      id => ({ op: 'upper', id }),
      id => this.execOut.set(id, out)
    )
    if ('error' in r) return { code: null, stdout: Buffer.alloc(0), stderr: r.error }
    if (!('stderr' in r)) return { code: null, stdout: Buffer.alloc(0), stderr: 'the command server answered something else' }
    return { code: r.code, stdout: Buffer.concat(out), stderr: r.stderr }
  }

  async stop(): Promise<{ ok: boolean; detail?: string }> {
    const r = await this.ask(id => ({ op: 'stop', id }))
    if ('error' in r) return { ok: false, detail: r.error }
    return 'ok' in r ? { ok: r.ok, detail: r.detail } : { ok: false, detail: 'the command server answered something else' }
  }

  /** End the server (stdin closed): it kills what is left and exits, and the namespace with it. */
  async end(maxMs: number): Promise<boolean> {
    this.child.stdin?.end()
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<false>(r => (timer = setTimeout(() => r(false), maxMs)))
    const done = await Promise.race([this.closed.then(() => true), late])
    clearTimeout(timer)
    return done
  }
}

/**
 * Start the server: `argv` is the launcher (sudo, unshare...) and the node program, `bundle` the server's
 * bundle (dist/trusted/index.js, trusted-checked by the caller). `key` marks the process as this run's.
 */
export function startServer(argv: string[], bundle: string, config: ServerConfig, key: string): ServerClient {
  // Each chunk of a command's output passes through the server as a buffer outside the JS heap, which
  // V8 collects only after tens of megabytes: the server collects young garbage itself (--expose-gc).
  const child = spawn(argv[0], [...argv.slice(1), '--expose-gc', '--max-semi-space-size=1', bundle, 'serve', key], {
    cwd: '/',
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', LANG: 'C', LC_ALL: 'C' },
    // its own session: a signal to the action's process group (a cancel) does not hit it first
    detached: true
  })
  child.stdin?.on('error', () => undefined)
  return new ServerClient(child, config)
}

/** `p`, or a rejection after `ms` (set-up that takes too long). */
export function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  return Promise.race([
    p,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`set-up took longer than ${Math.round(ms / 1000)} s`)), ms)
    })
  ]).finally(() => clearTimeout(timer))
}

export type { RemoteCommand, Ready }
