// The run's proxy against servers on 127.0.0.1: what an allowed entry reaches,
// what a refusal looks like, and that floods and many tunnels leave it working.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals'
import http from 'node:http'
import net from 'node:net'
import type { AddressInfo } from 'node:net'
import { createProxy, type ProxyEvent } from '../src/network/proxy'
import { parseAllowedDomains } from '../src/network/allowlist'
import { expandPresets, PRESETS } from '../src/network/presets'

let hits = 0
const target = http.createServer((req, res) => {
  hits++
  res.end(`hello ${req.method} ${req.url} host=${req.headers.host} pa=${req.headers['proxy-authorization'] ?? ''}`)
})
const echo = net.createServer(s => s.pipe(s))
const events: ProxyEvent[] = []
let proxies: http.Server[] = []
const portOf = (s: net.Server) => (s.address() as AddressInfo).port
const listen = (s: net.Server) => new Promise<void>(r => s.listen(0, '127.0.0.1', () => r()))

const presets = Object.fromEntries(Object.entries(PRESETS).map(([n, h]) => [n, parseAllowedDomains(h.join('\n'))]))

async function proxyWith(
  allowed: string,
  lookup?: (n: string) => Promise<string[]>,
  maxTunnels?: number,
  ownAddresses?: () => Set<string>
): Promise<number> {
  const p = createProxy({ allow: parseAllowedDomains(allowed), presets, onEvent: e => events.push(e), lookup, maxTunnels, ownAddresses })
  proxies.push(p)
  await listen(p)
  return portOf(p)
}

/** One raw exchange with the proxy: what it answers until it closes (or `ms`). */
function exchange(port: number, text: string, then?: string, ms = 5000): Promise<string> {
  return new Promise(resolve => {
    const s = net.connect(port, '127.0.0.1')
    let out = ''
    const timer = setTimeout(() => {
      s.destroy()
      resolve(out)
    }, ms)
    s.on('data', d => {
      out += d.toString()
      if (then && out.includes('200 Connection Established') && !out.includes('sent:')) {
        s.write(then)
      }
      if (then && out.includes(then)) {
        clearTimeout(timer)
        s.destroy()
        resolve(out)
      }
    })
    s.on('error', () => undefined)
    s.on('close', () => {
      clearTimeout(timer)
      resolve(out)
    })
    s.write(text)
  })
}

beforeAll(async () => {
  await listen(target)
  await listen(echo)
})
afterAll(() => {
  target.close()
  echo.close()
  for (const p of proxies) p.close()
  proxies = []
})

describe('the proxy', () => {
  test('an IP-literal entry lets plain HTTP and a tunnel reach it; proxy credentials are not passed on', async () => {
    const port = await proxyWith('127.0.0.1')
    const t = portOf(target)
    const r = await exchange(
      port,
      `GET http://127.0.0.1:${t}/x?y=1 HTTP/1.1\r\nHost: 127.0.0.1:${t}\r\nProxy-Authorization: Basic abc\r\nConnection: close\r\n\r\n`
    )
    expect(r).toMatch(/^HTTP\/1.1 200/)
    expect(r).toContain(`hello GET /x?y=1 host=127.0.0.1:${t} pa=`)
    expect(r).not.toContain('pa=Basic')
    const tunnel = await exchange(port, `CONNECT 127.0.0.1:${portOf(echo)} HTTP/1.1\r\nHost: x\r\n\r\n`, 'ping-through-tunnel')
    expect(tunnel).toContain('ping-through-tunnel')
    expect(events).toContainEqual({ t: 'reached', host: '127.0.0.1', port: portOf(echo) })
    // an allowed address where nothing listens: a 502 at once, and the proxy goes on
    const closed = net.createServer()
    await listen(closed)
    const dead = portOf(closed)
    closed.close()
    expect(await exchange(port, `CONNECT 127.0.0.1:${dead} HTTP/1.1\r\n\r\n`)).toMatch(/^HTTP\/1.1 502/)
    expect(await exchange(port, `CONNECT 127.0.0.1:${portOf(echo)} HTTP/1.1\r\n\r\n`, 'still-up')).toContain('still-up')
  })

  test('a host not listed, and a listed name resolving to loopback, get 403 naming the host and allowed-domains; nothing arrives', async () => {
    const port = await proxyWith('internet.test, *.registry.test', async () => ['127.0.0.1'])
    const before = hits
    const t = portOf(target)
    for (const [req, host, line] of [
      [`GET http://127.0.0.1:${t}/ HTTP/1.1\r\nHost: a\r\n\r\n`, '127.0.0.1', '127.0.0.1'],
      [`CONNECT 127.0.0.1:${t} HTTP/1.1\r\n\r\n`, '127.0.0.1', '127.0.0.1'],
      [`CONNECT [::1]:${t} HTTP/1.1\r\n\r\n`, '::1', '::1'],
      [`GET http://internet.test:${t}/ HTTP/1.1\r\nHost: a\r\n\r\n`, 'internet.test', '127.0.0.1'],
      [`CONNECT npm.registry.test:${t} HTTP/1.1\r\n\r\n`, 'npm.registry.test', '127.0.0.1'],
      [`CONNECT localhost:${t} HTTP/1.1\r\n\r\n`, 'localhost', 'localhost']
    ]) {
      const r = await exchange(port, req)
      expect(r).toMatch(/^HTTP\/1.1 403/)
      expect(r).toContain(host)
      expect(r).toContain('allowed-domains')
      expect(r).toContain(`line: ${line}\n`)
      expect(r.split('\r\n\r\n')[1].trim().split('\n')).toHaveLength(1)
    }
    expect(hits).toBe(before)
    expect(events.filter(e => e.t === 'refused').length).toBeGreaterThanOrEqual(6)
  })

  test('a flood of refused requests, huge headers and garbage cost nothing lasting: it still serves', async () => {
    const port = await proxyWith('127.0.0.1')
    const rss = process.memoryUsage().rss
    for (let round = 0; round < 10; round++) {
      await Promise.all(Array.from({ length: 100 }, (_, i) => exchange(port, `CONNECT evil${round}-${i}.test:443 HTTP/1.1\r\n\r\n`)))
    }
    expect(await exchange(port, `GET / HTTP/1.1\r\nX: ${'a'.repeat(64 * 1024)}\r\n\r\n`)).toMatch(/^HTTP\/1.1 4\d\d/)
    expect(await exchange(port, 'garbage\r\n\r\n')).toMatch(/^HTTP\/1.1 400/)
    expect(process.memoryUsage().rss - rss).toBeLessThan(100 * 1024 * 1024)
    const r = await exchange(port, `GET http://127.0.0.1:${portOf(target)}/ok HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n`)
    expect(r).toContain('hello GET /ok')
  }, 60_000)

  test('many parallel tunnels all work; past the limit a tunnel is turned away at once, not queued', async () => {
    const port = await proxyWith('127.0.0.1', undefined, 50)
    const e = portOf(echo)
    const rs = await Promise.all(
      Array.from({ length: 40 }, (_, i) => exchange(port, `CONNECT 127.0.0.1:${e} HTTP/1.1\r\n\r\n`, `t${i}-ok`))
    )
    rs.forEach((r, i) => expect(r).toContain(`t${i}-ok`))
    // hold 50 open, the 51st is refused
    const held = await Promise.all(
      Array.from(
        { length: 50 },
        () =>
          new Promise<net.Socket>(resolve => {
            const s = net.connect(port, '127.0.0.1', () => s.write(`CONNECT 127.0.0.1:${e} HTTP/1.1\r\n\r\n`))
            s.once('data', () => resolve(s))
          })
      )
    )
    expect(await exchange(port, `CONNECT 127.0.0.1:${e} HTTP/1.1\r\n\r\n`)).toMatch(/^HTTP\/1.1 503/)
    for (const s of held) s.destroy()
  })

  test("a refused host of a preset is named with the preset's name: the line to add is the one word", async () => {
    const port = await proxyWith('example.com')
    for (const [req, host, preset] of [
      ['CONNECT registry.npmjs.org:443 HTTP/1.1\r\n\r\n', 'registry.npmjs.org', 'npm'],
      ['GET http://files.pythonhosted.org/x HTTP/1.1\r\nHost: files.pythonhosted.org\r\n\r\n', 'files.pythonhosted.org', 'pypi'],
      ['CONNECT us.archive.ubuntu.com:443 HTTP/1.1\r\n\r\n', 'us.archive.ubuntu.com', 'ubuntu']
    ]) {
      const r = await exchange(port, req)
      expect(r).toMatch(/^HTTP\/1.1 403/)
      expect(r).toContain(`${host} is not in allowed-domains; it is a host of the preset ${preset}`)
      expect(r).toContain(`line: ${preset}\n`)
      expect(events).toContainEqual(expect.objectContaining({ t: 'refused', host, line: preset, preset }))
    }
    // a host of no preset keeps its own line
    expect(await exchange(port, 'CONNECT evil.example.org:443 HTTP/1.1\r\n\r\n')).toContain('line: evil.example.org\n')
  })

  test('with the presets npm and pypi, their hosts are no longer refused; example.com still is', async () => {
    // the stand-in resolves every name to a TEST-NET address nothing answers (no internet here): not a 403, whatever follows
    const port = await proxyWith(expandPresets(['npm', 'pypi']).join('\n'), async () => ['192.0.2.1'])
    events.length = 0
    for (const host of ['registry.npmjs.org', 'files.pythonhosted.org']) {
      const r = await exchange(port, `CONNECT ${host}:443 HTTP/1.1\r\n\r\n`, undefined, 30_000)
      expect([host, r]).not.toEqual([host, expect.stringMatching(/^HTTP\/1.1 403/)])
      expect(events).not.toContainEqual(expect.objectContaining({ t: 'refused', host }))
    }
    const r = await exchange(port, 'CONNECT example.com:443 HTTP/1.1\r\n\r\n')
    expect(r).toMatch(/^HTTP\/1.1 403/)
    expect(r).toContain('line: example.com\n')
  }, 90_000)

  test("an allowed name resolving to an IPv4-mapped IPv6 form of a loopback or the runner's own address is refused", async () => {
    const own = () => new Set(['10.9.8.7'])
    for (const mapped of ['::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.9.8.7', '::ffff:a09:807']) {
      const port = await proxyWith('internet.test', async () => [mapped], undefined, own)
      const r = await exchange(port, 'CONNECT internet.test:443 HTTP/1.1\r\n\r\n')
      expect([mapped, r]).toEqual([mapped, expect.stringMatching(/^HTTP\/1.1 403/)])
      expect(r).toContain(`resolves to ${mapped}`)
    }
  })

  test('plain HTTP is sent with the Host the allowlist checked, not the Host header the client wrote', async () => {
    const t = portOf(target)
    const ipPort = await proxyWith('127.0.0.1')
    const r = await exchange(
      ipPort,
      `GET http://127.0.0.1:${t}/h HTTP/1.1\r\nHost: internal.metadata.test\r\nhOsT: other.test\r\nConnection: close\r\n\r\n`
    )
    expect(r).toMatch(/^HTTP\/1.1 200/)
    expect(r).toContain(`hello GET /h host=127.0.0.1:${t} `)
    expect(r).not.toContain('metadata')
    expect(r).not.toContain('other.test')
  })
})
