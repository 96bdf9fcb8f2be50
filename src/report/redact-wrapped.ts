// Text wrapped over lines, as `base64` (76 columns), PEM (64), `xxd -p` (60) and
// `od` (16 bytes) print it: part of the Redactor (redact.ts), which searches the
// joined lines too, so a secret cut by a line break is still found.

/**
 * Base64 or base64url, or a hex dump's bytes (`xxd -p`, `od -An -tx1`), from
 * where it is tried: a line is one when this matches all of it (the classes
 * are greedy and disjoint in their first character, so the longest match is
 * the only one).
 */
const BASE64_RUN = /[A-Za-z0-9+/_-]+={0,2}|(?: [0-9A-Fa-f]{2})+/y
/** Narrower lines are not taken for wrapped base64. */
const MIN_WRAP_WIDTH = 16

/**
 * Where `find` finds something in the joined lines of text that looks like
 * base64 or a hex dump wrapped at one width (every line that width, the last
 * one no longer): flat [start, end, …] pairs, as positions in `text`; a span
 * that crosses a line takes the line break with it. Linear in the text, and
 * no string is made but of the runs of such lines (big outputs are scanned).
 */
export function wrappedSpans(text: string, find: (joined: string) => number[]): number[] {
  const found: number[] = []
  if (!text.includes('\n')) return found
  // a line by where it starts: where its content ends (a trailing \r left out) and where the next starts (-1: none)
  const endOf = (start: number) => {
    const nl = text.indexOf('\n', start)
    const end = nl < 0 ? text.length : nl
    return end > start && text.charCodeAt(end - 1) === 13 ? end - 1 : end
  }
  const nextOf = (start: number) => {
    const nl = text.indexOf('\n', start)
    return nl < 0 ? -1 : nl + 1
  }
  const isB64 = (start: number, end: number) => {
    BASE64_RUN.lastIndex = start
    return end > start && BASE64_RUN.test(text) && BASE64_RUN.lastIndex === end
  }
  for (let line = 0; line >= 0;) {
    const lineEnd = endOf(line)
    const width = lineEnd - line
    const starts = [line]
    let next = nextOf(line)
    if (width >= MIN_WRAP_WIDTH && isB64(line, lineEnd)) {
      for (; next >= 0; next = nextOf(next)) {
        const end = endOf(next)
        if (end - next > width || !isB64(next, end)) break
        starts.push(next)
        if (end - next < width) {
          next = nextOf(next)
          break
        }
      }
    }
    if (starts.length >= 2) {
      const last = starts.length - 1
      // position in the joined lines -> position in `text`
      const at = (p: number) => {
        const k = Math.min(Math.floor(p / width), last)
        return starts[k] + p - k * width
      }
      const spans = find(starts.map(s => text.slice(s, endOf(s))).join(''))
      for (let s = 0; s < spans.length; s += 2) found.push(at(spans[s]), at(spans[s + 1] - 1) + 1)
    }
    line = next
  }
  return found
}
