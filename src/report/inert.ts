// One rendering rule for agent-controlled text (its final text, commands,
// outputs, notes, file names and diffs of its patch): one function per
// destination makes it inert there. The harness writes its own structure
// (the log, the changes, the footer) around what these return, so nothing the
// agent writes can hide, reorder or fake it, ping anyone, act as a workflow
// command, or break a request.
import { randomBytes } from 'node:crypto'
import { defuseWorkflowCommands, fenceFor, neutraliseMentions, stripImages } from '../untrusted'

/** Unpaired UTF-16 surrogates: the API rejects them, and they are no text. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g
/** C0 controls but tab, line feed and carriage return; DEL; C1 controls (U+0085 included). */
// eslint-disable-next-line no-control-regex
const CONTROL_BUT_LINES = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]/g
/** Bidi embeddings, overrides and isolates: they make shown text read in another order than it runs. */
const BIDI = /[\u202a-\u202e\u2066-\u2069]/g

/** Anything `api` or `shown` would change (surrogates, paired or not, are looked at closer). */
// eslint-disable-next-line no-control-regex
const SPECIAL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]/

/** Text fit for a request: well-formed UTF-16, no control characters but `\t`, `\n`, `\r`. */
function api(text: string): string {
  const s = typeof text === 'string' ? text : String(text ?? '')
  if (!SPECIAL.test(s)) return s // the common case, on every string of every request
  return s.replace(LONE_SURROGATE, '\ufffd').replace(CONTROL_BUT_LINES, '')
}

/** Text fit to be shown: as for `api`, line ends made `\n`, bidi controls shown as U+FFFD. */
function shown(text: string): string {
  const s = api(text)
  return SPECIAL.test(s) ? s.replace(/\r\n?/g, '\n').replace(BIDI, '\ufffd') : s
}

/**
 * A fenced code block that nothing inside can close: the fence is longer than
 * any run of backticks in the text, it starts and ends at column 0, and the
 * info string holds only `[A-Za-z0-9_+.-]`. Mentions are neutralised too.
 */
function code(text: string, lang = ''): string {
  const body = neutraliseMentions(shown(text))
  const fence = fenceFor(body)
  const info = lang.replace(/[^A-Za-z0-9_+.-]/g, '')
  // GitHub draws these languages (diagrams, maps, models, math) instead of showing the code
  const drawn = /^(?:mermaid|geojson|topojson|stl|math)$/i.test(info)
  return `${fence}${drawn ? 'text' : info}\n${body}\n${fence}`
}

/**
 * A code span for a file name or a command inside a line of harness text:
 * one line (a line end shows as ␤), delimited by more backticks than any run
 * inside, padded when it starts or ends with a backtick or a space. Not for
 * table cells (a `|` would split the cell).
 */
function inline(text: string): string {
  const body = neutraliseMentions(shown(text)).replace(/\n/g, '\u2424').replace(/\t/g, ' ')
  let longest = 0
  if (body.includes('`')) for (const run of body.match(/`+/g) ?? []) longest = Math.max(longest, run.length)
  const fence = '`'.repeat(longest + 1)
  const pad = body === '' || /^[` ]|[` ]$/.test(body) ? ' ' : ''
  return `${fence}${pad}${body}${pad}${fence}`
}

/** Hosts a link in agent prose may point to; any other becomes plain text. */
export const HOME_HOSTS = ['github.com']

/**
 * Whether `url` (a link destination as written, backslash escapes and all)
 * leads to one of `hosts`: resolved as a browser would against a page on
 * github.com, so relative links count as home and `\\\\evil`, `//evil`,
 * `https\\://evil` do not.
 */
function isHomeUrl(url: string, hosts: readonly string[]): boolean {
  const u = url.trim().replace(/\\([!-/:-@[-`{-~])/g, '$1')
  try {
    const parsed = new URL(u, 'https://github.com/o/r/issues/1')
    if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return parsed.protocol === 'mailto:'
    const host = parsed.hostname.toLowerCase()
    return hosts.some(h => host === h || host.endsWith(`.${h}`))
  } catch {
    return false
  }
}

/** Longest link destination looked at; a longer one counts as outside. */
const MAX_DESTINATION_CHARS = 2048

/**
 * The destination of an inline link or image whose `](` is at `at`: what
 * follows it, after spaces, in `<...>` or up to the first space or unbalanced
 * `)`. Undefined when longer than MAX_DESTINATION_CHARS (so the scan of each
 * `](` is bounded, and all of them linear).
 */
function destinationAt(text: string, at: number): string | undefined {
  let i = at + 2
  const end = Math.min(text.length, i + MAX_DESTINATION_CHARS)
  while (i < end && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n')) i++
  if (text[i] === '<') {
    const close = text.indexOf('>', i)
    return close < 0 || close > end ? undefined : text.slice(i + 1, close)
  }
  let depth = 0
  for (let j = i; j < end; j++) {
    const c = text[j]
    if (c === '\\') j++
    else if (c === '(') depth++
    else if (c === ')' && depth-- === 0) return text.slice(i, j)
    else if (c === ' ' || c === '\t' || c === '\n') return text.slice(i, j)
  }
  return end === text.length ? text.slice(i) : undefined
}

/**
 * URLs GitHub links by themselves (GFM autolink literals, found after
 * backslash escapes are decoded): a scheme and its `:` (`https\\://` too), or
 * `www.` (`www\\.` too).
 */
const BARE_URL = /(?<![A-Za-z0-9])(?:(https?|ftp)(\\?:)([^\s<>"'`)\]]*)|(www)(\\?\.)([^\s<>"'`)\]]+))/gi

/**
 * Agent prose without any way out of itself: no raw HTML (every `<` that
 * could open a tag, a comment, a processing instruction, a declaration or an
 * autolink gets a U+200B after it, so HTML blocks, `<details>`, `<table>`,
 * `<!--` are plain text), no link reference definitions (`]:` is broken the
 * same way), no character references (`&#58;` shows as written), no images (they become `alt (url)`), no links or autolinks to a
 * host outside `hosts` (`[label]\u200b(url)`: the link syntax broken, and the
 * URL broken so GitHub does not link it by itself), and no mentions,
 * neutralised after all of that so that removing a tag cannot join `@` to a
 * name. Code spans are treated as prose (safe over
 * pretty: an invisible U+200B may show up inside one).
 */
function prose(text: string, hosts: readonly string[] = HOME_HOSTS): string {
  let s = stripImages(text)
  // Character references could spell anything the rules below look for (`https&#58;//`, `&#60;!--`):
  // none is decoded, they show as written.
  s = s.replace(/&(?=#[0-9]|#[xX][0-9A-Fa-f]|[A-Za-z][A-Za-z0-9]{0,31};)/g, '&\u200b')
  // Every `](` that could open a link to an outside host loses its link syntax: `[label]\u200b(url)`.
  s = s.replace(/\]\(/g, (match: string, at: number, whole: string) => {
    const url = destinationAt(whole, at)
    return url !== undefined && isHomeUrl(url, hosts) ? match : ']\u200b('
  })
  s = s.replace(BARE_URL, (match: string, scheme?: string, colon?: string, rest?: string, www?: string, dot?: string, domain?: string) => {
    if (isHomeUrl(scheme ? `${scheme}:${rest}` : `https://www.${domain}`, hosts)) return match
    return scheme ? `${scheme}${colon}\u200b${rest}` : `${www}\u200b${dot}${domain}`
  })
  // `]:` also opens footnote definitions (`[^1]: …`), which GitHub shows below everything else;
  // `$$` opens display math.
  s = s
    .replace(/<(?=[A-Za-z/!?])/g, '<\u200b')
    .replace(/\]:/g, ']\u200b:')
    .replace(/\$\$/g, '$\u200b$')
  return neutraliseMentions(s)
}

interface Segment {
  kind: 'prose' | 'code'
  text: string
  lang?: string
}

/**
 * Split markdown at fenced code blocks: an opening fence (3+ backticks or
 * tildes, at any indentation, a backtick fence's info without backticks) to a
 * line holding only a fence of the same character at least as long, or to the
 * end. Content lines lose up to the opener's indentation, as CommonMark does.
 */
function segments(markdown: string): Segment[] {
  const out: Segment[] = []
  let prose: string[] = []
  let codeLines: string[] = []
  let open: { fence: string; indent: number; lang: string } | undefined
  const flushProse = () => {
    if (prose.length) out.push({ kind: 'prose', text: prose.join('\n') })
    prose = []
  }
  for (const line of markdown.split('\n')) {
    if (open === undefined) {
      const m = /^([ \t]*)(`{3,}|~{3,})(.*)$/.exec(line)
      if (m && !(m[2][0] === '`' && m[3].includes('`'))) {
        flushProse()
        open = { fence: m[2], indent: m[1].length, lang: m[3].trim().split(/\s+/)[0] ?? '' }
        codeLines = []
      } else {
        prose.push(line)
      }
      continue
    }
    const close = /^[ \t]*(`{3,}|~{3,})[ \t]*$/.exec(line)
    if (close && close[1][0] === open.fence[0] && close[1].length >= open.fence.length) {
      out.push({ kind: 'code', text: codeLines.join('\n'), lang: open.lang })
      open = undefined
      continue
    }
    let cut = 0
    while (cut < open.indent && (line[cut] === ' ' || line[cut] === '\t')) cut++
    codeLines.push(line.slice(cut))
  }
  if (open !== undefined) out.push({ kind: 'code', text: codeLines.join('\n'), lang: open.lang })
  flushProse()
  return out
}

/**
 * A block of agent markdown (its final text, a note) that renders as written
 * where that is harmless and can swallow nothing after it: fenced code blocks
 * are written again by us at column 0 (closed, with a fence nothing inside
 * can close), and everything else is prose (see `prose`). Followed by a blank
 * line and text at column 0, it has closed every block it opened.
 */
function markdown(text: string, hosts: readonly string[] = HOME_HOSTS): string {
  return segments(shown(text))
    .map(s => (s.kind === 'code' ? code(s.text, s.lang) : prose(s.text, hosts).replace(/^\n+|\n+$/g, '')))
    .filter(s => s !== '')
    .join('\n\n')
}

/** One line of agent text inside harness prose (an error message): prose, on one line. */
function text(line: string, hosts: readonly string[] = HOME_HOSTS): string {
  return prose(shown(line).replace(/\s*\n\s*/g, ' '), hosts).replace(/^(\s*)([`~]{3})/, '$1\\$2')
}

/**
 * Agent text for core.info: cleaned, defused for both of the runner's parsers
 * (`::` after any whitespace at a line start, `##[` anywhere), and fenced with
 * `::stop-commands::<random token>` … `::<token>::`, so that even a command
 * these rules missed is not processed. The token is new for every call.
 */
function log(text: string): string {
  const token = randomBytes(16).toString('hex')
  return `::stop-commands::${token}\n${logLine(text)}\n::${token}::`
}

/** Harness text for core.info that may quote foreign text (an error): cleaned and defused, not fenced. */
function logLine(text: string): string {
  return defuseWorkflowCommands(shown(text))
}

/** The per-destination renderings of agent-controlled text. */
export const inert = { markdown, text, inline, code, log, logLine, api }

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any

/**
 * A Messages API request with every string made well-formed and free of
 * control characters (`api`), except inside `thinking` and
 * `redacted_thinking` blocks, which go back byte for byte.
 */
export function inertRequest<T>(value: T): T {
  return cleanDeep(value) as T
}

function cleanDeep(value: Json): Json {
  if (typeof value === 'string') return api(value)
  if (Array.isArray(value)) {
    let changed = false
    const out = value.map(v => {
      const c = cleanDeep(v)
      if (c !== v) changed = true
      return c
    })
    return changed ? out : value
  }
  if (value === null || typeof value !== 'object') return value
  if (value.type === 'thinking' || value.type === 'redacted_thinking') return value
  let out: Json | undefined
  for (const [k, v] of Object.entries(value)) {
    const c = cleanDeep(v)
    if (c !== v) {
      out ??= { ...value }
      out[k] = c
    }
  }
  return out ?? value
}
