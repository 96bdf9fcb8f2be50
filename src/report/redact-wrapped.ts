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
  const lineAt = (start: number) => {
    const nl = text.indexOf('\n', start)
    const stop = nl < 0 ? text.length : nl
    return { start, end: stop > start && text.charCodeAt(stop - 1) === 13 ? stop - 1 : stop, next: nl < 0 ? -1 : nl + 1 }
  }
  const isB64 = (l: { start: number; end: number }) => {
    BASE64_RUN.lastIndex = l.start
    return l.end > l.start && BASE64_RUN.test(text) && BASE64_RUN.lastIndex === l.end
  }
  for (let at = 0; at >= 0;) {
    const first = lineAt(at)
    const width = first.end - first.start
    const run = [first]
    let next = first.next
    if (width >= MIN_WRAP_WIDTH && isB64(first)) {
      while (next >= 0) {
        const l = lineAt(next)
        if (l.end - l.start > width || !isB64(l)) break
        run.push(l)
        next = l.next
        if (l.end - l.start < width) break
      }
    }
    if (run.length >= 2) {
      const last = run.length - 1
      // position in the joined lines -> position in `text`
      const pos = (p: number) => {
        const k = Math.min(Math.floor(p / width), last)
        return run[k].start + p - k * width
      }
      const spans = find(run.map(l => text.slice(l.start, l.end)).join(''))
      for (let s = 0; s < spans.length; s += 2) found.push(pos(spans[s]), pos(spans[s + 1] - 1) + 1)
    }
    at = next
  }
  return found
}
