// The one home of secret redaction. Every text that leaves the process (comments,
// step summary, outputs, transcripts, logs) passes through a Redactor. (What
// environment commands get is sandbox/env.ts's allowlist.)
//
// For each known secret S the redactor searches for:
//   - S itself, also with any of its non-alphanumeric characters percent-encoded
//     (hex case-insensitive, `+` for space), JSON-escaped or HTML-escaped;
//   - the stable "core" of base64 / base64url of any text holding S, at each of
//     the 3 byte alignments, so S is caught inside `base64("x-access-token:" + S)`
//     (how actions/checkout stores the token in .git/config), `echo $S | base64`...;
//   - the exact base64 of `x-access-token:S`.
// and, through a rolling-hash index of 12-character windows (RunScanner):
//   - any run of 12 or more characters of S, of S reversed, of the hex of S or
//     of S reversed (either case, spaces and colons between the characters
//     ignored, as `xxd` and `hexdump -C` print them), so a secret printed in
//     two halves by two commands, or case-changed, is caught piece by piece.
//     Of a value carrying a credential (a URL with `user:password@`, an
//     `Authorization:` header) only the credential's runs are learned.
// All forms are searched in the same text and the union of what they find is
// masked, so no piece of a run is left beside a mask.
// Whatever their value, it also removes token-shaped strings: GitHub tokens
// (ghp_ gho_ ghu_ ghs_ ghr_ github_pat_), Anthropic keys (sk-ant-) and JWTs.

import { RunScanner, secretPieces } from './redact-runs'
import { wrappedSpans } from './redact-wrapped'

/** What every secret form is replaced by. */
export const REDACTED = '***'

/** Secret values shorter than this (after trim) are ignored. */
export const MIN_SECRET_LENGTH = 8

/**
 * Token-shaped strings matched whatever their value. Each is a fixed prefix and
 * one greedy character class, so a start either succeeds by taking the whole run
 * or fails within a few characters: no catastrophic backtracking.
 */
const TOKEN_SOURCES = ['gh[pousr]_[A-Za-z0-9]{20,}', 'github_pat_[A-Za-z0-9_]{20,}', 'sk-ant-[A-Za-z0-9_-]{10,}']

/** Length floor reported by maxFormLength: GitHub tokens and Anthropic keys are shorter. */
const TOKEN_CONTEXT = 256

/**
 * Dotted base64url words, starting only at the beginning of a run (the
 * lookbehind), so the scan is linear; JWTs are looked for inside each word.
 */
const DOTTED_WORD = /(?<![A-Za-z0-9_-])[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+){2,}/g
const JWT_PART_MIN = 10

const X_ACCESS_TOKEN = 'x-access-token:'

interface Form {
  source: string
  /** Longest text the form can match. */
  length: number
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&')
}

/** `%2F` → `%2[fF]`: percent-encoding with case-insensitive hex digits. */
function percentPattern(bytes: Buffer): string {
  let out = ''
  for (const b of bytes) {
    const hex = b.toString(16).toUpperCase().padStart(2, '0')
    out += '%'
    for (const d of hex) out += /[A-F]/.test(d) ? `[${d}${d.toLowerCase()}]` : d
  }
  return out
}

const HTML_ESCAPES: Record<string, string[]> = {
  '&': ['&amp;'],
  '<': ['&lt;'],
  '>': ['&gt;'],
  '"': ['&quot;', '&#34;'],
  "'": ['&#39;', '&#x27;']
}

/**
 * S as is, where each non-alphanumeric character may also appear
 * percent-encoded, JSON-escaped or HTML-escaped.
 */
function textForm(secret: string): Form {
  let source = ''
  let length = 0
  for (const ch of secret) {
    if (/^[A-Za-z0-9]$/.test(ch)) {
      source += ch
      length += 1
      continue
    }
    const bytes = Buffer.from(ch, 'utf8')
    const alternatives: string[] = [percentPattern(bytes)]
    let longest = bytes.length * 3
    const json = JSON.stringify(ch).slice(1, -1)
    const escapes = [...(HTML_ESCAPES[ch] ?? [])]
    if (json !== ch) escapes.push(json)
    if (ch === '/') escapes.push('\\/')
    for (const e of escapes) {
      alternatives.push(escapeRegExp(e))
      longest = Math.max(longest, e.length)
    }
    if (ch === ' ') alternatives.push('\\+')
    alternatives.push(escapeRegExp(ch))
    source += `(?:${alternatives.join('|')})`
    length += Math.max(longest, ch.length)
  }
  return { source, length }
}

function literal(text: string): Form {
  return { source: escapeRegExp(text), length: text.length }
}

function toBase64Url(b64: string): string {
  return b64.replace(/\+/g, '-').replace(/\//g, '_')
}

/**
 * For each byte alignment k, the part of base64(k bytes + S) that depends on S
 * only: it appears in the base64 of any text holding S at that alignment.
 */
function base64Cores(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8')
  const cores: string[] = []
  for (let k = 0; k < 3; k++) {
    const encoded = Buffer.concat([Buffer.alloc(k), bytes]).toString('base64')
    const start = k > 0 ? 4 : 0
    const end = (k + bytes.length) % 3 !== 0 ? encoded.length - 4 : encoded.length
    const core = encoded.slice(start, end)
    if (core.length >= 8) cores.push(core)
  }
  return cores
}

function formsOf(secret: string): Form[] {
  const forms: Form[] = [textForm(secret)]
  const exact = Buffer.from(X_ACCESS_TOKEN + secret, 'utf8').toString('base64')
  forms.push(literal(exact))
  for (const core of base64Cores(secret)) {
    forms.push(literal(core))
    const url = toBase64Url(core)
    if (url !== core) forms.push(literal(url))
  }
  return forms
}

/**
 * The forms of a secret that a fixed-string search (grep -F) can look for, the
 * cheap subset of what redact() finds: the value as is, JSON-escaped and
 * percent-encoded (when they differ), the base64 and base64url cores at each
 * byte alignment, and the base64 of `x-access-token:S`. Single-line forms only
 * (a multi-line value is known by its lines too).
 */
export function fixedForms(secret: string): string[] {
  const value = secret.trim()
  if (value.length < MIN_SECRET_LENGTH) return []
  const out = new Set<string>([value, JSON.stringify(value).slice(1, -1), encodeURIComponent(value)])
  out.add(Buffer.from(X_ACCESS_TOKEN + value, 'utf8').toString('base64'))
  for (const core of base64Cores(value)) {
    out.add(core)
    out.add(toBase64Url(core))
  }
  return [...out].filter(f => f.length >= MIN_SECRET_LENGTH && !/[\r\n]/.test(f))
}

/** Replace JWT-looking runs (`eyJ….eyJ….…`, each part 10+ chars) inside dotted words. */
function redactJwts(text: string): string {
  if (!text.includes('eyJ')) return text
  return text.replace(DOTTED_WORD, word => {
    if (!word.includes('eyJ')) return word
    const parts = word.split('.')
    const out: string[] = []
    let i = 0
    while (i < parts.length) {
      if (i + 2 < parts.length) {
        const first = parts[i]
        const at = first.indexOf('eyJ')
        if (
          at >= 0 &&
          first.length - at >= JWT_PART_MIN &&
          parts[i + 1].startsWith('eyJ') &&
          parts[i + 1].length >= JWT_PART_MIN &&
          parts[i + 2].length >= JWT_PART_MIN
        ) {
          out.push(first.slice(0, at) + REDACTED)
          i += 3
          continue
        }
      }
      out.push(parts[i])
      i++
    }
    return out.join('.')
  })
}

/** Where `pattern` matches in `text`: flat [start, end, …] pairs, in order. */
function matchSpans(text: string, pattern: RegExp): number[] {
  const found: number[] = []
  pattern.lastIndex = 0
  for (let m = pattern.exec(text); m !== null; m = pattern.exec(text)) {
    if (m[0].length === 0) pattern.lastIndex++
    else found.push(m.index, m.index + m[0].length)
  }
  return found
}

/** `text` with the union of the spans (flat [start, end, …] pairs, any order) replaced, overlapping and touching ones as one. */
function maskSpans(text: string, spans: number[]): string {
  if (spans.length === 0) return text
  const order = Array.from({ length: spans.length / 2 }, (_, k) => 2 * k).sort((x, y) => spans[x] - spans[y])
  let out = ''
  let from = 0
  let start = spans[order[0]]
  let end = spans[order[0] + 1]
  for (const k of order) {
    if (spans[k] <= end) {
      end = Math.max(end, spans[k + 1])
      continue
    }
    out += text.slice(from, start) + REDACTED
    from = end
    start = spans[k]
    end = spans[k + 1]
  }
  return out + text.slice(from, start) + REDACTED + text.slice(end)
}

export class Redactor {
  readonly #secrets = new Set<string>()
  readonly #forms = new Map<string, number>()
  readonly #runs = new RunScanner()
  #pattern: RegExp | null = null
  #knownPattern: RegExp | null = null
  #maxFormLength = TOKEN_CONTEXT

  constructor(secrets?: Iterable<string>) {
    if (secrets) for (const s of secrets) this.add(s)
  }

  /**
   * Add a secret value. Values shorter than 8 characters (after trim) are
   * ignored: redacting "true" or "1" would wreck output. A multi-line value also
   * adds each of its lines (8+ chars), as output often shows it line by line.
   */
  add(secret: string): void {
    if (typeof secret !== 'string') return
    const value = secret.trim()
    if (value.length < MIN_SECRET_LENGTH || this.#secrets.has(value)) return
    this.#secrets.add(value)
    for (const piece of secretPieces(value)) this.#runs.add(piece)
    for (const form of formsOf(value)) {
      if (!this.#forms.has(form.source)) {
        this.#forms.set(form.source, form.length)
        this.#maxFormLength = Math.max(this.#maxFormLength, form.length)
        this.#pattern = null
      }
    }
    if (/[\r\n]/.test(value)) for (const line of value.split(/\r?\n|\r/)) this.add(line)
  }

  /** Number of distinct secret values known. */
  get size(): number {
    return this.#secrets.size
  }

  /**
   * The secret values known (as added, trimmed; a multi-line value also by its
   * lines), for the search of files that hold one (sandbox/secret-files.ts).
   * Never printed: whoever takes them keeps them out of every output.
   */
  values(): string[] {
    return [...this.#secrets]
  }

  /**
   * The longest text any form can match (at least 256, which covers GitHub
   * tokens and Anthropic keys): keep this much context around a cut.
   */
  get maxFormLength(): number {
    return this.#maxFormLength
  }

  /** [every form and token shape, the known secrets' forms only (null when none)] */
  #compiled(): [RegExp, RegExp | null] {
    if (this.#pattern === null) {
      const sources = [...this.#forms.entries()].sort((a, b) => b[1] - a[1]).map(([source]) => source)
      this.#pattern = new RegExp([...sources, ...TOKEN_SOURCES].join('|'), 'g')
      this.#knownPattern = sources.length > 0 ? new RegExp(sources.join('|'), 'g') : null
    }
    return [this.#pattern, this.#knownPattern]
  }

  /**
   * Replace every known form of every secret, any run of 12 or more characters
   * of a secret (also reversed, in hex), and every token-shaped string, by
   * `***`; also inside base64 or a hex dump wrapped over several lines
   * (`base64` wraps at 76 columns, PEM at 64, `xxd -p` at 60, `od` at 16
   * bytes). Everything is found in the same text and the union is masked, so
   * nothing beside a mask is left of a piece. Pure; never throws.
   */
  redact(text: string): string {
    try {
      const s = typeof text === 'string' ? text : String(text)
      if (s.length === 0) return s
      const [pattern, known] = this.#compiled()
      // token shapes are left out of the joined lines: one greedy match would run on into the next line
      const inWrapped = (t: string) => [...(known ? matchSpans(t, known) : []), ...this.#runs.spans(t)]
      const spans = [...matchSpans(s, pattern), ...this.#runs.spans(s), ...wrappedSpans(s, inWrapped)]
      return redactJwts(maskSpans(s, spans))
    } catch {
      return `${REDACTED} (redaction failed)`
    }
  }

  /** True when redact would change the text: the same search, stopping at a run found and masking nothing. */
  contains(text: string): boolean {
    try {
      const s = typeof text === 'string' ? text : String(text)
      const [pattern, known] = this.#compiled()
      const hit = (t: string, p: RegExp | null) => (p !== null && matchSpans(t, p).length > 0) || this.#runs.spans(t, true).length > 0
      return s.length > 0 && (hit(s, pattern) || wrappedSpans(s, t => (hit(t, known) ? [0, 1] : [])).length > 0 || redactJwts(s) !== s)
    } catch {
      return true // as redact, which says it failed
    }
  }

  /**
   * Redact every string inside a JSON-like value (deep copy, keys included),
   * for transcripts and outputs. Arrays, plain objects, Maps and Sets are
   * copied; Errors become Errors with redacted name, message and stack; other
   * non-plain objects are copied with their own enumerable properties. Never throws.
   */
  redactDeep<T>(value: T): T {
    try {
      return this.#deep(value, new Map()) as T
    } catch {
      return (typeof value === 'string' ? this.redact(value) : REDACTED) as T
    }
  }

  #deep(value: unknown, seen: Map<object, unknown>): unknown {
    if (typeof value === 'string') return this.redact(value)
    if (value === null || typeof value !== 'object') return value
    const known = seen.get(value)
    if (known !== undefined) return known

    if (Array.isArray(value)) {
      const out: unknown[] = []
      seen.set(value, out)
      for (const item of value) out.push(this.#deep(item, seen))
      return out
    }
    if (value instanceof Date) return new Date(value.getTime())
    if (value instanceof Map) {
      const out = new Map<unknown, unknown>()
      seen.set(value, out)
      for (const [k, v] of value) out.set(this.#deep(k, seen), this.#deep(v, seen))
      return out
    }
    if (value instanceof Set) {
      const out = new Set<unknown>()
      seen.set(value, out)
      for (const v of value) out.add(this.#deep(v, seen))
      return out
    }
    if (value instanceof Error) {
      const out = new Error(this.redact(value.message))
      seen.set(value, out)
      out.name = this.redact(value.name)
      out.stack = value.stack === undefined ? undefined : this.redact(value.stack)
      for (const [k, v] of Object.entries(value)) {
        if (k !== 'message' && k !== 'name' && k !== 'stack')
          (out as unknown as Record<string, unknown>)[this.redact(k)] = this.#deep(v, seen)
      }
      return out
    }
    if (ArrayBuffer.isView(value)) return value

    const out = Object.create(Object.getPrototypeOf(value) as object | null) as Record<string, unknown>
    seen.set(value, out)
    for (const [k, v] of Object.entries(value)) out[this.redact(k)] = this.#deep(v, seen)
    return out
  }
}

const SECRET_NAMES = new Set([
  'ANTHROPIC_API_KEY',
  'ANTHROPIC_AUTH_TOKEN',
  'GITHUB_TOKEN',
  'GH_TOKEN',
  'ACTIONS_RUNTIME_TOKEN',
  'ACTIONS_ID_TOKEN_REQUEST_TOKEN',
  'INPUT_ANTHROPIC_API_KEY',
  'INPUT_GITHUB_TOKEN'
])

/** AUTH, but not AUTHOR (GIT_AUTHOR_NAME); AUTHORIZATION still counts. */
const SECRET_NAME = /TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|PRIVATE_?KEY|CREDENTIAL|ACCESS_?KEY|AUTH(?!OR(?!I))/i

function normalName(name: string): string {
  return name.replace(/-/g, '_').toUpperCase()
}

/** Whether a variable name looks like it holds a secret (hyphens count as underscores). */
export function isSecretName(name: string): boolean {
  const n = normalName(name)
  return SECRET_NAMES.has(n) || SECRET_NAME.test(n)
}

/** `Authorization: basic|bearer|token <credential>`, as in git's http.extraheader. */
const AUTH_HEADER = /authorization:\s*(basic|bearer|token)\s+([A-Za-z0-9+/=._~-]+)/gi
/** `scheme://user:password@`: a URL carrying a password. */
const URL_PASSWORD = /[a-z][a-z0-9+.-]*:\/\/([^\s/:@]*):([^\s/@]+)@/gi
/** Placeholder passwords of local test services (`postgres://postgres:postgres@localhost`): not secrets. */
const PLACEHOLDER_PASSWORD = /^(?:password|passw0rd|changeme|example|postgres|secret)$/i

/**
 * Credentials inside a value: the credential of an `Authorization:` header
 * (for basic, also the decoded `user:password` and the password alone, e.g.
 * the token of `x-access-token:TOKEN`), and the password of a URL with
 * `user:password@` (unless it is the user name again or a placeholder such as
 * `postgres`). Only parts of 8 or more characters.
 */
export function credentialsIn(value: string): string[] {
  const out = new Set<string>()
  const add = (s: string | undefined) => {
    if (s !== undefined && s.trim().length >= MIN_SECRET_LENGTH) out.add(s)
  }
  if (typeof value !== 'string') return []
  for (const m of value.matchAll(AUTH_HEADER)) {
    add(m[2])
    if (m[1].toLowerCase() === 'basic') {
      const decoded = Buffer.from(m[2], 'base64').toString('utf8')
      // only text that round-trips is a real basic credential
      if (/^[\x20-\x7e]+$/.test(decoded) && decoded.includes(':')) {
        add(decoded)
        add(decoded.slice(decoded.indexOf(':') + 1))
      }
    }
  }
  for (const m of value.matchAll(URL_PASSWORD)) {
    if (m[2] === m[1] || PLACEHOLDER_PASSWORD.test(m[2])) continue
    add(m[2])
    try {
      add(decodeURIComponent(m[2]))
    } catch {
      // not percent-encoded
    }
  }
  return [...out]
}

/**
 * Secret values found in an environment: values (length >= 8 after trim) of
 * variables whose names look secret, and credentials inside any value (an
 * `Authorization:` header, a URL with a password; see credentialsIn). Values
 * are returned as found, without duplicates.
 */
export function secretsFromEnv(env: Record<string, string | undefined>): string[] {
  const out: string[] = []
  const seen = new Set<string>()
  const add = (value: string) => {
    if (value.trim().length < MIN_SECRET_LENGTH || seen.has(value)) return
    seen.add(value)
    out.push(value)
  }
  for (const [name, value] of Object.entries(env)) {
    if (typeof value !== 'string') continue
    if (isSecretName(name)) add(value)
    for (const c of credentialsIn(value)) add(c)
    for (const c of urlTokenParts(value)) add(c)
  }
  return out
}

/**
 * The token parts of a URL (query values named like a secret, or `sig`):
 * the runner's service URLs (ACTIONS_ID_TOKEN_REQUEST_URL, a signed results
 * URL) may carry one beside the token variable itself.
 */
export function urlTokenParts(value: string): string[] {
  if (!/^https?:\/\/[^\s]*\?/i.test(value.trim())) return []
  try {
    const url = new URL(value.trim())
    return [...url.searchParams].filter(([k]) => isSecretName(k) || /^(sig|signature)$/i.test(k)).map(([, v]) => v)
  } catch {
    return []
  }
}
