// Any run of 12 or more characters of a known secret, of the secret reversed,
// of its hex or of the hex of the reversed secret (either case; spaces and
// colons between the characters, as hex dumps print them, ignored), found in
// one pass over a text: a secret printed in two halves by two commands, `rev`,
// `xxd -p`, `od -tx1` or `tr a-z A-Z` of it. Part of the Redactor (redact.ts).

/** Any run of this many characters of a secret (or of its reversed or hex forms) is redacted. */
export const SECRET_RUN_CHARS = 12
/** A window with fewer distinct characters (`============`) says nothing about a secret. */
const MIN_DISTINCT_CHARS = 5
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
    const bytes = Buffer.from(secret, 'utf8')
    const reversed = [...secret].reverse().join('')
    const forms = [secret, reversed, bytes.toString('hex'), Buffer.from(reversed, 'utf8').toString('hex')]
    for (const form of forms) {
      const n = normalised(form)
      for (let i = 0; i + SECRET_RUN_CHARS <= n.length; i++) {
        const w = n.slice(i, i + SECRET_RUN_CHARS)
        if (new Set(w).size < MIN_DISTINCT_CHARS || this.#windows.has(w)) continue
        this.#windows.add(w)
        const h = hashOf(w) & (FILTER_BITS - 1)
        this.#filter[h >>> 3] |= 1 << (h & 7)
      }
    }
  }

  /** `text` with every run covered by known windows replaced by `replacement`. */
  redact(text: string, replacement: string): string {
    if (this.#windows.size === 0 || text.length < SECRET_RUN_CHARS) return text
    const at = new Int32Array(SECRET_RUN_CHARS) // positions of the kept characters in the window (ring)
    const filter = this.#filter
    const top = this.#top
    let kept = 0
    let h = 0
    let out = ''
    let from = 0
    let runStart = -1
    let runEnd = -1
    for (let i = 0; i < text.length; i++) {
      const raw = text.charCodeAt(i)
      if (isSkipped(raw)) continue
      const c = fold(raw)
      if (kept >= SECRET_RUN_CHARS) {
        const oldest = fold(text.charCodeAt(at[kept % SECRET_RUN_CHARS]))
        h = (h - Math.imul(oldest, top)) | 0
      }
      h = (Math.imul(h, HASH_BASE) + c) | 0
      at[kept % SECRET_RUN_CHARS] = i
      kept++
      if (kept < SECRET_RUN_CHARS) continue
      const bit = h & (FILTER_BITS - 1)
      if ((filter[bit >>> 3] & (1 << (bit & 7))) === 0) continue
      const start = at[kept % SECRET_RUN_CHARS]
      if (!this.#windows.has(normalised(text.slice(start, i + 1)))) continue
      if (runEnd >= start) {
        runEnd = i + 1
      } else {
        if (runStart >= 0) out += text.slice(from, runStart) + replacement
        if (runStart >= 0) from = runEnd
        runStart = start
        runEnd = i + 1
      }
    }
    if (runStart < 0) return text
    return out + text.slice(from, runStart) + replacement + text.slice(runEnd)
  }
}
