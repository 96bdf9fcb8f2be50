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
  | { t: 'refused'; host: string; port: number; why: string; line?: string; preset?: string }
  | { t: 'failed'; host: string; port: number; why: string }

export interface ProxyOptions {
  allow: readonly Entry[]
  /** the presets' hosts by name, only to say which preset a refused host belongs to */
  presets?: Readonly<Record<string, readonly Entry[]>>
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

type Decision = { ok: true; address: string } | { ok: false; status: number; why: string; line?: string; preset?: string }

export function createProxy(o: ProxyOptions): http.Server {
  return new AllowlistProxy(o).server
}

type Refusal = Extract<Decision, { ok: false }>

/** Header pairs of `raw` (name, value, name, value…) without those `drop` matches. */
function keptHeaders(raw: string[], drop: RegExp): string[] {
  const kept: string[] = []
  for (let i = 0; i + 1 < raw.length; i += 2) if (!drop.test(raw[i])) kept.push(raw[i], raw[i + 1])
  return kept
}

/** The body and status line of a refusal, for the client to read. */
function refusalText(d: Refusal, host: string, port: number): { body: string; reason: string } {
  const allows = d.preset
    ? `it is a host of the preset ${d.preset}: the workflow's input allowed-domains allows it (and the preset's other hosts) with the line: ${d.line}`
    : `the workflow's input allowed-domains allows a host with the line: ${d.line}`
  const body =
    d.status === 403
      ? `bash-agent proxy: ${host} is ${d.why.startsWith('not') ? d.why : `refused: it ${d.why}`}; ${allows}\n`
      : `bash-agent proxy: ${host}:${port} ${d.why}\n`
  return { body, reason: d.status === 403 ? 'Forbidden' : d.status === 400 ? 'Bad Request' : 'Bad Gateway' }
}

class AllowlistProxy {
  readonly server: http.Server
  private readonly lookup: (name: string) => Promise<string[]>
  private readonly own: () => Set<string>
  private readonly maxTunnels: number
  private readonly connectTimeout: number
  private open = 0

  constructor(private readonly o: ProxyOptions) {
    this.lookup = o.lookup ?? systemLookup
    this.own = o.ownAddresses ?? interfaceAddresses
    this.maxTunnels = o.maxTunnels ?? 256
    this.connectTimeout = o.connectTimeoutMs ?? 15_000
    const server = http.createServer({ maxHeaderSize: HEADER_LIMIT, requestTimeout: 0, headersTimeout: 20_000 })
    server.maxConnections = this.maxTunnels * 2
    server.on('clientError', (_e, socket) => {
      if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n')
      else socket.destroy()
    })
    server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => this.onConnect(req, client, head))
    server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => this.onRequest(req, res))
    this.server = server
  }

  private emit(e: ProxyEvent): void {
    try {
      this.o.onEvent(e)
    } catch {
      // reporting never stops the proxy
    }
  }

  /** Whether host:port may be reached, and the address to connect to. */
  private async decide(rawHost: string, port: number): Promise<Decision> {
    const host = hostOf(rawHost)
    if (!host || !(port >= 1 && port <= 65535)) return { ok: false, status: 400, why: 'not a host name or IP address and port' }
    if (!isAllowed(this.o.allow, host)) {
      const preset = Object.keys(this.o.presets ?? {}).find(p => isAllowed((this.o.presets ?? {})[p], host))
      return { ok: false, status: 403, why: 'not in allowed-domains', line: preset ?? lineFor(host), preset }
    }
    if ('ip' in host) return { ok: true, address: host.ip } // named by an entry itself
    let addresses: string[]
    try {
      addresses = await withTimeout(this.lookup(host.name), this.connectTimeout)
    } catch (e) {
      return { ok: false, status: 502, why: `could not be resolved (${(e as Error).message})` }
    }
    if (addresses.length === 0) return { ok: false, status: 502, why: 'could not be resolved' }
    const mine = this.own()
    for (const a of addresses) {
      const bad = forbiddenAddress(a, mine)
      if (bad && !ipListed(this.o.allow, a))
        return { ok: false, status: 403, why: `resolves to ${a}, ${bad}; only an entry naming that address allows it`, line: a }
    }
    return { ok: true, address: addresses[0] }
  }

  private refuse(res: http.ServerResponse | net.Socket, d: Refusal, host: string, port: number): void {
    if (d.status === 403) this.emit({ t: 'refused', host, port, why: d.why, line: d.line, ...(d.preset ? { preset: d.preset } : {}) })
    else this.emit({ t: 'failed', host, port, why: d.why })
    const { body, reason } = refusalText(d, host, port)
    if (res instanceof net.Socket) {
      res.end(
        `HTTP/1.1 ${d.status} ${reason}\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
      )
    } else {
      res.writeHead(d.status, { 'Content-Type': 'text/plain', 'Content-Length': Buffer.byteLength(body), Connection: 'close' })
      res.end(body)
    }
  }

  /** CONNECT host:port: a byte tunnel once the address is checked. */
  private onConnect(req: http.IncomingMessage, client: net.Socket, head: Buffer): void {
    client.on('error', () => undefined)
    const m = /^\[([^\]]+)\]:(\d{1,5})$/.exec(req.url ?? '') ?? /^([^:[\]]+):(\d{1,5})$/.exec(req.url ?? '')
    const host = m?.[1] ?? String(req.url ?? '').slice(0, 200)
    const port = Number(m?.[2] ?? 0)
    if (this.open >= this.maxTunnels) {
      client.end('HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\n\r\ntoo many open connections through the proxy\n')
      return
    }
    this.open++
    let counted = true
    client.on('close', () => {
      if (counted) this.open--
      counted = false
    })
    void this.decide(host, port).then(d => (d.ok ? this.tunnel(client, head, host, port, d.address) : this.refuse(client, d, host, port)))
  }

  private tunnel(client: net.Socket, head: Buffer, host: string, port: number, address: string): void {
    const up = net.connect({ host: address, port })
    up.setTimeout(this.connectTimeout)
    up.on('timeout', () => up.destroy(new Error('connect timed out')))
    let established = false
    up.once('connect', () => {
      established = true
      up.setTimeout(IDLE_MS)
      client.setTimeout(IDLE_MS)
      client.on('timeout', () => client.destroy())
      this.emit({ t: 'reached', host: lineFor(hostOf(host) as { name: string }), port })
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
        this.emit({ t: 'failed', host, port, why: e.message })
        client.end(`HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n${e.message}\n`)
      } else client.destroy()
    })
  }

  /** Plain HTTP: absolute-form requests, forwarded to the checked address. */
  private onRequest(req: http.IncomingMessage, res: http.ServerResponse): void {
    req.on('error', () => undefined)
    res.on('error', () => undefined)
    let url: URL
    try {
      url = new URL(req.url ?? '')
      if (url.protocol !== 'http:') throw new Error('not http')
    } catch {
      const body = 'bash-agent proxy: send absolute-form http:// requests, or CONNECT for https\n'
      res.writeHead(400, { 'Content-Type': 'text/plain', 'Content-Length': Buffer.byteLength(body), Connection: 'close' })
      res.end(body)
      return
    }
    const port = Number(url.port || 80)
    void this.decide(url.hostname, port).then(d => {
      if (d.ok) return this.forward(req, res, url, d.address)
      req.resume()
      this.refuse(res, d, url.hostname.replace(/^\[|\]$/g, ''), port)
    })
  }

  private forward(req: http.IncomingMessage, res: http.ServerResponse, url: URL, address: string): void {
    const host = url.hostname
    const port = Number(url.port || 80)
    const up = http.request({
      host: address,
      port,
      method: req.method,
      path: `${url.pathname}${url.search}`,
      // the Host is the one the allowlist checked, never the client's own header
      headers: ['Host', url.host, ...keptHeaders(req.rawHeaders, /^(proxy-|connection$|keep-alive$|host$)/i)],
      setHost: false,
      agent: false,
      timeout: this.connectTimeout
    })
    up.on('socket', s => s.once('connect', () => s.setTimeout(IDLE_MS)))
    up.on('timeout', () => up.destroy(new Error('timed out')))
    let reached = false
    up.on('response', r => {
      if (!reached) this.emit({ t: 'reached', host: lineFor(hostOf(host) as { name: string }), port })
      reached = true
      res.writeHead(r.statusCode ?? 502, r.statusMessage, keptHeaders(r.rawHeaders, /^(connection|keep-alive)$/i))
      pipeline(r, res, () => undefined)
    })
    up.on('error', e => {
      if (!res.headersSent) {
        this.emit({ t: 'failed', host, port, why: e.message })
        res.writeHead(502, { 'Content-Type': 'text/plain', Connection: 'close' })
        res.end(`bash-agent proxy: ${e.message}\n`)
      } else res.destroy()
    })
    pipeline(req, up, () => undefined)
  }
}
