// Any run of 12 or more characters of a known secret, of the secret reversed,
// of its hex or of the hex of the reversed secret (either case; spaces and
// colons between the characters, as hex dumps print them, ignored), found in
// one pass over a text: a secret printed in two halves by two commands, `rev`,
// `xxd -p`, `od -tx1` or `tr a-z A-Z` of it. Part of the Redactor (redact.ts),
// which masks the union of these runs and its other forms' matches, all found
// in the same text: masking one first would leave the rest of a piece, now
// shorter than a window, in clear.

/** Any run of this many characters of a secret (or of its reversed or hex forms) is redacted. */
export const SECRET_RUN_CHARS = 12
/**
 * A window with fewer distinct characters (`============`, `0a0a0a0a0a0a`, the
 * hex of one repeated character) says nothing about a secret; three is enough
 * for a secret made of a repeated piece (`abcabc…`, `Q7xZQ7xZ…`).
 */
const MIN_DISTINCT_CHARS = 3
/** Bits of the hash filter in front of the window set. */
const FILTER_BITS = 1 << 20
const HASH_BASE = 0x01000193

/** Characters a window skips: separators of hex dumps. */
const isSkipped = (c: number) => c === 0x20 || c === 0x3a
/** ASCII letters folded to lower case, so case-changed secrets and upper-case hex match. */
const fold = (c: number) => (c >= 0x41 && c <= 0x5a ? c + 0x20 : c)

/** The kept characters of `text` (folded, skipped ones left out). */
function normalised(text: string): string {
  let out = ''
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (!isSkipped(c)) out += String.fromCharCode(fold(c))
  }
  return out
}

/** The 12-character windows of `secret`, of it reversed, of its hex and of the hex of it reversed (normalised). */
function windowsOf(secret: string): string[] {
  const reversed = [...secret].reverse().join('')
  const out: string[] = []
  for (const form of [secret, reversed, Buffer.from(secret, 'utf8').toString('hex'), Buffer.from(reversed, 'utf8').toString('hex')]) {
    const n = normalised(form)
    for (let i = 0; i + SECRET_RUN_CHARS <= n.length; i++) out.push(n.slice(i, i + SECRET_RUN_CHARS))
  }
  return out
}

/**
 * Windows of the public prefixes of token formats (`sk-ant-api03`, the hex of
 * `github` in `github_pat_`): wherever they appear in a secret (also after
 * `x-access-token:`), they say nothing about it.
 */
const PUBLIC_WINDOWS = new Set(['github_pat_', 'sk-ant-api03-', 'sk-ant-admin01-', 'sk-ant-oat01-', 'sk-ant-ort01-'].flatMap(windowsOf))

/** Whether `s` has at least `n` different characters (without a Set for each of a secret's windows). */
function hasDistinct(s: string, n: number): boolean {
  const seen: number[] = []
  for (let i = 0; i < s.length && seen.length < n; i++) if (!seen.includes(s.charCodeAt(i))) seen.push(s.charCodeAt(i))
  return seen.length >= n
}

function hashOf(window: string): number {
  let h = 0
  for (let i = 0; i < window.length; i++) h = (Math.imul(h, HASH_BASE) + window.charCodeAt(i)) | 0
  return h
}

/**
 * The 12-character windows of every known secret's forms, and a scan that
 * finds them in a text in one pass: a polynomial rolling hash over the last
 * 12 kept characters, a bit filter, then an exact check of the window.
 */
export class RunScanner {
  readonly #windows = new Set<string>()
  readonly #filter = new Uint8Array(FILTER_BITS / 8)
  /** HASH_BASE ** (SECRET_RUN_CHARS - 1), for taking the oldest character out of the hash */
  readonly #top: number

  constructor() {
    let top = 1
    for (let i = 1; i < SECRET_RUN_CHARS; i++) top = Math.imul(top, HASH_BASE)
    this.#top = top
  }

  get size(): number {
    return this.#windows.size
  }

  add(secret: string): void {
    for (const w of windowsOf(secret)) {
      if (this.#windows.has(w) || PUBLIC_WINDOWS.has(w) || !hasDistinct(w, MIN_DISTINCT_CHARS)) continue
      this.#windows.add(w)
      const h = hashOf(w) & (FILTER_BITS - 1)
      this.#filter[h >>> 3] |= 1 << (h & 7)
    }
  }

  /**
   * Where runs covered by known windows are in `text`: flat [start, end, …]
   * pairs, in order, overlapping runs merged. A run starts and
   * ends at a kept character; skipped ones inside it belong to it. `first`:
   * stop at the first run found.
   */
  spans(text: string, first = false): number[] {
    const found: number[] = []
    if (this.#windows.size === 0 || text.length < SECRET_RUN_CHARS) return found
    // the window's kept characters as a ring: their positions in `text` and their folded codes;
    // `slot` is where the next one goes, which is where the oldest of a full window is
    const at = new Int32Array(SECRET_RUN_CHARS)
    const codes = new Int32Array(SECRET_RUN_CHARS)
    const filter = this.#filter
    const top = this.#top
    let slot = 0
    let kept = 0
    let h = 0
    for (let i = 0; i < text.length; i++) {
      const raw = text.charCodeAt(i)
      if (isSkipped(raw)) continue
      const c = fold(raw)
      if (kept >= SECRET_RUN_CHARS) h = (h - Math.imul(codes[slot], top)) | 0
      h = (Math.imul(h, HASH_BASE) + c) | 0
      at[slot] = i
      codes[slot] = c
      slot = slot === SECRET_RUN_CHARS - 1 ? 0 : slot + 1
      if (kept < SECRET_RUN_CHARS && ++kept < SECRET_RUN_CHARS) continue
      const bit = h & (FILTER_BITS - 1)
      if ((filter[bit >>> 3] & (1 << (bit & 7))) === 0) continue
      const start = at[slot]
      if (!this.#windows.has(normalised(text.slice(start, i + 1)))) continue
      // touching runs stay apart: in joined wrapped lines they may be two lines' own runs
      if (found.length > 0 && found[found.length - 1] > start) found[found.length - 1] = i + 1
      else found.push(start, i + 1)
      if (first) break
    }
    return found
  }
}

/** `scheme://userinfo@…`: a URL carrying credentials; what follows `@` (host, path) is public. */
const CREDENTIAL_URL = /(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*:\/\/([^\s/@]+)@\S*/g
/** `Authorization: basic|bearer|token `, and what precedes it on its line (`extraheader = `): public. */
const AUTH_PREFIX = /[^\n]*authorization:[ \t]*(?:basic|bearer|token)[ \t]+/gi

/**
 * The parts of a secret value whose runs are worth looking for: the value
 * without the public parts of the credentials it carries. Of a URL with
 * `user:password@` only the user:password pair stays (also percent-decoded),
 * not the scheme, host or path; of an `Authorization:` header only the
 * credential. So the hex of `//github.com` is not taken for a secret once
 * `https://x-access-token:TOKEN@github.com/o/r` is known.
 */
export function secretPieces(value: string): string[] {
  const extra: string[] = []
  let cut = value.replace(CREDENTIAL_URL, (_, userinfo: string) => {
    try {
      const decoded = decodeURIComponent(userinfo)
      if (decoded !== userinfo) extra.push(decoded)
    } catch {
      // not percent-encoded
    }
    return `\0${userinfo}\0`
  })
  if (/authorization:/i.test(cut)) cut = cut.replace(AUTH_PREFIX, '\0')
  return [...cut.split('\0'), ...extra].filter(p => p.length >= SECRET_RUN_CHARS)
}
