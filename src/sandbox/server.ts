// The one place where privileged work happens: the command server.
//
// It is started once per run, as root (directly or through `sudo -n`) inside a
// new PID and mount namespace (`unshare --pid --fork --kill-child --mount-proc`,
// with bash as the namespace's init, which reaps orphans), or, where that is
// impossible, as a plain child of the action. It reads its configuration and
// then requests as JSON lines on stdin, and answers with binary frames on
// stdout. It sets up the sandbox (the user, the agent's own copy, private
// /tmp), then spawns every command (as the sandbox user in `user` mode) in
// its own process group. When it exits, the kernel kills every process of the
// namespace: nothing a command started outlives the run.
//
// It is its own bundle (dist/server/index.js, from server-main.ts), run from
// the action's own folder after the file and the node running it passed the
// trusted-file check (privilege.ts).
import { spawn, type ChildProcess as Child } from 'node:child_process'
import fs from 'node:fs'
import pathM from 'node:path'
import type { Readable } from 'node:stream'
import { FRAME, type ServerConfig } from './protocol'
import { must, quietEnv, run } from './server-exec'
import { buildCopy, ensureUser, netBridge, privateTemp, readOnlyView } from './server-setup'

export function commandServer(): void {
  const out = process.stdout
  const framed = (type: number, id: number, payload: Buffer): Buffer => {
    const h = Buffer.allocUnsafe(9)
    h.writeUInt32BE(payload.length, 0)
    h.writeUInt32BE(id, 4)
    h.writeUInt8(type, 8)
    return Buffer.concat([h, payload])
  }
  const frame = (type: number, id: number, payload: Buffer): void => void out.write(framed(type, id, payload))
  const json = (msg: unknown): Buffer => Buffer.from(JSON.stringify(msg))
  const send = (id: number, msg: unknown, type = 0): void => frame(type, id, json(msg))
  /** commands' outputs paused until our stdout drains */
  const paused = new Set<Readable>()
  /** output bytes since the last young-generation collection */
  let passed = 0
  out.on('drain', () => {
    for (const s of paused) s.resume()
    paused.clear()
  })
  /** Live processes of this PID namespace other than us and our parent (init), from the private /proc. */
  const others = (): number[] => {
    const list: number[] = []
    for (const n of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(n)) continue
      const pid = Number(n)
      if (pid === process.pid || pid === 1) continue
      try {
        const st = fs.readFileSync(`/proc/${n}/stat`, 'latin1')
        const state = st.slice(st.lastIndexOf(')') + 2, st.lastIndexOf(')') + 3)
        if (state !== 'Z' && state !== 'X') list.push(pid)
      } catch {
        // gone
      }
    }
    return list
  }

  let cfg: ServerConfig
  let account: { uid: number; gid: number } | undefined
  let workdir = ''
  const children = new Map<number, Child>()

  const setUp = async (): Promise<Record<string, unknown>> => {
    if (cfg.mode === 'none') {
      if (cfg.dropTo) {
        // the runner user keeps its groups (docker...), as outside the sandbox
        const p = process as unknown as { initgroups(u: string, g: number): void; setgid(g: number): void; setuid(u: number): void }
        p.initgroups(cfg.dropTo.name, cfg.dropTo.gid)
        p.setgid(cfg.dropTo.gid)
        p.setuid(cfg.dropTo.uid)
      }
      workdir = cfg.workspace
      return { workdir }
    }
    account = await ensureUser(cfg)
    const copy = await buildCopy(cfg, account)
    workdir = copy.workdir
    let viewProblems: string[] = []
    const net = cfg.net ? await netBridge(cfg) : {}
    if (cfg.namespaced) {
      await privateTemp(cfg)
      // the run's home and temp: mount points of their own, so they stay writable in the read-only view
      for (const d of [copy.home, copy.tmp]) {
        await must('the run folders', cfg.bins.mount, ['--bind', d, d])
        await must('the run folders', cfg.bins.mount, ['-o', 'remount,bind,nosuid,nodev', d])
      }
      const temps = ['/tmp', '/var/tmp', '/dev/shm', '/run/lock']
      const keep = [copy.workdir, copy.home, copy.tmp, pathM.join(cfg.runDir as string, 'layers'), ...temps]
      viewProblems = await readOnlyView(cfg, keep)
    }
    if (cfg.bins.prlimit && cfg.maxProcesses) {
      // inherited by every command; root (this server) is exempt
      await run(cfg.bins.prlimit, ['--pid', String(process.pid), `--nproc=${cfg.maxProcesses}:${cfg.maxProcesses}`])
    }
    return { ...copy, ...net, uid: account.uid, gid: account.gid, viewProblems }
  }

  const ids = () => (account ? { uid: account.uid, gid: account.gid } : undefined)

  /** Kill every process group of `pid`'s descendants, and its own. */
  const killTree = (pid: number): void => {
    const parent = new Map<number, number>()
    const group = new Map<number, number>()
    try {
      for (const n of fs.readdirSync('/proc')) {
        if (!/^\d+$/.test(n)) continue
        try {
          const st = fs.readFileSync(`/proc/${n}/stat`, 'latin1')
          const f = st.slice(st.lastIndexOf(')') + 2).split(' ')
          parent.set(Number(n), Number(f[1]))
          group.set(Number(n), Number(f[2]))
        } catch {
          // gone
        }
      }
    } catch {
      // no /proc
    }
    const groups = new Set([pid])
    const queue = [pid]
    while (queue.length) {
      const p = queue.shift() as number
      for (const [c, pp] of parent) {
        if (pp === p) {
          queue.push(c)
          const g = group.get(c)
          if (g && g > 1) groups.add(g)
        }
      }
    }
    for (const g of groups) {
      try {
        process.kill(-g, 'SIGKILL')
      } catch {
        // gone
      }
    }
  }

  /** Kill everything in the namespace but us; in a namespace that is kill(-1) until /proc shows nobody. */
  const stopAll = async (): Promise<{ ok: boolean; detail?: string }> => {
    for (const c of children.values()) if (c.pid) killTree(c.pid)
    if (!cfg.namespaced) {
      // best effort: what still carries the run's key in its environment (env -i escapes it)
      const entry = Buffer.from(`\0BASH_AGENT_RUN=${cfg.runKey}\0`)
      for (let round = 0; cfg.runKey && round < 20; round++) {
        let found = 0
        for (const n of fs.existsSync('/proc') ? fs.readdirSync('/proc') : []) {
          if (!/^\d+$/.test(n) || Number(n) === process.pid) continue
          try {
            const env = Buffer.concat([Buffer.from([0]), fs.readFileSync(`/proc/${n}/environ`)])
            if (env.includes(entry)) {
              process.kill(Number(n), 'SIGKILL')
              found++
            }
          } catch {
            // gone, or not ours
          }
        }
        if (!found) break
        await new Promise(r => setTimeout(r, 10))
      }
      return {
        ok: false,
        detail: "no PID namespace here: the commands' process trees were killed, but what detached from them could not be verified gone"
      }
    }
    for (let round = 0; round < 200; round++) {
      const left = others()
      if (left.length === 0) return { ok: true }
      try {
        process.kill(-1, 'SIGKILL')
      } catch {
        // nothing we may signal
      }
      await new Promise(r => setTimeout(r, 10))
    }
    return { ok: false, detail: `${others().length} processes of the run are still alive` }
  }

  // One bash per command (no second program): stderr joins stdout, then the
  // command runs as the script's own text would, with no positional parameters.
  const SCRIPT = 'exec 2>&1; __bash_agent_command=$1; shift; eval "unset __bash_agent_command; $__bash_agent_command"'
  const onRequest = async (req: Record<string, unknown>): Promise<void> => {
    const id = Number(req.id)
    if (req.op === 'run') {
      let child: Child
      try {
        child = spawn(cfg.bins.bash, ['-c', SCRIPT, 'bash', String(req.command)], {
          cwd: String(req.cwd ?? workdir),
          env: req.env as Record<string, string>,
          stdio: ['ignore', 'pipe', 'ignore'],
          detached: true,
          ...(ids() ?? {})
        })
      } catch (e) {
        send(id, { error: (e as Error).message }, 2)
        return
      }
      children.set(id, child)
      send(id, { pid: child.pid })
      // The end of a command (its exit, then its output's close) goes out in one write when both come
      // together, and then the command is forgotten without being asked: one wake-up of the action, none of us.
      let pendingExit: Buffer | undefined
      let exited = false
      let closed = false
      const stdout = child.stdout
      stdout?.on('data', (d: Buffer) => {
        if (!children.has(id)) return
        // the header, then the chunk itself: no copy of it
        const h = Buffer.allocUnsafe(9)
        h.writeUInt32BE(d.length, 0)
        h.writeUInt32BE(id, 4)
        h.writeUInt8(1, 8)
        passed += d.length
        if (passed >= 1024 * 1024) {
          passed = 0
          ;(globalThis as { gc?: (o: { type: 'minor' }) => void }).gc?.({ type: 'minor' })
        }
        out.cork()
        out.write(h)
        const more = out.write(d)
        out.uncork()
        if (more) return
        // the action reads slower than the command prints: wait, or our stdout buffer grows with the output
        stdout.pause()
        paused.add(stdout)
      })
      child.stdout?.on('close', () => {
        closed = true
        if (!children.has(id)) return
        if (exited) children.delete(id)
        out.write(Buffer.concat([pendingExit ?? Buffer.alloc(0), framed(3, id, Buffer.alloc(0))]))
        pendingExit = undefined
      })
      child.on('error', e => send(id, { error: e.message }, 2))
      child.on('exit', (code, signal) => {
        exited = true
        const msg = framed(2, id, json({ code, signal }))
        if (closed) {
          children.delete(id)
          out.write(msg)
          return
        }
        pendingExit = msg
        setImmediate(() => {
          // its output is still open (a background process holds it): the exit is said now
          if (pendingExit) out.write(pendingExit)
          pendingExit = undefined
        })
      })
    } else if (req.op === 'kill') {
      const c = children.get(id)
      if (c?.pid) killTree(c.pid)
    } else if (req.op === 'forget') {
      const c = children.get(id)
      children.delete(id)
      c?.stdout?.destroy()
    } else if (req.op === 'exec') {
      const r = await run(String(req.file), req.args as string[], {
        cwd: String(req.cwd ?? workdir),
        env: (req.env as Record<string, string>) ?? quietEnv,
        input: typeof req.input === 'string' ? Buffer.from(req.input, 'base64') : undefined,
        ids: ids(),
        // raw frames as the output comes (a patch can be 100 MiB): no base64, no copy of the whole here
        onStdout: d => frame(FRAME.execOut, id, d)
      })
      send(id, { code: r.code, stderr: r.stderr })
    } else if (req.op === 'stop') {
      send(id, await stopAll())
    }
  }

  // --- the protocol: the first line is the configuration, then one request a line
  let buffered = ''
  let ready: Promise<void> | undefined
  process.stdin.setEncoding('utf8')
  process.stdin.on('data', (d: string) => {
    buffered += d
    let nl: number
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl)
      buffered = buffered.slice(nl + 1)
      const msg = JSON.parse(line) as Record<string, unknown>
      if (!ready) {
        cfg = msg as unknown as ServerConfig
        let ns = ''
        try {
          ns = fs.readlinkSync('/proc/self/ns/pid')
        } catch {
          // no /proc
        }
        ready = setUp().then(
          info => send(0, { type: 'ready', ns, pid: process.pid, ...info }),
          e => send(0, { type: 'failed', ns, error: (e as Error).message })
        )
      } else {
        void ready.then(() => onRequest(msg)).catch(e => send(Number(msg.id), { error: (e as Error).message }, 2))
      }
    }
  })
  // The action is gone (or done): end, and with us the namespace and all it holds.
  process.stdin.on('end', () => {
    void stopAll().finally(() => process.exit(0))
  })
  process.on('SIGTERM', () => undefined)
  process.on('SIGINT', () => undefined)
}
