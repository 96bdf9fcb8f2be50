// The run's proxy is never root (issue 37): the action starts the built dist/proxy/index.js through setpriv as
// the run's uid and gid from its first instruction (root to a non-root uid: the kernel clears every
// capability), and the proxy itself refuses to run as root. Through real setpriv and sudo, as the action does.
import { afterAll, describe, expect, it } from '@jest/globals'
import { spawn, spawnSync } from 'node:child_process'
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { closedToOthers, proxyArgv, proxySource, startProxyProcess, type ProxyProcess } from '../src/network/launch'
import { findPrivilege, findProgram, type Privilege } from '../src/sandbox/privilege'
import { hasSudo, isRoot } from './helpers/kinds'
import { REPO_ROOT } from './helpers/run-action'

const BUNDLE = join(REPO_ROOT, 'dist', 'proxy', 'index.js')
/** A uid and gid nobody on this machine has, as the run's fresh user would be. */
const UID = 61000 + Math.floor(Math.random() * 3000)
const made: string[] = []
afterAll(() => made.forEach(d => rmSync(d, { recursive: true, force: true })))

/** A run folder as the command server leaves it: `<dir>` root's 0711, `<dir>/net` the run's uid's, 0700. */
function runFolder(priv: Privilege): string {
  const dir = mkdtempSync(join(tmpdir(), 'proxy-run-'))
  made.push(dir)
  chmodSync(dir, 0o711)
  const netDir = join(dir, 'net')
  mkdirSync(netDir, { mode: 0o700 })
  if (priv.kind === 'root') chownSync(netDir, UID, UID)
  else spawnSync(priv.kind === 'sudo' ? priv.sudo : 'false', ['-n', 'chown', `${UID}:${UID}`, netDir])
  return join(netDir, 'proxy.sock')
}

/** The process running the bundle for this socket (its command line names both). */
function proxyPid(socket: string): number {
  for (const p of readdirSync('/proc').filter(n => /^\d+$/.test(n))) {
    try {
      const cmd = readFileSync(`/proc/${p}/cmdline`, 'latin1').split('\0')
      if (cmd.includes(BUNDLE) && cmd.some(a => a.includes(socket)) && !cmd.some(a => /(^|\/)(sudo|setpriv)$/.test(a))) return Number(p)
    } catch {
      // gone meanwhile
    }
  }
  return 0
}

/** A CONNECT through the proxy's socket: its status line. */
function connectThrough(socket: string, target: string): Promise<string> {
  return new Promise(resolve => {
    const s = net.connect(socket)
    let out = ''
    s.on('connect', () => s.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`))
    s.on('data', d => (out += d.toString()))
    s.on('error', e => resolve(`error: ${e.message}`))
    s.on('close', () => resolve(out.split('\r\n')[0]))
  })
}

const privileged = process.platform === 'linux' && (isRoot || hasSudo)

describe('the proxy never runs as root', () => {
  // as the action finds its privilege, and (as root, where sudo works) through `sudo -n` as a non-root action does
  const viaSudo = isRoot && spawnSync('sudo', ['-n', 'true']).status === 0
  it.each([
    ['as the action finds its privilege', privileged],
    ['through sudo', viaSudo]
  ])(
    "is started as the run's uid and gid, no groups, no capabilities, no new privileges, and still serves (%s)",
    async (how, can) => {
      if (!can) return
      const found = await findPrivilege(process.env.PATH, REPO_ROOT)
      const sudo = findProgram('sudo', process.env.PATH)
      const priv: Privilege = how === 'through sudo' && sudo ? { kind: 'sudo', sudo } : found
      const setpriv = findProgram('setpriv', process.env.PATH)
      expect({ setpriv: !!setpriv, source: proxySource() }).toEqual({ setpriv: true, source: BUNDLE })
      const socket = runFolder(priv)
      const log: string[] = []
      let p: ProxyProcess | undefined
      try {
        p = await startProxyProcess({
          ...{ priv, setpriv: setpriv as string, node: process.execPath, source: BUNDLE, socket },
          ...{ uid: UID, gid: UID, allowed: ['example.com'], log: m => log.push(m) }
        })
        expect(p.report()).toMatchObject({ contained: true, problem: undefined })
        const pid = proxyPid(socket)
        expect(pid).toBeGreaterThan(0)
        const status = readFileSync(`/proc/${pid}/status`, 'utf8')
        const field = (name: string) => (new RegExp(`^${name}:[ \\t]*(.*)$`, 'm').exec(status)?.[1] ?? '').trim().split(/\s+/)
        expect({
          uid: field('Uid'),
          gid: field('Gid'),
          groups: field('Groups'),
          capEff: field('CapEff'),
          capPrm: field('CapPrm'),
          capAmb: field('CapAmb'),
          noNewPrivs: field('NoNewPrivs')
        }).toEqual({
          uid: Array(4).fill(String(UID)),
          gid: Array(4).fill(String(UID)),
          groups: [''],
          capEff: ['0000000000000000'],
          capPrm: ['0000000000000000'],
          capAmb: ['0000000000000000'],
          noNewPrivs: ['1']
        })
        // its socket: the run's uid's, for it alone
        const st = statSync(socket)
        expect({ uid: st.uid, mode: st.mode & 0o777 }).toEqual({ uid: UID, mode: 0o600 })
        // and it works: a host not allowed is refused, and counted
        expect(await connectThrough(socket, '127.0.0.2:9')).toMatch(/^HTTP\/1\.1 403/)
        expect(p.report()).toMatchObject({ refused: [{ host: '127.0.0.2', count: 1 }] })
      } finally {
        await p?.stop()
      }
    },
    60_000
  )

  it('the bundle refuses to run as root (or as any uid but the one it was told), and says so', async () => {
    const config = JSON.stringify({ socket: join(tmpdir(), `never-${process.pid}.sock`), uid: 0, allowed: [] })
    const child = spawn(process.execPath, [BUNDLE, config], { stdio: ['pipe', 'pipe', 'ignore'] })
    let out = ''
    child.stdout.on('data', d => (out += d.toString()))
    const code = await new Promise(r => child.on('close', r))
    expect(code).toBe(1)
    expect(JSON.parse(out.trim().split('\n')[0])).toMatchObject({ t: 'error', why: expect.stringMatching(/refused/) })
  })

  it('is launched by setpriv (through sudo when the action is not root), never by root itself', () => {
    const o = { setpriv: '/usr/bin/setpriv', node: '/n/node', source: '/a/dist/proxy/index.js', uid: 1234, gid: 1235, config: '{}' }
    const drop = ['/usr/bin/setpriv', '--reuid=1234', '--regid=1235', '--clear-groups', '--no-new-privs', '--']
    expect(proxyArgv({ ...o, priv: { kind: 'root' } })).toEqual([...drop, '/n/node', '/a/dist/proxy/index.js', '{}'])
    expect(proxyArgv({ ...o, priv: { kind: 'sudo', sudo: '/usr/bin/sudo' } })).toEqual([
      ...['/usr/bin/sudo', '-n', '--'],
      ...drop,
      '/n/node',
      '/a/dist/proxy/index.js',
      '{}'
    ])
  })

  it("says why, rather than starting it, when the run's user could not reach node or the bundle", () => {
    const dir = mkdtempSync(join(tmpdir(), 'proxy-closed-'))
    made.push(dir)
    writeFileSync(join(dir, 'x'), '', { mode: 0o644 })
    chmodSync(dir, 0o750)
    expect(closedToOthers(join(dir, 'x'), 4)).toBe(`${dir} is closed to other users`)
    expect(closedToOthers(BUNDLE, 4)).toBeUndefined()
    expect(closedToOthers(process.execPath, 1)).toBeUndefined()
  })

  it("a bundle the run's user cannot read: no proxy, no network, and the report says why", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'proxy-closed-'))
    made.push(dir)
    writeFileSync(join(dir, 'index.js'), '', { mode: 0o644 })
    chmodSync(dir, 0o700)
    const log: string[] = []
    const p = await startProxyProcess({
      ...{ priv: { kind: 'root' }, setpriv: '/usr/bin/setpriv', node: process.execPath, source: join(dir, 'index.js') },
      ...{ socket: join(dir, 's'), uid: UID, gid: UID, allowed: [], log: m => log.push(m) }
    })
    expect(p.report()).toMatchObject({ contained: true, problem: expect.stringContaining(`${dir} is closed to other users`) })
    expect(log.join('\n')).toContain('no network at all')
    await p.stop()
  })
})
