// The `allowed-domains` input: host names, `*.` wildcards and IP literals, and
// whether a host the agent asks for is one of them. Shared by the settings
// (validation) and the proxy (matching); Node's built-ins only.
import { isIPv4, isIPv6 } from 'node:net'

export type Entry = { kind: 'name'; name: string } | { kind: 'wildcard'; suffix: string } | { kind: 'ip'; ip: string }

const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/

/** A DNS name (lower case, no trailing dot), not an all-numeric look-alike of an address. */
function isName(s: string): boolean {
  if (s.length === 0 || s.length > 253) return false
  const labels = s.split('.')
  return labels.every(l => LABEL.test(l)) && !/^\d+$/.test(labels[labels.length - 1]) && !/^0x[0-9a-f]*$/.test(labels[labels.length - 1])
}

/** An IP literal in one canonical text (IPv6 compressed, lower case, no brackets), or undefined. */
export function canonicalIp(raw: string): string | undefined {
  const s = raw.startsWith('[') && raw.endsWith(']') ? raw.slice(1, -1) : raw
  if (isIPv4(s)) return s
  if (isIPv6(s) && !s.includes('%')) {
    try {
      return new URL(`http://[${s}]/`).hostname.slice(1, -1)
    } catch {
      return undefined
    }
  }
  return undefined
}

/** A host as the agent wrote it, normalised: `{ ip }` or `{ name }`, or undefined when it is neither. */
export function hostOf(raw: string): { ip: string } | { name: string } | undefined {
  const ip = canonicalIp(raw)
  if (ip) return { ip }
  const name = raw.toLowerCase().replace(/\.$/, '')
  return isName(name) ? { name } : undefined
}

/** One entry, or why it is not one. */
export function parseEntry(raw: string): Entry | string {
  const s = raw.trim()
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(s)) return 'has a scheme'
  if (/\s/.test(s)) return 'has spaces'
  if (s.includes('/')) return 'has a path'
  const ip = canonicalIp(s)
  if (ip) return { kind: 'ip', ip }
  if (/:\d*$/.test(s) || /^\[.*\]:/.test(s)) return 'has a port (any port of an allowed host is allowed)'
  const lower = s.toLowerCase().replace(/\.$/, '')
  // a wildcard names a domain's subdomains, never a whole top-level domain's
  if (lower.startsWith('*.') && isName(lower.slice(2)) && lower.slice(2).includes('.')) return { kind: 'wildcard', suffix: lower.slice(2) }
  if (isName(lower)) return { kind: 'name', name: lower }
  return 'is not a host name, a *. wildcard or an IP address'
}

/** The input's entries (lines or comma-separated); throws an Error naming the first bad one. */
export function parseAllowedDomains(text: string): Entry[] {
  const out: Entry[] = []
  for (const raw of text.split(/[\r\n,]+/)) {
    if (raw.trim() === '') continue
    const e = parseEntry(raw)
    if (typeof e === 'string') throw new Error(`"${raw.trim()}" ${e}`)
    out.push(e)
  }
  return out
}

/** The entry's text, as it would be written in the input. */
export const entryText = (e: Entry): string => (e.kind === 'ip' ? e.ip : e.kind === 'name' ? e.name : `*.${e.suffix}`)

/** Whether the host (as hostOf gives it) is allowed by an entry. */
export function isAllowed(entries: readonly Entry[], host: { ip: string } | { name: string }): boolean {
  if ('ip' in host) return entries.some(e => e.kind === 'ip' && e.ip === host.ip)
  return entries.some(e => (e.kind === 'name' ? e.name === host.name : e.kind === 'wildcard' && host.name.endsWith(`.${e.suffix}`)))
}

/** Whether an entry names this address itself (in any spelling: an IPv4-mapped IPv6 form is its IPv4 address). */
export const ipListed = (entries: readonly Entry[], ip: string): boolean => entries.some(e => e.kind === 'ip' && sameAddress(e.ip, ip))

/** An IPv4 address as a number; an IPv4-mapped IPv6 address as its IPv4 one. */
function v4Of(ip: string): number | undefined {
  let s = ip
  const mapped = /^::ffff:(?:([0-9.]+)|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/i.exec(ip)
  if (mapped) {
    if (mapped[1]) s = mapped[1]
    else return ((parseInt(mapped[2], 16) << 16) | parseInt(mapped[3], 16)) >>> 0
  }
  if (!isIPv4(s)) return undefined
  return s.split('.').reduce((n, p) => ((n << 8) | Number(p)) >>> 0, 0)
}

/** The address as one text whatever its spelling: IPv6 compressed, an IPv4-mapped IPv6 address as its IPv4 one. */
function addressKey(ip: string): string {
  const c = canonicalIp(ip) ?? ip.toLowerCase()
  const v4 = c.startsWith('::ffff:') ? v4Of(c) : undefined
  return v4 === undefined ? c : [24, 16, 8, 0].map(b => (v4 >>> b) & 255).join('.')
}

/** Whether two texts are the same address (the kernel connects `::ffff:a.b.c.d` to a.b.c.d). */
const sameAddress = (a: string, b: string): boolean => addressKey(a) === addressKey(b)

/** Why the proxy must never connect to `ip` (the runner's own addresses), or undefined. `own`: the host's interface addresses. */
export function forbiddenAddress(ip: string, own: ReadonlySet<string>): string | undefined {
  const c = canonicalIp(ip) ?? ip
  if ([...own].some(o => sameAddress(o, c))) return "one of the runner's own addresses"
  const v4 = v4Of(c)
  if (v4 !== undefined) {
    const in4 = (base: string, bits: number) => (v4 ^ (v4Of(base) as number)) >>> (32 - bits) === 0
    if (in4('127.0.0.0', 8)) return 'a loopback address'
    if (in4('169.254.0.0', 16)) return 'a link-local address (the cloud metadata service among them)'
    if (in4('0.0.0.0', 8)) return 'an unspecified address'
    if (in4('224.0.0.0', 4) || v4 === 0xffffffff) return 'a multicast or broadcast address'
    return undefined
  }
  if (c === '::1') return 'a loopback address'
  if (c === '::') return 'an unspecified address'
  if (/^fe[89ab]/.test(c)) return 'a link-local address'
  if (/^ff/.test(c)) return 'a multicast address'
  return undefined
}

/** The `allowed-domains` line that would allow `host` (the name itself, or the bare IP address). */
export const lineFor = (host: { ip: string } | { name: string }): string => ('ip' in host ? host.ip : host.name)
