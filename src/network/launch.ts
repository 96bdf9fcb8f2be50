// The action's side of the proxy: starts it as the run's uid and gid from its
// first instruction (setpriv, never root: it parses what the agent sends), with a
// clean environment (no token, no key, no INPUT_*), counts what it reports, logs
// each refusal, and stops it at release.
import { spawn } from 'node:child_process'
import { statSync } from 'node:fs'
import path from 'node:path'
import { asRootArgv, serverBundle, trustedFile, type Privilege } from '../sandbox/privilege'
import type { ProxyEvent } from './proxy'
import { expandPresets, PRESETS } from './presets'

/** What the report says about the network. */
export type NetworkReport =
  | { contained: false; why: string }
  | {
      contained: true
      /** why nothing could go out at all, when so */
      problem?: string
      reached: Array<{ host: string; count: number }>
      /** `preset`: the preset the host belongs to (then `line` is the preset's name) */
      refused: Array<{ host: string; count: number; line?: string; why: string; preset?: string }>
      /** hosts beyond the tally's bound, counted only */
      otherReached: number
      otherRefused: number
    }

const MAX_HOSTS = 1000
const MAX_LOGGED = 200

export interface ProxyProcess {
  report(): NetworkReport
  stop(): Promise<void>
}

/** The proxy's program: its bundle beside the action (dist/proxy/index.js), when nobody but root or us could have changed it. */
export function proxySource(avoid?: string): string | undefined {
  try {
    return trustedFile(path.join(path.dirname(path.dirname(serverBundle())), 'proxy', 'index.js'), avoid)
  } catch {
    return undefined
  }
}

/**
 * Why a uid that is neither the owner nor in the group of any folder (the run's fresh user) could not run
 * `file` (`bit` 1: execute it, 4: read it), or undefined: every folder above needs others' x.
 */
export function closedToOthers(file: string, bit: 1 | 4): string | undefined {
  try {
    if ((statSync(file).mode & bit) === 0) return `${file} is not ${bit === 1 ? 'executable' : 'readable'} by others`
    for (let d = path.dirname(file); ; d = path.dirname(d)) {
      if ((statSync(d).mode & 1) === 0) return `${d} is closed to other users`
      if (d === path.dirname(d)) return undefined
    }
  } catch (e) {
    return (e as Error).message
  }
}

/** The argv that starts the proxy as `uid`:`gid`, no groups, no new privileges, from its first instruction (as root through sudo when we are not). */
export function proxyArgv(o: {
  priv: Privilege
  setpriv: string
  node: string
  source: string
  uid: number
  gid: number
  config: string
}): string[] {
  const drop = [o.setpriv, `--reuid=${o.uid}`, `--regid=${o.gid}`, '--clear-groups', '--no-new-privs', '--']
  return asRootArgv(o.priv, [...drop, o.node, o.source, o.config])
}

/** The tally of what the proxy reported, bounded; refusals are logged (the first MAX_LOGGED). */
class Tally {
  private readonly reached = new Map<string, number>()
  private readonly refused = new Map<string, { count: number; line?: string; why: string; preset?: string }>()
  private otherReached = 0
  private otherRefused = 0
  private logged = 0

  constructor(private readonly log: (m: string) => void) {}

  count(e: ProxyEvent): void {
    if (e.t === 'reached') {
      if (this.reached.has(e.host) || this.reached.size < MAX_HOSTS) this.reached.set(e.host, (this.reached.get(e.host) ?? 0) + 1)
      else this.otherReached++
    } else if (e.t === 'refused') {
      const r = this.refused.get(e.host)
      if (r) r.count++
      else if (this.refused.size < MAX_HOSTS)
        this.refused.set(e.host, { count: 1, line: e.line, why: e.why, ...(e.preset ? { preset: e.preset } : {}) })
      else this.otherRefused++
      if (this.logged++ < MAX_LOGGED)
        this.log(
          `Network: refused ${e.host}:${e.port} (${e.why})${e.preset ? `; it is a host of the preset ${e.preset}` : ''}${e.line ? `; allowed-domains would need the line: ${e.line}` : ''}`
        )
      else if (this.logged === MAX_LOGGED + 1) this.log('Network: further refusals are counted in the report, not logged.')
    }
  }

  report(problem: string | undefined): NetworkReport {
    return {
      contained: true,
      problem,
      reached: [...this.reached].map(([host, count]) => ({ host, count })).sort((a, b) => b.count - a.count),
      refused: [...this.refused].map(([host, r]) => ({ host, ...r })).sort((a, b) => b.count - a.count),
      otherReached: this.otherReached,
      otherRefused: this.otherRefused
    }
  }
}

/** Calls `fn` with each JSON line the stream writes (other lines are skipped). */
function onJsonLines<T>(stream: NodeJS.ReadableStream | null, fn: (value: T) => void): void {
  let buf = ''
  stream?.on('data', (d: Buffer) => {
    buf += d.toString()
    let nl: number
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl)
      buf = buf.slice(nl + 1)
      try {
        fn(JSON.parse(line) as T)
      } catch {
        // not a line of ours
      }
    }
    if (buf.length > 65536) buf = ''
  })
}

export interface ProxyStart {
  priv: Privilege
  /** setpriv (util-linux), found as a trusted system program */
  setpriv: string
  node: string
  source: string
  socket: string
  uid: number
  gid: number
  allowed: string[]
  log: (m: string) => void
}

export function startProxyProcess(o: ProxyStart): Promise<ProxyProcess> {
  // it runs as the run's fresh user: node and its bundle must be reachable by others, or it is said why not
  const closed = closedToOthers(o.node, 1) ?? closedToOthers(o.source, 4)
  if (!closed) return spawnProxy(o)
  const problem = `the proxy could not start as the run's user (${closed}), so the commands had no network at all`
  o.log(`Network: ${problem}.`)
  const report = new Tally(o.log).report(problem)
  return Promise.resolve({ report: () => report, stop: () => Promise.resolve() })
}

function spawnProxy(o: ProxyStart): Promise<ProxyProcess> {
  const tally = new Tally(o.log)
  let problem: string | undefined
  let stopping = false
  // presets reach the proxy as plain host entries; their names only to name a refused host's preset
  const config = JSON.stringify({ socket: o.socket, uid: o.uid, allowed: expandPresets(o.allowed), presets: PRESETS })
  const argv = proxyArgv({ ...o, config })
  const child = spawn(argv[0], argv.slice(1), { cwd: '/', stdio: ['pipe', 'pipe', 'ignore'], env: { PATH: '/usr/bin:/bin', LANG: 'C' } })
  child.stdin?.on('error', () => undefined)
  const exited = new Promise<void>(r => child.on('close', () => r()))
  const handle: ProxyProcess = {
    report: () => tally.report(problem),
    stop: async () => {
      stopping = true
      child.stdin?.end()
      const t = setTimeout(() => child.kill('SIGKILL'), 3000)
      await exited
      clearTimeout(t)
    }
  }
  return new Promise(resolve => {
    let ready = false
    const fail = (why: string) => {
      if (ready) {
        if (!stopping) problem ??= `the proxy stopped (${why}); nothing could go out after that`
        return
      }
      ready = true
      problem = `the proxy could not start (${why}), so the commands had no network at all`
      o.log(`Network: ${problem}.`)
      child.kill('SIGKILL')
      resolve(handle)
    }
    onJsonLines(child.stdout, (e: ProxyEvent | { t: 'ready' } | { t: 'error'; why: string }) => {
      if (e.t === 'ready') {
        ready = true
        resolve(handle)
      } else if (e.t === 'error') fail(e.why)
      else tally.count(e)
    })
    child.on('error', e => fail(e.message))
    child.on('close', code => fail(`exit ${code}`))
    setTimeout(() => ready || fail('it did not start within 20 s'), 20_000).unref()
  })
}
