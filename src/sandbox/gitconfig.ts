// A reader of git's config file syntax that keeps where each entry and
// section header sits in the file, so credential entries can be cut out and
// the rest left byte for byte. It follows git's own parser (config.c:
// git_parse_source, get_base_var, get_value, parse_value), including keys on
// a section header's line, quoted and continued values and old-style
// `[section.sub]` headers. The text is the file's bytes as latin1, so offsets
// are byte offsets; values are returned as UTF-8.

export interface ConfigEntry {
  /** `section.subsection.name` as git prints it: section and name lower case */
  key: string
  section: string
  /** undefined when the header has none */
  subsection: string | undefined
  name: string
  /** the parsed value (UTF-8); undefined for a bare boolean key */
  value: string | undefined
  /** the raw bytes of the value as written (latin1) */
  raw: string
  /** byte offsets: the key's first byte, and just past the end of its last line (after the `\n`, or the end of file) */
  start: number
  end: number
  /** offset of the first byte of the line the key starts on */
  lineStart: number
  /** index into sections of the section it belongs to (-1 before any header) */
  sectionIndex: number
}

export interface ConfigSection {
  section: string
  subsection: string | undefined
  /** the header `[...]`'s offsets: `[` and just past `]` */
  start: number
  end: number
  lineStart: number
}

export interface ParsedConfig {
  entries: ConfigEntry[]
  sections: ConfigSection[]
}

export class ConfigSyntaxError extends Error {}

const isKeyChar = (c: string) => /^[A-Za-z0-9-]$/.test(c)
const isSpace = (c: string) => c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\v' || c === '\f'

/** Config text (the file's bytes as latin1) read as UTF-8. */
export const utf8 = (latin1: string): string => Buffer.from(latin1, 'latin1').toString('utf8')

/** The file's characters as git's get_next_char hands them out, and where the reader is. */
class Cursor {
  /** offset of the next character; n + 1 once the end of file was read */
  i: number
  readonly n: number
  constructor(readonly text: string) {
    this.n = text.length
    // skip a UTF-8 byte order mark, as git does
    this.i = text.startsWith('\xef\xbb\xbf') ? 3 : 0
  }

  /** next character as git's get_next_char sees it: `\r\n` is `\n`; end of file is `\n` */
  next(): { c: string; eof: boolean } {
    if (this.i >= this.n) {
      this.i = this.n + 1
      return { c: '\n', eof: true }
    }
    let c = this.text[this.i++]
    if (c === '\r' && this.text[this.i] === '\n') c = this.text[this.i++]
    return { c, eof: false }
  }

  /** the offset just read up to, never past the end */
  get offset(): number {
    return Math.min(this.i, this.n)
  }

  fail(why: string): never {
    throw new ConfigSyntaxError(`${why} at byte ${this.offset}`)
  }
}

/** Parse config bytes. Throws ConfigSyntaxError where git would refuse the file. */
export function parseConfig(bytes: Buffer): ParsedConfig {
  const cur: Cursor = new Cursor(bytes.toString('latin1'))
  const entries: ConfigEntry[] = []
  const sections: ConfigSection[] = []
  let lineStart = cur.i
  let comment = false
  for (;;) {
    const at = cur.i
    const { c, eof } = cur.next()
    if (c === '\n') {
      if (eof) break
      comment = false
      lineStart = cur.i
      continue
    }
    if (comment || isSpace(c)) continue
    if (c === '#' || c === ';') {
      comment = true
      continue
    }
    if (c === '[') {
      sections.push(readHeader(cur, at, lineStart))
      continue
    }
    if (!/^[A-Za-z]$/.test(c)) cur.fail('bad config line')
    if (sections.length === 0) cur.fail('key before any section')
    entries.push(readEntry(cur, c, { at, lineStart, sectionIndex: sections.length - 1, section: sections[sections.length - 1] }))
    if (cur.i <= cur.n) lineStart = cur.i
  }
  return { entries, sections }
}

/** A section header, its `[` already read: `[section]`, `[section "sub"]` or old style `[section.sub]`. */
function readHeader(cur: Cursor, at: number, lineStart: number): ConfigSection {
  let name = ''
  let subsection: string | undefined
  for (;;) {
    const r = cur.next()
    if (r.eof) cur.fail('unterminated section header')
    if (r.c === ']') break
    if (isSpace(r.c)) {
      subsection = readSubsection(cur)
      break
    }
    if (!isKeyChar(r.c) && r.c !== '.') cur.fail('bad section name')
    name += r.c.toLowerCase()
  }
  if (subsection === undefined && name.includes('.')) {
    // old style [section.sub]: git lower-cases all of it
    const dot = name.indexOf('.')
    subsection = name.slice(dot + 1)
    name = name.slice(0, dot)
  }
  return { section: name, subsection: subsection === undefined ? undefined : utf8(subsection), start: at, end: cur.i, lineStart }
}

/** The `"subsection"]` of `[section "subsection"]`, after the space: its name, unescaped (latin1). */
function readSubsection(cur: Cursor): string {
  let s = cur.next()
  while (s.c === ' ' || s.c === '\t') s = cur.next()
  if (s.c !== '"') cur.fail('bad section header')
  let subsection = ''
  for (;;) {
    let q = cur.next()
    if (q.c === '\n') cur.fail('line break in a subsection')
    if (q.c === '"') break
    if (q.c === '\\') {
      q = cur.next()
      if (q.c === '\n') cur.fail('line break in a subsection')
    }
    subsection += q.c
  }
  if (cur.next().c !== ']') cur.fail('bad section header')
  return subsection
}

/** One `name [= value]` entry, its first letter `first` already read, up to and including its (last) line break. */
function readEntry(
  cur: Cursor,
  first: string,
  where: { at: number; lineStart: number; sectionIndex: number; section: ConfigSection }
): ConfigEntry {
  const { section, subsection } = where.section
  let name = first.toLowerCase()
  let r = cur.next()
  while (!r.eof && isKeyChar(r.c)) {
    name += r.c.toLowerCase()
    r = cur.next()
  }
  while (r.c === ' ' || r.c === '\t') r = cur.next()
  let value: string | undefined
  const valueStart = cur.i
  if (r.c !== '\n') {
    if (r.c !== '=') cur.fail('bad key')
    value = readValue(cur)
  }
  const end = cur.offset
  return {
    key: [section, ...(subsection === undefined ? [] : [subsection]), name].join('.'),
    section,
    subsection,
    name,
    value: value === undefined ? undefined : utf8(value),
    raw: value === undefined ? '' : cur.text.slice(valueStart, end).replace(/\r?\n$/, ''),
    start: where.at,
    end,
    lineStart: where.lineStart,
    sectionIndex: where.sectionIndex
  }
}

/** A value after its `=`, as git's parse_value reads it: quotes, escapes, continued lines, trailing comment and spaces dropped. */
function readValue(cur: Cursor): string {
  let quote = false
  let spaces = 0
  let inComment = false
  let value = ''
  for (;;) {
    const { c } = cur.next()
    if (c === '\n') {
      if (quote) cur.fail('unterminated quote')
      return value
    }
    if (inComment) continue
    if (!quote) {
      if (isSpace(c)) {
        if (value.length > 0) spaces++
        continue
      }
      if (c === ';' || c === '#') {
        inComment = true
        continue
      }
    }
    for (; spaces > 0; spaces--) value += ' '
    if (c === '\\') value += readEscape(cur)
    else if (c === '"') quote = !quote
    else value += c
  }
}

/** What follows a backslash in a value: the escaped character, or nothing for a line continuation. */
function readEscape(cur: Cursor): string {
  const { c } = cur.next()
  if (c === '\n') return ''
  if (c === 't') return '\t'
  if (c === 'b') return '\b'
  if (c === 'n') return '\n'
  if (c !== '\\' && c !== '"') cur.fail('bad escape')
  return c
}

/** A config value written so git reads back exactly `value` (UTF-8). */
export function quoteValue(value: string): string {
  const body = Buffer.from(value, 'utf8')
    .toString('latin1')
    .replace(/\\/g, '\\\\')
    .replace(/"/g, '\\"')
    .replace(/\n/g, '\\n')
    .replace(/\t/g, '\\t')
    .split('\b')
    .join('\\b')
  return `"${body}"`
}
