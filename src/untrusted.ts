// Text from issues, comments and the model is data, not instructions: helpers to
// take out what a human reader would not see (so the model cannot be steered by
// hidden text), to keep shown text from pinging people or closing its code
// block, and to keep a crafted reply from making GitHub fetch an attacker's URL.
import { fromMarkdown } from 'mdast-util-from-markdown'
import { gfmFromMarkdown } from 'mdast-util-gfm'
import { gfm } from 'micromark-extension-gfm'

/**
 * Invisible characters: Unicode's Default_Ignorable_Code_Point covers zero-width
 * characters (U+200B-U+200F, U+2060-U+2064, U+FEFF, U+180E), the soft hyphen,
 * bidi controls (U+061C, U+202A-U+202E, U+2066-U+2069), tag characters
 * (U+E0000-U+E007F), variation selectors, Hangul fillers and other invisible
 * format characters.
 */
const INVISIBLE = /\p{Default_Ignorable_Code_Point}/gu
const PICTOGRAPH = /^[\p{Extended_Pictographic}\p{Emoji_Modifier}\uFE0F]$/u
const EXT_PICTOGRAPH = /^\p{Extended_Pictographic}$/u
const DEFAULT_IGNORABLE = /^\p{Default_Ignorable_Code_Point}$/u
/** Letters of scripts whose spelling uses ZWNJ/ZWJ (Persian, Hindi, Malayalam, Sinhala...). */
const JOINING_SCRIPT =
  /^(?=[\p{L}\p{M}])[\p{scx=Arabic}\p{scx=Syriac}\p{scx=Thaana}\p{scx=Nko}\p{scx=Mongolian}\p{scx=Devanagari}\p{scx=Bengali}\p{scx=Gurmukhi}\p{scx=Gujarati}\p{scx=Oriya}\p{scx=Tamil}\p{scx=Telugu}\p{scx=Kannada}\p{scx=Malayalam}\p{scx=Sinhala}]$/u

/** HTML comments, including `<!-->`, `<!--->`, those closed by `--!>` and an unterminated one (to the end). */
const HTML_COMMENT = /<!--(?:-?>|[\s\S]*?--!?>|[\s\S]*$)/g
/** Link reference definitions pointing nowhere, the markdown "comment" idiom: `[//]: # (hidden)`, `[x]: <> "hidden"`. */
const MARKDOWN_COMMENT = /^ {0,3}\[[^\]\n]+\]:[ \t]*(?:#|<>)(?:[ \t].*)?$/gm
/**
 * Link reference definitions (`[note]: hidden-words "more hidden"`): they
 * render as nothing, also inside a block quote or list item. The title may
 * sit on the next line.
 */
const LINK_DEFINITION =
  /^(?<lead>[ \t>*+\-0-9.)]*)\[(?<label>(?:[^\]\\\n]|\\.){1,999})\]:(?<dest>[ \t]*(?:<[^<>\n]*>|[^\s<][^\s]*))(?:(?:[ \t]+|[ \t]*\n[ \t>]*)(?:"[^"]*"|'[^']*'|\([^()]*\)))?[ \t]*$/gm

const labelKey = (label: string) => label.trim().replace(/\s+/g, ' ').toLowerCase()

/**
 * Drop link reference definitions no link of the text uses (they show
 * nothing), and the title of those one uses (a tooltip nobody reads); the
 * destination of a used one stays, as the link shows it.
 */
function removeDefinitions(text: string): string {
  if (!text.includes(']:')) return text
  const uses = new Map<string, number>()
  // labels without brackets inside: each scan stops at the next bracket, so this stays linear
  for (const m of text.matchAll(/\[([^[\]\n]{1,999})\]/g)) {
    const key = labelKey(m[1])
    uses.set(key, (uses.get(key) ?? 0) + 1)
  }
  return text.replace(LINK_DEFINITION, (...args: unknown[]) => {
    const g = args[args.length - 1] as Record<string, string>
    // the definition itself is one use
    return (uses.get(labelKey(g.label)) ?? 0) > 1 ? `${g.lead}[${g.label}]:${g.dest}` : ''
  })
}
/**
 * Markup that renders as nothing: processing instructions `<?...?>`, CDATA
 * sections `<![CDATA[...]]>` and declarations `<!X...>`. Each is an opener
 * and the text that closes it.
 */
const INVISIBLE_SPANS: Array<{ open: string; close: string }> = [
  { open: '<\\?', close: '?>' },
  { open: '<!\\[CDATA\\[', close: ']]>' },
  { open: '<![A-Za-z]', close: '>' }
]

/**
 * Remove every span from `open` to `close`. An unclosed one is removed to the
 * end only where it starts a line (an HTML block that runs to the end of the
 * text); inline it shows as text. Linear: once an opener finds no closer, no
 * later one can.
 */
function removeSpans(text: string, open: string, close: string): string {
  const opener = new RegExp(open, 'g')
  let out = ''
  let from = 0
  for (let m = opener.exec(text); m !== null; m = opener.exec(text)) {
    const end = text.indexOf(close, m.index + m[0].length)
    if (end < 0) {
      const block = new RegExp(`^[ \\t]*${open}`, 'gm')
      block.lastIndex = text.lastIndexOf('\n', m.index - 1) + 1
      const b = block.exec(text)
      if (b) return out + text.slice(from, b.index)
      break
    }
    out += text.slice(from, m.index)
    from = end + close.length
    opener.lastIndex = from
  }
  return out + text.slice(from)
}

/** A line end followed by 3 or more blank lines. */
const BLANK_RUN = /(\r?\n)(?:[ \t]*\r?\n){3,}/g

function codePointBefore(text: string, index: number): number | undefined {
  if (index <= 0) return undefined
  const low = text.charCodeAt(index - 1)
  if (low >= 0xdc00 && low <= 0xdfff && index >= 2) {
    const high = text.charCodeAt(index - 2)
    if (high >= 0xd800 && high <= 0xdbff) return text.codePointAt(index - 2)
  }
  return low
}

function is(re: RegExp, cp: number | undefined): boolean {
  return cp !== undefined && re.test(String.fromCodePoint(cp))
}

/**
 * Keeps what emoji and some scripts need: a zero-width joiner between two
 * pictographs (👩‍💻), ZWNJ/ZWJ between two letters of a script whose spelling
 * uses them (Persian می‌خواهم), and a single text/emoji presentation selector
 * (U+FE0E/U+FE0F) right after a visible character. Everything else invisible
 * goes, including joiners inside Latin words and runs of variation selectors
 * (which can smuggle bytes after an emoji).
 */
function removeInvisible(text: string): string {
  return text.replace(INVISIBLE, (ch: string, offset: number, whole: string) => {
    const before = codePointBefore(whole, offset)
    const after = whole.codePointAt(offset + ch.length)
    if (ch === '\u200c' || ch === '\u200d') {
      if (is(JOINING_SCRIPT, before) && is(JOINING_SCRIPT, after)) return ch
      if (ch === '\u200d' && is(PICTOGRAPH, before) && is(EXT_PICTOGRAPH, after)) return ch
      return ''
    }
    if (ch === '\ufe0f' || ch === '\ufe0e') {
      return before !== undefined && !is(DEFAULT_IGNORABLE, before) && !/\s/.test(String.fromCodePoint(before)) ? ch : ''
    }
    return ''
  })
}

interface MdNode {
  type: string
  children?: MdNode[]
  value?: string
  label?: string | null
  identifier?: string
  url?: string
  title?: string | null
  position?: { start: { offset?: number }; end: { offset?: number } }
}

/** A tag's attributes render as nothing: `<div title="hidden">` keeps only `<div>`. */
const TAG_WITH_ATTRIBUTES = /<(\/?[A-Za-z][A-Za-z0-9-]*)(?:\s+[^\s"'>/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+))?)*\s*(\/?)>/g

/**
 * The text the parser reads, with the `<` of every opener left unclosed (`<?`,
 * `<!x`; `removeSpans` took out every closed one) swapped for a character the
 * text lacks: each such opener made the parser scan to the end, quadratic in
 * their number. The swap keeps offsets; `restore` undoes it in parser values.
 */
function withoutUnclosedOpeners(text: string): { parsed: string; restore: (s: string) => string } {
  if (!/<[?!]/.test(text)) return { parsed: text, restore: s => s }
  let code = 0xe000
  while (code < 0xf8ff && text.includes(String.fromCharCode(code))) code++
  const stand = String.fromCharCode(code)
  return { parsed: text.replace(/<(?=[?!])/g, stand), restore: s => s.split(stand).join('<') }
}

/**
 * What GitHub's renderer shows nothing of, judged by a CommonMark (GFM) parser
 * rather than by patterns: link reference definitions no link uses (however
 * their parts are spread over lines), the attributes of raw HTML, links with
 * no text (a title then shows nothing), and the titles of other links.
 */
function removeUnrendered(text: string): string {
  if (!/[\]<]/.test(text)) return text
  const { parsed, restore } = withoutUnclosedOpeners(text)
  let tree: MdNode
  try {
    tree = fromMarkdown(parsed, { extensions: [gfm()], mdastExtensions: [gfmFromMarkdown()] }) as MdNode
  } catch {
    return text
  }
  const used = new Set<string>()
  const edits: Array<{ start: number; end: number; text: string }> = []
  const span = (n: MdNode) => ({ start: n.position?.start.offset, end: n.position?.end.offset })
  const visit = (n: MdNode, f: (n: MdNode) => boolean | void): void => {
    if (f(n) === false) return
    for (const c of n.children ?? []) visit(c, f)
  }
  visit(tree, n => {
    if ((n.type === 'linkReference' || n.type === 'imageReference') && n.identifier) used.add(n.identifier)
  })
  visit(tree, n => {
    const { start, end } = span(n)
    if (start === undefined || end === undefined) return
    if (n.type === 'definition') {
      edits.push({ start, end, text: used.has(n.identifier ?? '') ? restore(`[${n.label ?? ''}]: ${n.url ?? ''}`) : '' })
      return false
    }
    if (n.type === 'html') {
      const value = text.slice(start, end)
      const bare = value.replace(TAG_WITH_ATTRIBUTES, '<$1$2>')
      if (bare !== value) edits.push({ start, end, text: bare })
      return false
    }
    if (n.type === 'link') {
      const kids = n.children ?? []
      const shown = kids.map(k => text.slice(k.position?.start.offset ?? 0, k.position?.end.offset ?? 0)).join('')
      if (!shown.trim()) {
        edits.push({ start, end, text: '' })
        return false
      }
      if (n.title) {
        const first = kids[0].position?.start.offset
        const last = kids[kids.length - 1].position?.end.offset
        if (first !== undefined && last !== undefined) {
          edits.push({ start, end, text: `[${text.slice(first, last)}](${n.url ?? ''})` })
          return false
        }
      }
    }
  })
  if (edits.length === 0) return text
  edits.sort((a, b) => b.start - a.start)
  let out = text
  let limit = Infinity
  for (const e of edits) {
    if (e.end > limit) continue
    out = out.slice(0, e.start) + e.text + out.slice(e.end)
    limit = e.start
  }
  return out
}

/**
 * Strip hidden markdown from untrusted text: HTML comments (`<!-- ... -->`, also
 * unterminated at the end), `[//]: # (...)` comments and every other link
 * reference definition, processing instructions (`<?...?>`), declarations
 * (`<!X...>`), CDATA sections, zero-width characters,
 * bidi controls, Unicode tag characters and other invisible format characters;
 * collapse runs of more than 2 blank lines. Visible text is kept unchanged
 * (HTML comments inside code blocks are removed too). Idempotent.
 */
export function stripHidden(text: string): string {
  let out = typeof text === 'string' ? text : String(text ?? '')
  // Removing one thing can make another (`<!<!-- -->-- x -->`): repeat until stable.
  for (let i = 0; i < 10; i++) {
    let next = removeInvisible(out).replace(HTML_COMMENT, '')
    for (const span of INVISIBLE_SPANS) next = removeSpans(next, span.open, span.close)
    next = removeUnrendered(removeDefinitions(next.replace(MARKDOWN_COMMENT, '')))
    if (next === out) break
    out = next
  }
  return out.replace(BLANK_RUN, '$1$1$1')
}

/** `@` written as an HTML character reference (`&#64;`, `&#x40;`, `&commat;`), which renders as an `@` outside code. */
const AT_REFERENCE = /&(?:#0*64|#[xX]0*40|commat);?(?=[A-Za-z0-9])/g

/**
 * Make text safe to show inside GitHub markdown as data: a U+200B goes after
 * every `@` that could start a mention (`@octocat`, `@org/team`, also with
 * markup or a character reference before the name), so nobody is pinged; an `@` written as a character reference (`&#64;octocat`) becomes
 * such an `@` too. An `@` right after a letter or digit (a@b.com) is left
 * alone, as GitHub does not read it as a mention.
 */
export function neutraliseMentions(text: string): string {
  // Not only `@name`: `@&#117;ser` renders as `@user`, and markup between `@` and a
  // name (`@*user*`, `@<b>user`) may be taken away by a renderer, so every `@`
  // that does not follow a letter or digit gets its U+200B before a name, a
  // character reference or markup.
  return text.replace(AT_REFERENCE, '@').replace(/(?<![A-Za-z0-9])@(?=[A-Za-z0-9&*_~<![\\`])/g, '@\u200b')
}

/** A fence of backticks longer than any run of backticks inside text (at least 3), so the text can never close its code block. */
export function fenceFor(text: string): string {
  let longest = 0
  for (const run of text.match(/`+/g) ?? []) longest = Math.max(longest, run.length)
  return '`'.repeat(Math.max(3, longest + 1))
}

/** Tags that make GitHub fetch a URL (or that wrap such tags). */
const MEDIA_TAG_NAMES = 'img|image|picture|source|video|audio|track|embed|object|iframe|input|svg'
const MEDIA_TAG = new RegExp(`<\\/?(?:${MEDIA_TAG_NAMES})\\b(?:[^>"']|"[^"]*"|'[^']*')*>?`, 'gi')
const MEDIA_TAG_START = new RegExp(`<(?=\\/?(?:${MEDIA_TAG_NAMES})\\b)`, 'gi')

/**
 * `![alt](url "title")`: the alt text allows one level of nested brackets and
 * escapes; the destination is `<...>` or has balanced parentheses. Alternatives
 * start with distinct characters and whitespace runs are taken atomically
 * (`(?=(?<w>\s*))\k<w>`), a run of backslashes is only tried from its
 * start (`(?<!\\)`) and the alt text is bounded, so matching stays linear (a
 * longer alt is no match here, and escapeImageBangs makes it a link).
 */
const INLINE_IMAGE = new RegExp(
  [
    String.raw`(?<!\\)(?<slashes>\\*)!\[(?<alt>(?:[^[\]\\]|\\[\s\S]|\[(?:[^[\]\\]|\\[\s\S]){0,500}\]){0,1000})\]`,
    String.raw`\((?=(?<w1>\s*))\k<w1>`,
    String.raw`(?:<(?<angled>[^<>\n]*)>|(?<bare>(?:[^\s()\\]|\\[\s\S]|\((?:[^\s()\\]|\\[\s\S])*\))*))`,
    String.raw`(?=(?<w2>\s*))\k<w2>(?:(?:"[^"]*"|'[^']*'|\([^()]*\))(?=(?<w3>\s*))\k<w3>)?\)`
  ].join(''),
  'g'
)

/**
 * Escape (`\!`) every unescaped `!` before `[` that could start an image: when
 * a `](` or `][` follows in the same paragraph (inline, full and collapsed
 * references), or, when the text has any `]:` (a possible reference
 * definition), every one (shortcut references). `vec![1, 2]` in prose without
 * links is left alone.
 */
function escapeImageBangs(text: string): string {
  const anyDefinition = text.includes(']:')
  return text
    .split(/(\n[ \t\r]*\n)/)
    .map(block => {
      const last = Math.max(block.lastIndexOf(']('), block.lastIndexOf(']['))
      return block.replace(/(?<!\\)(\\*)!(?=\[)/g, (match: string, slashes: string, offset: number) => {
        if (slashes.length % 2 === 1) return match
        return anyDefinition || offset < last ? `${slashes}\\!` : match
      })
    })
    .join('')
}

/**
 * Remove image embeds from model-written markdown so a crafted reply cannot
 * make GitHub fetch an attacker's URL: `![alt](url)` becomes `alt (url)`
 * (empty alt: `(url)`), `<img>` (and `<picture>`, `<source>`, `<video>`...)
 * tags are removed, and any other image syntax (reference-style
 * `![alt][ref]`, `![alt]`) gets its `!` escaped so it renders as a link.
 * Applies inside code blocks too (safe over pretty).
 */
export function stripImages(markdown: string): string {
  let out = markdown.replace(MEDIA_TAG, '')
  out = out.replace(INLINE_IMAGE, (...args: unknown[]) => {
    const g = args[args.length - 1] as Record<string, string | undefined>
    const slashes = g.slashes ?? ''
    // `\![a](u)` is a link; a nested image in it is caught by escapeImageBangs.
    if (slashes.length % 2 === 1) return args[0] as string
    const url = (g.angled ?? g.bare ?? '').trim()
    const label = (g.alt ?? '').trim()
    if (!url) return slashes + label
    return slashes + (label ? `${label} (${url})` : `(${url})`)
  })
  out = escapeImageBangs(out)
  // Removal and rewriting can join pieces into a new tag: escape what is left.
  return out.replace(MEDIA_TAG_START, '&lt;')
}

/**
 * Characters .NET's char.IsWhiteSpace accepts (the runner trims them before
 * looking for `::`) other than line ends: JavaScript's \s lacks U+0085.
 */
const LOG_SPACE = '[^\\S\\r\\n]|\\u0085'

/**
 * Make text safe to print to the job log with core.info: the runner reads a
 * line that starts with `::` (after any char.IsWhiteSpace, U+0085 and U+3000
 * included) as a workflow command (`::set-output`, `::add-mask`,
 * `::stop-commands`, `::error`...), and its legacy parser finds `##[` anywhere
 * in a line (`##[set-output name=x]v`). It splits lines at `\n`, `\r\n` and a
 * lone `\r`. A U+200B goes between the two colons at every such line start
 * and between `##` and `[`, so agent-controlled text (commands, model text)
 * cannot set outputs, mask or unmask, or stop command processing.
 * core.warning and core.error escape their message already; core.info does not.
 */
export function defuseWorkflowCommands(text: string): string {
  return text.replace(new RegExp(`(^|[\\r\\n])((?:${LOG_SPACE})*):(?=:)`, 'g'), '$1$2:\u200b').replace(/##\[/g, '##\u200b[')
}
