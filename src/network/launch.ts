// The action's side of the proxy: starts it (root only to bind its socket,
// then the sandbox user; a clean environment: no token, no key, no INPUT_*),
// counts what it reports, logs each refusal, and stops it at release.
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { asRootArgv, trustedFile, type Privilege } from '../sandbox/privilege'
import type { ProxyEvent } from './proxy'

/** What the report says about the network. */
export type NetworkReport =
  | { contained: false; why: string }
  | {
      contained: true
      /** why nothing could go out at all, when so */
      problem?: string
      reached: Array<{ host: string; count: number }>
      refused: Array<{ host: string; count: number; line?: string; why: string }>
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

/** The proxy's program, built beside the action (dist/proxy/index.js), when nobody but root or us could have changed it. */
export function proxySource(avoid?: string): string | undefined {
  try {
    // through a variable: `new URL(<literal>, import.meta.url)` would make the bundler take the file in as an asset
    const here = import.meta.url
    const file = trustedFile(fileURLToPath(new URL('proxy/index.js', here)), avoid)
    return file ? readFileSync(file, 'utf8') : undefined
  } catch {
    return undefined
  }
}

export function startProxyProcess(o: {
  priv: Privilege
  node: string
  source: string
  socket: string
  uid: number
  gid: number
  allowed: string[]
  log: (m: string) => void
}): Promise<ProxyProcess> {
  const reached = new Map<string, number>()
  const refused = new Map<string, { count: number; line?: string; why: string }>()
  let otherReached = 0
  let otherRefused = 0
  let logged = 0
  let problem: string | undefined
  let stopping = false
  const cfg = JSON.stringify({ socket: o.socket, uid: o.uid, gid: o.gid, allowed: o.allowed })
  const argv = asRootArgv(o.priv, [o.node, '--input-type=module', '-e', o.source, cfg])
  const child = spawn(argv[0], argv.slice(1), { cwd: '/', stdio: ['pipe', 'pipe', 'ignore'], env: { PATH: '/usr/bin:/bin', LANG: 'C' } })
  child.stdin?.on('error', () => undefined)
  const exited = new Promise<void>(r => child.on('close', () => r()))
  const handle: ProxyProcess = {
    report: () => ({
      contained: true,
      problem,
      reached: [...reached].map(([host, count]) => ({ host, count })).sort((a, b) => b.count - a.count),
      refused: [...refused].map(([host, r]) => ({ host, ...r })).sort((a, b) => b.count - a.count),
      otherReached,
      otherRefused
    }),
    stop: async () => {
      stopping = true
      child.stdin?.end()
      const t = setTimeout(() => child.kill('SIGKILL'), 3000)
      await exited
      clearTimeout(t)
    }
  }
  return new Promise(resolve => {
    let buf = ''
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
    const onEvent = (e: ProxyEvent | { t: 'ready' } | { t: 'error'; why: string }) => {
      if (e.t === 'ready') {
        ready = true
        return resolve(handle)
      }
      if (e.t === 'error') return fail(e.why)
      if (e.t === 'reached') {
        if (reached.has(e.host) || reached.size < MAX_HOSTS) reached.set(e.host, (reached.get(e.host) ?? 0) + 1)
        else otherReached++
      } else if (e.t === 'refused') {
        const r = refused.get(e.host)
        if (r) r.count++
        else if (refused.size < MAX_HOSTS) refused.set(e.host, { count: 1, line: e.line, why: e.why })
        else otherRefused++
        if (logged++ < MAX_LOGGED)
          o.log(`Network: refused ${e.host}:${e.port} (${e.why})${e.line ? `; allowed-domains would need the line: ${e.line}` : ''}`)
        else if (logged === MAX_LOGGED + 1) o.log('Network: further refusals are counted in the report, not logged.')
      }
    }
    child.stdout?.on('data', (d: Buffer) => {
      buf += d.toString()
      let nl: number
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl)
        buf = buf.slice(nl + 1)
        try {
          onEvent(JSON.parse(line))
        } catch {
          // not a line of ours
        }
      }
      if (buf.length > 65536) buf = ''
    })
    child.on('error', e => fail(e.message))
    child.on('close', code => fail(`exit ${code}`))
    setTimeout(() => fail('it did not start within 20 s'), 20_000).unref()
  })
}
