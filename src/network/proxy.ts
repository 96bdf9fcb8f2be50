// The run's HTTP proxy: the commands' only way out with `network: allowlist`.
// Plain HTTP (absolute-form requests) and CONNECT tunnels to the hosts of
// `allowed-domains`, on any port; never to the runner's own addresses unless
// an entry names that address itself. A name is resolved once, every address
// checked, and the address checked is the one connected to. It parses what
// the agent sends, so it runs in a process of its own that holds no secret.
import http from 'node:http'
import net from 'node:net'
import os from 'node:os'
import { lookup as dnsLookup } from 'node:dns/promises'
import { pipeline } from 'node:stream'
import { forbiddenAddress, hostOf, isAllowed, ipListed, lineFor, type Entry } from './allowlist'

export type ProxyEvent =
  | { t: 'reached'; host: string; port: number }
  | { t: 'refused'; host: string; port: number; why: string; line?: string }
  | { t: 'failed'; host: string; port: number; why: string }

export interface ProxyOptions {
  allow: readonly Entry[]
  onEvent: (e: ProxyEvent) => void
  /** resolves a name to its addresses (default: the system's resolver) */
  lookup?: (name: string) => Promise<string[]>
  /** the host's own addresses (default: its interfaces') */
  ownAddresses?: () => Set<string>
  maxTunnels?: number
  connectTimeoutMs?: number
}

const HEADER_LIMIT = 16 * 1024
const IDLE_MS = 10 * 60_000

function interfaceAddresses(): Set<string> {
  const out = new Set<string>()
  for (const list of Object.values(os.networkInterfaces())) for (const a of list ?? []) out.add(a.address.replace(/%.*$/, ''))
  return out
}

async function systemLookup(name: string): Promise<string[]> {
  const r = await dnsLookup(name, { all: true, verbatim: true })
  return r.map(a => a.address)
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  return Promise.race([p, new Promise<T>((_, rej) => (timer = setTimeout(() => rej(new Error('timed out')), ms)))]).finally(() =>
    clearTimeout(timer)
  )
}

type Decision = { ok: true; address: string } | { ok: false; status: number; why: string; line?: string }

export function createProxy(o: ProxyOptions): http.Server {
  const lookup = o.lookup ?? systemLookup
  const own = o.ownAddresses ?? interfaceAddresses
  const maxTunnels = o.maxTunnels ?? 256
  const connectTimeout = o.connectTimeoutMs ?? 15_000
  let open = 0

  const emit = (e: ProxyEvent) => {
    try {
      o.onEvent(e)
    } catch {
      // reporting never stops the proxy
    }
  }

  /** Whether host:port may be reached, and the address to connect to. */
  const decide = async (rawHost: string, port: number): Promise<Decision> => {
    const host = hostOf(rawHost)
    if (!host || !(port >= 1 && port <= 65535)) return { ok: false, status: 400, why: 'not a host name or IP address and port' }
    if (!isAllowed(o.allow, host)) return { ok: false, status: 403, why: 'not in allowed-domains', line: lineFor(host) }
    if ('ip' in host) return { ok: true, address: host.ip } // named by an entry itself
    let addresses: string[]
    try {
      addresses = await withTimeout(lookup(host.name), connectTimeout)
    } catch (e) {
      return { ok: false, status: 502, why: `could not be resolved (${(e as Error).message})` }
    }
    if (addresses.length === 0) return { ok: false, status: 502, why: 'could not be resolved' }
    const mine = own()
    for (const a of addresses) {
      const bad = forbiddenAddress(a, mine)
      if (bad && !ipListed(o.allow, a))
        return { ok: false, status: 403, why: `resolves to ${a}, ${bad}; only an entry naming that address allows it`, line: a }
    }
    return { ok: true, address: addresses[0] }
  }

  const refuse = (
    res: { writeHead?: unknown } | net.Socket,
    d: Extract<Decision, { ok: false }>,
    host: string,
    port: number,
    raw: boolean
  ) => {
    if (d.status === 403) emit({ t: 'refused', host, port, why: d.why, line: d.line })
    else emit({ t: 'failed', host, port, why: d.why })
    const body =
      d.status === 403
        ? `bash-agent proxy: ${host} is ${d.why.startsWith('not') ? d.why : `refused: it ${d.why}`}; the workflow's input allowed-domains allows a host with the line: ${d.line}\n`
        : `bash-agent proxy: ${host}:${port} ${d.why}\n`
    const reason = d.status === 403 ? 'Forbidden' : d.status === 400 ? 'Bad Request' : 'Bad Gateway'
    if (raw) {
      const s = res as net.Socket
      s.end(
        `HTTP/1.1 ${d.status} ${reason}\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
      )
    } else {
      const r = res as http.ServerResponse
      r.writeHead(d.status, { 'Content-Type': 'text/plain', 'Content-Length': Buffer.byteLength(body), Connection: 'close' })
      r.end(body)
    }
  }

  const server = http.createServer({ maxHeaderSize: HEADER_LIMIT, requestTimeout: 0, headersTimeout: 20_000 })
  server.maxConnections = maxTunnels * 2
  server.on('clientError', (_e, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n')
    else socket.destroy()
  })

  // CONNECT host:port: a byte tunnel once the address is checked.
  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    client.on('error', () => undefined)
    const m = /^\[([^\]]+)\]:(\d{1,5})$/.exec(req.url ?? '') ?? /^([^:[\]]+):(\d{1,5})$/.exec(req.url ?? '')
    const host = m?.[1] ?? String(req.url ?? '').slice(0, 200)
    const port = Number(m?.[2] ?? 0)
    if (open >= maxTunnels) {
      client.end('HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\n\r\ntoo many open connections through the proxy\n')
      return
    }
    open++
    let counted = true
    const done = () => {
      if (counted) open--
      counted = false
    }
    client.on('close', done)
    void decide(host, port).then(d => {
      if (!d.ok) return refuse(client, d, host, port, true)
      const up = net.connect({ host: d.address, port })
      up.setTimeout(connectTimeout)
      up.on('timeout', () => up.destroy(new Error('connect timed out')))
      let established = false
      up.once('connect', () => {
        established = true
        up.setTimeout(IDLE_MS)
        client.setTimeout(IDLE_MS)
        client.on('timeout', () => client.destroy())
        emit({ t: 'reached', host: lineFor(hostOf(host) as { name: string }), port })
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n')
        if (head.length) up.write(head)
        pipeline(client, up, () => client.destroy())
        pipeline(up, client, () => up.destroy())
      })
      let failed = false
      up.on('error', e => {
        // before the tunnel is up the client gets a 502; once up, bytes are all it gets, so it is only closed
        if (!established && !failed && client.writable) {
          failed = true
          emit({ t: 'failed', host, port, why: e.message })
          client.end(`HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n${e.message}\n`)
        } else client.destroy()
      })
    })
  })

  // Plain HTTP: absolute-form requests, forwarded to the checked address.
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    req.on('error', () => undefined)
    res.on('error', () => undefined)
    let url: URL
    try {
      url = new URL(req.url ?? '')
      if (url.protocol !== 'http:') throw new Error('not http')
    } catch {
      const body = 'bash-agent proxy: send absolute-form http:// requests, or CONNECT for https\n'
      res.writeHead(400, { 'Content-Type': 'text/plain', 'Content-Length': Buffer.byteLength(body), Connection: 'close' })
      return res.end(body)
    }
    const host = url.hostname
    const port = Number(url.port || 80)
    void decide(host, port).then(d => {
      if (!d.ok) {
        req.resume()
        return refuse(res, d, host.replace(/^\[|\]$/g, ''), port, false)
      }
      const headers: string[] = []
      const raw = req.rawHeaders
      for (let i = 0; i + 1 < raw.length; i += 2) {
        if (/^(proxy-|connection$|keep-alive$)/i.test(raw[i])) continue
        headers.push(raw[i], raw[i + 1])
      }
      const up = http.request({
        host: d.address,
        port,
        method: req.method,
        path: `${url.pathname}${url.search}`,
        headers,
        setHost: false,
        agent: false,
        timeout: connectTimeout
      })
      up.on('socket', s => s.once('connect', () => s.setTimeout(IDLE_MS)))
      up.on('timeout', () => up.destroy(new Error('timed out')))
      let reached = false
      up.on('response', r => {
        if (!reached) emit({ t: 'reached', host: lineFor(hostOf(host) as { name: string }), port })
        reached = true
        const back: string[] = []
        for (let i = 0; i + 1 < r.rawHeaders.length; i += 2) {
          if (/^(connection|keep-alive)$/i.test(r.rawHeaders[i])) continue
          back.push(r.rawHeaders[i], r.rawHeaders[i + 1])
        }
        res.writeHead(r.statusCode ?? 502, r.statusMessage, back)
        pipeline(r, res, () => undefined)
      })
      up.on('error', e => {
        if (!res.headersSent) {
          emit({ t: 'failed', host, port, why: e.message })
          res.writeHead(502, { 'Content-Type': 'text/plain', Connection: 'close' })
          res.end(`bash-agent proxy: ${e.message}\n`)
        } else res.destroy()
      })
      pipeline(req, up, () => undefined)
    })
  })
  return server
}
