// The proxy (`node dist/trusted/index.js proxy <config>`, started by the action
// with a clean environment). Started as root: it listens on the
// UNIX socket in the run's root-owned folder (so the agent cannot put another
// socket in its place), then drops to the sandbox user before it reads a byte
// the agent sent. One JSON line per event on stdout; ends when stdin closes.
import fs from 'node:fs'
import { createProxy, type ProxyEvent } from './proxy'
import { parseAllowedDomains } from './allowlist'

export function serveProxy(config: string): void {
  const cfg = JSON.parse(config) as { socket: string; uid: number; gid: number; allowed: string[]; presets?: Record<string, string[]> }
  const parse = (hosts: string[]) => parseAllowedDomains(hosts.join('\n'))
  const say = (msg: unknown) => process.stdout.write(`${JSON.stringify(msg)}\n`)
  process.stdout.on('error', () => process.exit(0))
  try {
    // presets arrive as plain host entries in `allowed`; their names only to say which preset a refused host is of
    const presets = Object.fromEntries(Object.entries(cfg.presets ?? {}).map(([name, hosts]) => [name, parse(hosts)]))
    const server = createProxy({ allow: parse(cfg.allowed), presets, onEvent: (e: ProxyEvent) => say(e) })
    fs.rmSync(cfg.socket, { force: true })
    server.listen(cfg.socket, () => {
      try {
        fs.chmodSync(cfg.socket, 0o600)
        const p = process as unknown as { setgroups(g: number[]): void; setgid(g: number): void; setuid(u: number): void; getuid(): number }
        if (p.getuid() === 0) {
          p.setgroups([])
          p.setgid(cfg.gid)
          p.setuid(cfg.uid)
        }
        if (p.getuid() === 0 || p.getuid() !== cfg.uid) throw new Error('could not drop to the sandbox user')
        say({ t: 'ready', uid: p.getuid() })
      } catch (e) {
        say({ t: 'error', why: (e as Error).message })
        process.exit(1)
      }
    })
    server.on('error', e => {
      say({ t: 'error', why: e.message })
      process.exit(1)
    })
  } catch (e) {
    say({ t: 'error', why: (e as Error).message })
    process.exit(1)
  }
  process.stdin.on('data', () => undefined)
  process.stdin.on('end', () => process.exit(0))
  process.stdin.on('error', () => process.exit(0))
  process.on('uncaughtException', e => say({ t: 'failed', host: '', port: 0, why: `proxy error: ${e.message}` }))
}
