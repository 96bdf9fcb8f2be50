// What counts as a git credential in one file's bytes: the cuts that take it out, and its secret values for the redactor.
//
// What counts as a credential (the entry is taken out, its secret values
// taught to the redactor):
//   - every http.*.extraheader (actions/checkout's `AUTHORIZATION: basic ...`);
//   - include.path / includeIf.*.path pointing at a credentials file (checkout
//     v6's git-credentials-<uuid>.config, or any file that itself holds
//     credentials), which is taken care of the same way;
//   - credential.helper entries (a helper would hand stored credentials to
//     the agent's git without it reading them);
//   - a section whose name holds a URL with a user or password
//     (`[url "https://TOKEN@github.com/"]`, `[http "https://u:p@host/"]`):
//     the whole section;
//   - a value holding a URL with a user or password (remote.*.url set to
//     `https://x-access-token:TOKEN@github.com/o/r`): the value stays, the
//     `user:password@` goes;
//   - any other value that looks like a credential (looksLikeCredential);
//   - in a credential store (~/.git-credentials), every line holding one.
import os from 'node:os'
import path from 'node:path'
import { credentialsIn } from '../report/redact'
import { credentialParts, looksLikeCredential } from './env'
import { ConfigSyntaxError, parseConfig, quoteValue, utf8, type ConfigEntry } from './gitconfig'
import { credentialSection, credentialValue, hasUserinfo, storeFileOf, URL_USERINFO } from './gitconfig-keep'

export const CHECKOUT_CREDENTIALS_FILE = /(?:^|[\\/])git-credentials-[^\\/]*\.config$/i
const PLACEHOLDER_PASSWORD = /^(?:password|passw0rd|changeme|example|postgres|secret)$/i

interface Cut {
  start: number
  end: number
  /** text put in place of [start, end) */
  put: string
}

interface FileFindings {
  /** secret values found, for the redactor */
  secrets: string[]
  /** what to change in the file */
  cuts: Cut[]
  /** included files to look at (credential files), resolved */
  includes: string[]
  /** the files credential helpers keep credentials in (`store --file=<path>`), resolved */
  stores: string[]
  /** what was found, for the log */
  what: string[]
}

/** Teachable parts of a URL's `user[:password]`: the password, and the user when it looks like a key. */
function userinfoSecrets(userinfo: string): string[] {
  const out: string[] = []
  const colon = userinfo.indexOf(':')
  const user = colon < 0 ? userinfo : userinfo.slice(0, colon)
  const password = colon < 0 ? undefined : userinfo.slice(colon + 1)
  const add = (s: string) => {
    out.push(s)
    try {
      const d = decodeURIComponent(s)
      if (d !== s) out.push(d)
    } catch {
      // not percent-encoded
    }
  }
  // placeholder passwords of local services (`postgres://postgres:postgres@localhost`) are no secret: redacting them would wreck output
  const real = password !== undefined && password.length > 0 && password !== user && !PLACEHOLDER_PASSWORD.test(password)
  if (real) add(password)
  // a user name that is a token (`https://ghp_...@github.com`, a Sentry key), but not `git` or `octocat`
  if (password === undefined ? user.length >= 16 || looksLikeCredential(user) : looksLikeCredential(user)) add(user)
  if (real) add(userinfo)
  return out
}

/** The teachable parts of every URL with a `user[:password]@` in `text`. */
function urlSecrets(text: string): string[] {
  return [...text.matchAll(URL_USERINFO)].flatMap(m => userinfoSecrets(m[2]))
}

/** Where an include path points, as git resolves it (relative to the including file; `~/` is the home folder). */
function includeTarget(value: string, configFile: string): string {
  if (value.startsWith('~/')) return path.join(os.homedir(), value.slice(2))
  return path.resolve(path.dirname(configFile), value)
}

function secretsOfValue(e: ConfigEntry): string[] {
  const out: string[] = []
  const value = e.value ?? ''
  out.push(value)
  if (e.raw && e.raw.trim() !== value) out.push(utf8(e.raw.trim()))
  out.push(...credentialsIn(value), ...credentialParts(value))
  // `Header: credential` of any other scheme
  const colon = value.indexOf(':')
  if (colon > 0) out.push(value.slice(colon + 1).trim())
  out.push(...urlSecrets(value))
  return out
}

/**
 * The cuts and secrets of one config file's bytes. `hasCredentials(file)` says
 * whether an included file holds some. A file git cannot read is searched line
 * by line only when `lineByLine` (a file in the workspace): an include or
 * gitfile may point at any file of the system, which is then left alone.
 */
export function findInConfig(bytes: Buffer, file: string, hasCredentials: (target: string) => boolean, lineByLine: boolean): FileFindings {
  const f: FileFindings = { secrets: [], cuts: [], includes: [], stores: [], what: [] }
  let parsed
  try {
    parsed = parseConfig(bytes)
  } catch (e) {
    if (!(e instanceof ConfigSyntaxError)) throw e
    return lineByLine ? findInBrokenFile(bytes, `not a valid git config (${e.message})`) : f
  }
  const { entries, sections } = parsed
  const text = bytes.toString('latin1')
  const dropSection = dropSections(sections, text, f)
  for (const e of entries) {
    if (dropSection.has(e.sectionIndex)) {
      f.secrets.push(...secretsOfValue(e).filter(s => looksLikeCredential(s) || credentialsIn(s).length > 0 || e.name === 'extraheader'))
      continue
    }
    findInEntry(e, text, file, hasCredentials, f)
  }
  return f
}

/** Sections named by a URL with credentials go whole: header, entries and comments up to the next header. */
function dropSections(sections: ReturnType<typeof parseConfig>['sections'], text: string, f: FileFindings): Set<number> {
  const dropSection = new Set<number>()
  sections.forEach((s, index) => {
    if (s.subsection === undefined || !credentialSection(s.subsection)) return
    dropSection.add(index)
    f.secrets.push(...urlSecrets(s.subsection))
    if (!hasUserinfo(s.subsection)) f.secrets.push(s.subsection)
    const nextHeader = sections[index + 1]
    f.cuts.push({ start: s.lineStart, end: nextHeader ? nextHeader.lineStart : text.length, put: '' })
    f.what.push(`the section [${s.section} "…"]`)
  })
  return dropSection
}

/** The cut (and secrets) of one entry outside a dropped section, if it holds a credential. */
function findInEntry(e: ConfigEntry, text: string, file: string, hasCredentials: (target: string) => boolean, f: FileFindings): void {
  const value = e.value ?? ''
  // the whole lines of an entry, or from its key when it shares a line with its header
  const start = /^[ \t]*$/.test(text.slice(e.lineStart, e.start)) ? e.lineStart : e.start
  const end = e.end
  const cut = (what: string, put = '') => {
    f.cuts.push({ start, end, put })
    f.what.push(what)
  }
  if (e.section === 'http' && e.name === 'extraheader') {
    f.secrets.push(...secretsOfValue(e))
    cut(e.key)
  } else if ((e.section === 'include' || e.section === 'includeif') && e.name === 'path' && value) {
    const target = includeTarget(value, file)
    if (CHECKOUT_CREDENTIALS_FILE.test(value) || hasCredentials(target)) {
      f.includes.push(target)
      cut(`${e.key} (a credentials file)`)
    }
  } else if (e.section === 'credential' && e.name === 'helper') {
    f.secrets.push(...secretsOfValue(e).filter(s => looksLikeCredential(s)))
    const store = storeFileOf(value, file)
    if (store) f.stores.push(store)
    cut(e.key)
  } else if (hasUserinfo(value)) {
    f.secrets.push(...urlSecrets(value))
    const clean = value.replace(URL_USERINFO, '$1')
    const indent = start === e.lineStart ? (/^[ \t]*/.exec(text.slice(e.lineStart))?.[0] ?? '\t') : ''
    const newline = text.slice(start, end).endsWith('\n') ? '\n' : ''
    cut(`the user and password in ${e.key}`, `${indent}${e.name} = ${quoteValue(clean)}${newline}`)
  } else if (credentialValue(value)) {
    f.secrets.push(...secretsOfValue(e))
    cut(e.key)
  }
}

/** A file git cannot read (or a credential store): every line holding a credential goes. */
export function findInBrokenFile(bytes: Buffer, why: string): FileFindings {
  const f: FileFindings = { secrets: [], cuts: [], includes: [], stores: [], what: [] }
  const text = bytes.toString('latin1')
  let at = 0
  for (const line of text.split(/(?<=\n)/)) {
    const value = utf8(line)
    if (/extraheader|authorization:/i.test(value) || hasUserinfo(value) || looksLikeCredential(value)) {
      f.cuts.push({ start: at, end: at + line.length, put: '' })
      f.secrets.push(value.trim(), ...credentialsIn(value))
      f.secrets.push(...urlSecrets(value))
      const eq = value.indexOf('=')
      if (eq > 0) f.secrets.push(value.slice(eq + 1).trim())
    }
    at += line.length
  }
  if (f.cuts.length > 0) f.what.push(`${f.cuts.length} line${f.cuts.length === 1 ? '' : 's'} holding credentials (${why})`)
  return f
}

export function applyCuts(bytes: Buffer, cuts: Cut[]): Buffer {
  const text = bytes.toString('latin1')
  const sorted = [...cuts].sort((a, b) => a.start - b.start)
  let out = ''
  let at = 0
  for (const c of sorted) {
    if (c.start < at) continue // inside a section already cut
    out += text.slice(at, c.start) + c.put
    at = c.end
  }
  out += text.slice(at)
  return Buffer.from(out, 'latin1')
}
