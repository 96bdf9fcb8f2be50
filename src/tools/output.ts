// Bounded capture of a command's output, and the text made from it.
//
// A command may print gigabytes; we keep only the first bytes (head), a
// rolling window of the last bytes (tail) and a byte count, so memory stays
// bounded whatever the command does. The text sent back is cleaned (UTF-8,
// no terminal escapes or control characters), redacted, then cut to a limit.

/** Bytes kept for each of head and tail: enough for `ceil(maxChars/2)` chars of 4-byte UTF-8 plus the redaction margin. */
export function captureBytes(maxChars: number, margin: number): number {
  return 4 * Math.ceil(Math.max(0, maxChars) / 2) + Math.max(0, margin)
}

/** What was captured: the first bytes, the last bytes, and how many bytes there were in all. */
export interface CaptureSnapshot {
  head: Buffer
  tail: Buffer
  totalBytes: number
  /** head and tail together are the whole output (nothing was dropped between them) */
  complete: boolean
}

/**
 * Keeps the first `headCap` bytes and a rolling window of the last `tailCap`
 * bytes after them. The tail is a list of chunks: whole chunks are dropped
 * from the front and at most the first one is sliced, so a chunk costs
 * O(chunk) rather than O(window). Small chunks are packed together first so
 * a command writing byte by byte cannot make the list long.
 */
export class OutputCapture {
  readonly headCap: number
  readonly tailCap: number
  private readonly head: Buffer[] = []
  private headLen = 0
  private tail: Buffer[] = []
  private tailLen = 0
  private readonly pend: Buffer
  private pendLen = 0
  private total = 0

  constructor(headCap: number, tailCap: number = headCap) {
    this.headCap = Math.max(0, Math.floor(headCap))
    this.tailCap = Math.max(0, Math.floor(tailCap))
    this.pend = Buffer.allocUnsafe(Math.max(1, Math.min(4096, this.tailCap)))
  }

  /** Bytes seen so far. */
  get totalBytes(): number {
    return this.total
  }

  push(chunk: Buffer): void {
    if (chunk.length === 0) return
    this.total += chunk.length
    let c = chunk
    if (this.headLen < this.headCap) {
      const take = Math.min(this.headCap - this.headLen, c.length)
      // copy: the head lives for the whole run and must not pin a larger backing store
      this.head.push(Buffer.from(c.subarray(0, take)))
      this.headLen += take
      if (take === c.length) return
      c = c.subarray(take)
    }
    if (this.tailCap === 0) return
    if (c.length >= this.pend.length) {
      this.flushPend()
      this.pushTail(c.length > this.tailCap ? c.subarray(c.length - this.tailCap) : c)
      return
    }
    if (this.pendLen + c.length > this.pend.length) this.flushPend()
    c.copy(this.pend, this.pendLen)
    this.pendLen += c.length
  }

  private flushPend(): void {
    if (this.pendLen === 0) return
    const packed = Buffer.from(this.pend.subarray(0, this.pendLen))
    this.pendLen = 0
    this.pushTail(packed)
  }

  private pushTail(chunk: Buffer): void {
    // a small view into a big allocation would keep the whole allocation alive
    const c = chunk.buffer.byteLength > 2 * chunk.length + 65536 ? Buffer.from(chunk) : chunk
    this.tail.push(c)
    this.tailLen += c.length
    let drop = 0
    while (drop < this.tail.length - 1 && this.tailLen - this.tail[drop].length >= this.tailCap) {
      this.tailLen -= this.tail[drop].length
      drop++
    }
    if (drop > 0) this.tail = this.tail.slice(drop)
    if (this.tailLen > this.tailCap) {
      const extra = this.tailLen - this.tailCap
      this.tail[0] = this.tail[0].subarray(extra)
      this.tailLen -= extra
    }
  }

  snapshot(): CaptureSnapshot {
    this.flushPend()
    const head = Buffer.concat(this.head, this.headLen)
    const tail = Buffer.concat(this.tail, this.tailLen)
    return {
      head,
      tail,
      totalBytes: this.total,
      complete: head.length + tail.length === this.total
    }
  }
}

const decoder = new TextDecoder('utf-8', { fatal: false })

function decode(b: Buffer): string {
  return decoder.decode(b)
}

/** Drop a multibyte character cut off at the end of `b`. */
function dropIncompleteEnd(b: Buffer): Buffer {
  for (let i = 1; i <= Math.min(4, b.length); i++) {
    const x = b[b.length - i]
    if ((x & 0xc0) === 0x80) continue
    const need = x >= 0xf0 ? 4 : x >= 0xe0 ? 3 : x >= 0xc0 ? 2 : 1
    return need > i ? b.subarray(0, b.length - i) : b
  }
  return b
}

/** Drop the continuation bytes of a multibyte character cut off at the start of `b`. */
function dropIncompleteStart(b: Buffer): Buffer {
  let i = 0
  while (i < 3 && i < b.length && (b[i] & 0xc0) === 0x80) i++
  return b.subarray(i)
}

// Terminal escape sequences: CSI (7- and 8-bit), OSC, DCS/SOS/PM/APC strings, other ESC sequences.
const ANSI =
  // eslint-disable-next-line no-control-regex
  /\x1b\[[0-?]*[ -/]*[@-~]|\x9b[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)|\x1b[PX^_][^\x1b\x9c]*(?:\x1b\\|\x9c)|\x1b[ -/]*[0-~]/g
// eslint-disable-next-line no-control-regex
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g

/**
 * Make captured text fit for a model: strip terminal escapes, turn `\r\n`
 * into `\n`, resolve `\r` progress overwrites the way a terminal shows them
 * (the last non-empty segment of the line wins), and remove NUL and other
 * C0/C1 control characters except `\n` and `\t`.
 */
export function cleanText(text: string): string {
  let s = text.replace(ANSI, '')
  s = s.replaceAll('\r\n', '\n')
  if (s.includes('\r')) {
    s = s
      .split('\n')
      .map(line => {
        if (!line.includes('\r')) return line
        const parts = line.split('\r')
        for (let i = parts.length - 1; i >= 0; i--) if (parts[i] !== '') return parts[i]
        return ''
      })
      .join('\n')
  }
  return s.replace(CONTROL, '')
}

function isHigh(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff
}
function isLow(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff
}

/** First `n` chars without splitting a surrogate pair. */
function headSlice(s: string, n: number): string {
  let end = Math.max(0, Math.min(n, s.length))
  if (end > 0 && end < s.length && isHigh(s.charCodeAt(end - 1))) end--
  return s.slice(0, end)
}

/** Text from `start` on, without starting inside a surrogate pair. */
function tailFrom(s: string, start: number): string {
  let i = Math.max(0, Math.min(start, s.length))
  if (i > 0 && i < s.length && isLow(s.charCodeAt(i))) i++
  return s.slice(i)
}

function marker(cutBytes: number, first: number, last: number): string {
  const shown =
    first === last ? `the first and last ${first} characters are shown` : `the first ${first} and last ${last} characters are shown`
  return `\n[... ${cutBytes} bytes of output cut; ${shown} ...]\n`
}

export interface FinishedOutput {
  output: string
  truncated: boolean
}

/**
 * Turn a capture into the text for the record: decode, clean, redact, cut.
 * Redaction always sees `margin` characters beyond each cut, and text next to
 * a byte boundary where data was dropped (where a secret may be split and
 * unrecognisable) is discarded, so no part of a secret shorter than `margin`
 * survives. Output length stays within `maxChars` plus the marker line.
 */
export function finishOutput(snap: CaptureSnapshot, maxChars: number, margin: number, redact: (text: string) => string): FinishedOutput {
  const max = Math.max(1, Math.floor(maxChars))
  const m = Math.max(0, Math.floor(margin))
  const headChars = Math.ceil(max / 2)
  const tailChars = Math.floor(max / 2)

  if (snap.complete) {
    const text = redact(cleanText(decode(Buffer.concat([snap.head, snap.tail])))).trimEnd()
    if (text.length <= max) return { output: text === '' ? '(no output)' : text, truncated: false }
    const h = headSlice(text, headChars)
    const t = tailFrom(text, text.length - tailChars)
    const cut = Math.max(0, snap.totalBytes - Buffer.byteLength(h) - Buffer.byteLength(t))
    return { output: h + marker(cut, h.length, t.length) + t, truncated: true }
  }

  // Data was dropped between head and tail: each side is redacted on its own,
  // holding up to 2 * `margin` chars beyond the cut, and the `margin` chars
  // next to the gap (after redaction) are discarded.
  const headText = cleanText(decode(dropIncompleteEnd(snap.head)))
  const hr = redact(headText.slice(0, headChars + 2 * m))
  const h = headSlice(hr, Math.min(headChars, hr.length - m))

  const tailText = cleanText(decode(dropIncompleteStart(snap.tail))).trimEnd()
  const tr = redact(tailText.slice(Math.max(0, tailText.length - (tailChars + 2 * m)))).trimEnd()
  const t = tailFrom(tr, Math.max(m, tr.length - tailChars))

  const cut = Math.max(0, snap.totalBytes - Buffer.byteLength(h) - Buffer.byteLength(t))
  return { output: h + marker(cut, h.length, t.length) + t, truncated: true }
}
