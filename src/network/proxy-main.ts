// The proxy's entry, a bundle of its own (dist/proxy/index.js): `node dist/proxy/index.js <config>`,
// started by the action (launch.ts) with a clean environment, already as the run's uid and gid, no
// supplementary groups, no new privileges (setpriv, from its first instruction): it never runs as root,
// so it is not part of the root bundle (src/trusted/) and refuses to run as uid 0. It binds its UNIX
// socket in `<runDir>/net`, a folder the command server made 0700 for the run's uid (src/trusted/view.ts).
// One JSON line per event on stdout; ends when stdin closes. Imports only `node:` and this folder.
import fs from 'node:fs'
import { createProxy, type ProxyEvent } from './proxy'
import { parseAllowedDomains } from './allowlist'

export function serveProxy(config: string): void {
  const say = (msg: unknown) => process.stdout.write(`${JSON.stringify(msg)}\n`)
  process.stdout.on('error', () => process.exit(0))
  const fail = (why: string) => {
    say({ t: 'error', why })
    process.exit(1)
  }
  try {
    const cfg = JSON.parse(config) as { socket: string; uid: number; allowed: string[]; presets?: Record<string, string[]> }
    // it parses what the agent sends: never as root, and only as the run's own uid
    const uid = process.getuid?.()
    if (uid === 0 || uid !== cfg.uid) return fail(`the proxy runs as uid ${uid}, not as the run's user (${cfg.uid}): refused`)
    const parse = (hosts: string[]) => parseAllowedDomains(hosts.join('\n'))
    // presets arrive as plain host entries in `allowed`; their names only to say which preset a refused host is of
    const presets = Object.fromEntries(Object.entries(cfg.presets ?? {}).map(([name, hosts]) => [name, parse(hosts)]))
    const server = createProxy({ allow: parse(cfg.allowed), presets, onEvent: (e: ProxyEvent) => say(e) })
    fs.rmSync(cfg.socket, { force: true })
    server.listen(cfg.socket, () => {
      try {
        fs.chmodSync(cfg.socket, 0o600)
        say({ t: 'ready', uid })
      } catch (e) {
        fail((e as Error).message)
      }
    })
    server.on('error', e => fail(e.message))
  } catch (e) {
    return fail((e as Error).message)
  }
  process.stdin.on('data', () => undefined)
  process.stdin.on('end', () => process.exit(0))
  process.stdin.on('error', () => process.exit(0))
  process.on('uncaughtException', e => say({ t: 'failed', host: '', port: 0, why: `proxy error: ${e.message}` }))
}

serveProxy(process.argv[process.argv.length - 1])
