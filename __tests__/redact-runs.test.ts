// Runs of a secret in output (src/report/redact-runs.ts through the Redactor):
// any 12+ character piece of a known secret, as is, reversed or in hex, is
// masked whole, wherever it starts or ends. Property-style: many random
// base64 / base64url keys (seeded, so a failure can be replayed), and
// secrets made of repeated pieces. The Redactor is taught a key the way
// pass-env teaches it (the value and its credential-looking parts), since the
// inner parts being known is what once left the start of a piece in clear.
import { describe, expect, it } from '@jest/globals'
import { Redactor, REDACTED } from '../src/report/redact'
import { credentialParts } from '../src/sandbox/env'
import { OutputCapture, captureBytes, finishOutput } from '../src/tools/output'

/** mulberry32: a small seeded generator, so every run checks the same keys. */
function generator(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const random = generator(0x5ec2e7)
const int = (n: number): number => Math.floor(random() * n)
const bytes = (n: number): Buffer => Buffer.from(Array.from({ length: n }, () => int(256)))

const reverse = (s: string): string => [...s].reverse().join('')
const hex = (s: string): string => Buffer.from(s, 'utf8').toString('hex')
/** `od -An -tx1` style: bytes as hex pairs between spaces */
const spacedHex = (s: string): string => (hex(s).match(/../g) ?? []).join(' ')

/** A Redactor taught `key` as pass-env teaches a passed credential. */
function taught(key: string): Redactor {
  const r = new Redactor([key])
  for (const part of credentialParts(key)) r.add(part)
  return r
}

/** The texts a command could print a secret as: the runs scanned for. */
function formsOf(key: string): string[] {
  return [key, reverse(key), hex(key), hex(key).toUpperCase(), hex(reverse(key)), spacedHex(key)]
}

/** Slices of `form` of 12+ characters: random ones, and ones starting or ending at each `-_+/=` of it. */
function slicesOf(form: string, count: number): string[] {
  const out: string[] = []
  for (let k = 0; k < count; k++) {
    const len = 12 + int(form.length - 11)
    const start = int(form.length - len + 1)
    out.push(form.slice(start, start + len))
  }
  for (let i = 0; i < form.length; i++) {
    if (!'-_+/='.includes(form[i])) continue
    if (i + 12 <= form.length) out.push(form.slice(i, i + 12 + int(form.length - i - 11)))
    if (i >= 11) out.push(form.slice(int(i - 10), i + 1))
  }
  // a separator is no part of a run: a slice of `61 62 63` starting at a space shows the space
  return out.map(s => s.trim()).filter(s => s.replace(/ /g, '').length >= 12)
}

/**
 * Places a piece can be printed in. Next to it only characters that are in no
 * key's alphabet and are not skipped as hex-dump separators (`!`, `#`, a line
 * break), so exactly the piece is masked.
 */
const PLACES: Array<(piece: string) => [string, string]> = [
  p => [`!${p}!`, `!${REDACTED}!`],
  p => [p, REDACTED],
  p => [`# first line\n${p}\n# last line`, `# first line\n${REDACTED}\n# last line`],
  p => [
    `# a line ending with it !${p}\n${p}! a line starting with it`,
    `# a line ending with it !${REDACTED}\n${REDACTED}! a line starting with it`
  ],
  p => [`${p}!twice!${p}`, `${REDACTED}!twice!${REDACTED}`]
]

/**
 * Every piece of every form of `key` (of its secret part `body`, after a
 * public prefix such as `sk-ant-api03-`), in every place: what came out
 * wrong (empty when all is well).
 */
function misses(key: string, r: Redactor, slicesPerForm: number, body = key): string[] {
  const out: string[] = []
  for (const form of formsOf(body)) {
    for (const piece of slicesOf(form, slicesPerForm)) {
      for (const place of PLACES) {
        const [text, expected] = place(piece)
        const got = r.redact(text)
        if (got !== expected) out.push(`key ${key}: ${JSON.stringify(text)} -> ${JSON.stringify(got)}`)
      }
    }
  }
  return out
}

describe('runs of a secret: every 12+ character piece is masked whole', () => {
  it('random base64url keys (with - and _), pieces as is, reversed and in hex', () => {
    const found: string[] = []
    for (let k = 0; k < 60; k++) {
      const key = bytes(48).toString('base64url')
      found.push(...misses(key, taught(key), 4))
    }
    expect(found.slice(0, 5)).toEqual([])
  })

  it('random base64 keys (with +, / and = padding) and prefixed keys', () => {
    const found: string[] = []
    for (let k = 0; k < 40; k++) {
      const body = k % 2 === 0 ? bytes(31 + int(20)).toString('base64') : `probe${bytes(60).toString('base64url')}AA`
      const key = k % 2 === 0 ? body : `sk-ant-api03-${body}`
      found.push(...misses(key, taught(key), 3, body))
    }
    expect(found.slice(0, 5)).toEqual([])
  })

  it('the halves of a key printed by two commands (the case found in issue 10)', () => {
    const found: string[] = []
    for (let k = 0; k < 150; k++) {
      const key = `sk-ant-api03-probe${bytes(60).toString('base64url')}AA`
      const r = taught(key)
      for (const half of [key.slice(0, 50), key.slice(50)]) {
        const got = r.redact(`SECOND\n${half}`)
        if (got !== `SECOND\n${REDACTED}`) found.push(`${key}: ${got}`)
      }
    }
    expect(found.slice(0, 5)).toEqual([])
  })

  it('secrets made of repeated pieces: periodic ones and keys with a piece used twice', () => {
    const piece = bytes(12).toString('base64url')
    const secrets = [
      'abc'.repeat(30),
      'Q7xZ'.repeat(20),
      'k9-Tz'.repeat(15),
      `${piece}${bytes(20).toString('base64url')}${piece}${piece}`,
      `${bytes(24).toString('hex')}${'ab12'.repeat(8)}`
    ]
    const found: string[] = []
    for (const secret of secrets) {
      const r = new Redactor([secret])
      for (const form of formsOf(secret)) {
        // every start and end of the plain and reversed forms, random ones of the longer hex forms
        const all = form.length <= 64 ? slicesAll(form) : slicesOf(form, 60)
        for (const slice of all) {
          const got = r.redact(`!${slice}!`)
          if (got !== `!${REDACTED}!`) found.push(`${secret}: ${slice} -> ${got}`)
        }
      }
    }
    expect(found.slice(0, 5)).toEqual([])
  })

  it('masks a piece split across lines of a hex dump (xxd -p wraps at 60, od at 16 bytes)', () => {
    const key = bytes(48).toString('base64url')
    const r = taught(key)
    const xxd = (hex(key).match(/.{1,60}/g) ?? []).join('\n')
    expect(r.redact(xxd)).toBe(REDACTED)
    const od = (spacedHex(key).match(/.{1,48}/g) ?? []).map(l => ` ${l.trim()}`).join('\n')
    expect(r.redact(`${od}\n`)).toBe(` ${REDACTED}\n`)
  })

  it('the same piece on wrapped lines of its own is masked line by line, the line breaks kept', () => {
    const key = bytes(48).toString('base64url')
    const lines = Array.from({ length: 6 }, () => key.slice(8, 28))
    expect(taught(key).redact(lines.join('\n'))).toBe(lines.map(() => REDACTED).join('\n'))
  })

  it("leaves a token format's public prefix (its hex is `github`), masks the rest", () => {
    const pat = `github_pat_${bytes(60).toString('base64url').replace(/[-_]/g, 'x')}`
    const key = `sk-ant-api03-${bytes(60).toString('base64url')}AA`
    const r = new Redactor([pat, key])
    for (const text of ['github_pat_', 'sk-ant-api03-', 'https://github.com/o/r', 'sk-ant-api03'].flatMap(t => [
      t,
      hex(t),
      spacedHex(t),
      reverse(t)
    ]))
      expect(r.redact(`!${text}!`)).toBe(`!${text}!`)
    for (const [secret, prefix] of [
      [pat, 'github_pat_'],
      [key, 'sk-ant-api03-']
    ]) {
      // [form, how much of its start and end is the public prefix]: only that may show
      const forms: Array<[string, number, number]> = [
        [secret, prefix.length, 0],
        [reverse(secret), 0, prefix.length],
        [hex(secret), 2 * prefix.length, 0],
        [hex(reverse(secret)), 0, 2 * prefix.length]
      ]
      for (const [form, head, tail] of forms) {
        const m = /^!(.*)\*\*\*(.*)!$/.exec(r.redact(`!${form}!`))
        expect(m).not.toBeNull()
        const [shownHead, shownTail] = [m?.[1] ?? '', m?.[2] ?? '']
        expect([form.startsWith(shownHead), shownHead.length <= head, form.endsWith(shownTail), shownTail.length <= tail]).toEqual([
          true,
          true,
          true,
          true
        ])
      }
      const tail = secret.slice(-40)
      for (const form of [tail, hex(tail), spacedHex(tail), reverse(tail)]) expect(r.redact(`!${form}!`)).toBe(`!${REDACTED}!`)
    }
  })

  it('leaves text that only shares short pieces or one-character runs with a secret', () => {
    const key = `${'='.repeat(16)}${bytes(30).toString('base64url')}${'0'.repeat(16)}`
    const r = new Redactor([key])
    const text = `${'='.repeat(40)}#${'0'.repeat(40)}#${key.slice(16, 27)}#${hex(key).slice(0, 11)}#`
    expect(r.redact(text)).toBe(text)
  })
})

/** Every slice of 12+ characters. */
function slicesAll(form: string): string[] {
  const out: string[] = []
  for (let i = 0; i + 12 <= form.length; i++) for (let j = i + 12; j <= form.length; j++) out.push(form.slice(i, j))
  return out
}

describe('runs of a secret in captured command output', () => {
  // as src/run/agent.ts passes it to the command runner
  const marginOf = (r: Redactor): number => Math.max(512, r.maxFormLength)

  it('a piece written in random chunk sizes, next to the cut of a long output, shows no character of the key', () => {
    const found: string[] = []
    for (let k = 0; k < 60; k++) {
      const key = bytes(48).toString('base64url')
      const r = taught(key)
      const margin = marginOf(r)
      const maxChars = 200 + int(400)
      const piece = formsOf(key)[int(4)].slice(int(20))
      // the piece sits across the head's cut, across the tail's cut, or in the part dropped between them
      const before = '.'.repeat(Math.max(0, Math.ceil(maxChars / 2) - int(piece.length)))
      const after = '.'.repeat(int(3) === 0 ? 20_000 : Math.floor(maxChars / 2) + int(piece.length))
      const middle = '.'.repeat(20_000)
      const text = `${before}${piece}${middle}${piece}${after}`
      const capture = new OutputCapture(captureBytes(maxChars, margin))
      const all = Buffer.from(text)
      for (let at = 0; at < all.length;) {
        const n = 1 + int(700)
        capture.push(all.subarray(at, at + n))
        at += n
      }
      const { output } = finishOutput(capture.snapshot(), maxChars, margin, s => r.redact(s))
      // only dots, the masks (perhaps cut in two) and the cut marker may remain
      const shown = output
        .replace(/\n\[\.\.\. .* \.\.\.\]\n/, '')
        .replace(/\*/g, '')
        .replace(/\./g, '')
      if (shown !== '') found.push(`${key} (${piece}): ${shown}`)
    }
    expect(found.slice(0, 5)).toEqual([])
  })
})
