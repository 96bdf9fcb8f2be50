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

const utf8 = (latin1: string) => Buffer.from(latin1, 'latin1').toString('utf8')

/** Parse config bytes. Throws ConfigSyntaxError where git would refuse the file. */
export function parseConfig(bytes: Buffer): ParsedConfig {
  const text = bytes.toString('latin1')
  let i = 0
  // skip a UTF-8 byte order mark, as git does
  if (text.startsWith('\xef\xbb\xbf')) i = 3
  const n = text.length
  const entries: ConfigEntry[] = []
  const sections: ConfigSection[] = []
  let lineStart = i

  /** next character as git's get_next_char sees it: `\r\n` is `\n`; end of file is `\n` */
  const next = (): { c: string; eof: boolean } => {
    if (i >= n) {
      i = n + 1
      return { c: '\n', eof: true }
    }
    let c = text[i++]
    if (c === '\r' && text[i] === '\n') c = text[i++]
    return { c, eof: false }
  }
  const fail = (why: string): never => {
    throw new ConfigSyntaxError(`${why} at byte ${Math.min(i, n)}`)
  }

  let current: { section: string; subsection: string | undefined; index: number } | undefined
  let comment = false
  for (;;) {
    const at = i
    const { c, eof } = next()
    if (c === '\n') {
      if (eof) break
      comment = false
      lineStart = i
      continue
    }
    if (comment || isSpace(c)) continue
    if (c === '#' || c === ';') {
      comment = true
      continue
    }
    if (c === '[') {
      // section header
      let name = ''
      let subsection: string | undefined
      for (;;) {
        const r = next()
        if (r.eof) fail('unterminated section header')
        if (r.c === ']') break
        if (isSpace(r.c)) {
          // [section "subsection"]
          let s = next()
          while (s.c === ' ' || s.c === '\t') s = next()
          if (s.c !== '"') fail('bad section header')
          subsection = ''
          for (;;) {
            let q = next()
            if (q.c === '\n') fail('line break in a subsection')
            if (q.c === '"') break
            if (q.c === '\\') {
              q = next()
              if (q.c === '\n') fail('line break in a subsection')
            }
            subsection += q.c
          }
          if (next().c !== ']') fail('bad section header')
          break
        }
        if (!isKeyChar(r.c) && r.c !== '.') fail('bad section name')
        name += r.c.toLowerCase()
      }
      if (subsection === undefined && name.includes('.')) {
        // old style [section.sub]: git lower-cases all of it
        const dot = name.indexOf('.')
        subsection = name.slice(dot + 1)
        name = name.slice(0, dot)
      }
      sections.push({ section: name, subsection: subsection === undefined ? undefined : utf8(subsection), start: at, end: i, lineStart })
      current = { section: name, subsection: subsection === undefined ? undefined : utf8(subsection), index: sections.length - 1 }
      continue
    }
    if (!/^[A-Za-z]$/.test(c)) fail('bad config line')
    if (!current) fail('key before any section')
    const section = current as { section: string; subsection: string | undefined; index: number }
    // key
    let name = c.toLowerCase()
    let r = next()
    while (!r.eof && isKeyChar(r.c)) {
      name += r.c.toLowerCase()
      r = next()
    }
    while (r.c === ' ' || r.c === '\t') r = next()
    let value: string | undefined
    const valueStart = i
    if (r.c !== '\n') {
      if (r.c !== '=') fail('bad key')
      value = parseValue()
    }
    const end = Math.min(i, n)
    entries.push({
      key: [section.section, ...(section.subsection === undefined ? [] : [section.subsection]), name].join('.'),
      section: section.section,
      subsection: section.subsection,
      name,
      value: value === undefined ? undefined : utf8(value),
      raw: value === undefined ? '' : text.slice(valueStart, end).replace(/\r?\n$/, ''),
      start: at,
      end,
      lineStart,
      sectionIndex: section.index
    })
    if (i <= n) lineStart = i
  }
  return { entries, sections }

  function parseValue(): string {
    let quote = false
    let spaces = 0
    let inComment = false
    let value = ''
    for (;;) {
      let { c } = next()
      if (c === '\n') {
        if (quote) fail('unterminated quote')
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
      if (c === '\\') {
        c = next().c
        if (c === '\n') continue
        if (c === 't') c = '\t'
        else if (c === 'b') c = '\b'
        else if (c === 'n') c = '\n'
        else if (c !== '\\' && c !== '"') fail('bad escape')
        value += c
        continue
      }
      if (c === '"') {
        quote = !quote
        continue
      }
      value += c
    }
  }
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
