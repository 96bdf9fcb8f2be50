// One definition of a git credential (issue 37), for the action's scanner (what it teaches the redactor) and for
// the agent's copy (what of a nested repository's config the agent gets): a value or section name that holds one,
// and the allowlist of keys known to be harmless. The copy keeps only those keys, and none whose value or section
// name holds a credential; every other key goes (gitlab.token, sendemail.smtppass, npm.token, credential.*,
// http.*.extraheader, include, includeIf, core.fsmonitor, core.sshCommand, remote.*.uploadpack, url.*.insteadOf...).
import path from 'node:path'
import { credentialsIn } from '../report/redact'
import { looksLikeCredential } from './env'
import { ConfigSyntaxError, parseConfig, quoteValue, utf8, type ConfigEntry } from './gitconfig'

/** `scheme://user[:password]@`: a URL carrying credentials. */
export const URL_USERINFO = /([a-z][a-z0-9+.-]*:\/\/)([^\s/@]+)@/gi
/** (Not through URL_USERINFO.test: that moves its lastIndex, where matchAll would then start.) */
const HAS_USERINFO = new RegExp(URL_USERINFO.source, 'i')
export const hasUserinfo = (text: string): boolean => HAS_USERINFO.test(text)

/** A config value that is (or holds) a credential: a token's shape, an auth header's, a random-looking run. */
export const credentialValue = (value: string): boolean => looksLikeCredential(value) || credentialsIn(value).length > 0
/** A section name that holds one (`[url "https://TOKEN@github.com/"]`): the whole section is a credential's. */
export const credentialSection = (sub: string | undefined): boolean => sub !== undefined && (hasUserinfo(sub) || looksLikeCredential(sub))

/**
 * The keys kept, by section: settings git needs to read the repository, which run no program and read no other
 * file. core, extensions and user have no subsection; the others one (a remote's, a branch's, a submodule's name).
 */
const KEEP: Record<string, string[]> = {
  core: ['repositoryformatversion', 'filemode', 'bare', 'logallrefupdates', 'ignorecase', 'precomposeunicode', 'symlinks'].concat([
    'autocrlf',
    'eol',
    'safecrlf',
    'quotepath',
    'checkstat',
    'trustctime',
    'sparsecheckout',
    'sparsecheckoutcone'
  ]),
  extensions: ['objectformat', 'worktreeconfig', 'refstorage', 'partialclone', 'preciousobjects'],
  remote: ['url', 'pushurl', 'fetch', 'push', 'tagopt', 'mirror', 'prune', 'promisor', 'partialclonefilter'],
  branch: ['remote', 'merge', 'rebase', 'pushremote'],
  submodule: ['url', 'path', 'active', 'branch', 'shallow'],
  user: ['name', 'email']
}
const NO_SUBSECTION = new Set(['core', 'extensions', 'user'])

/** Whether the copy keeps an entry (its value then without a URL's user and password). */
function kept(e: ConfigEntry): boolean {
  if (!(KEEP[e.section] ?? []).includes(e.name) || (e.subsection === undefined) !== NO_SUBSECTION.has(e.section)) return false
  const value = (e.value ?? '').replace(URL_USERINFO, '$1')
  // `submodule.<name>.url = !command`: a program git would run
  return !credentialSection(e.subsection) && !credentialValue(value) && !(e.section === 'submodule' && value.startsWith('!'))
}

/**
 * A git config (or a file found holding credentials) as the agent's copy gets it: only the kept keys, as git
 * reads them (keys on a section's line, continued values, old-style headers), URLs without user and password,
 * includes not followed. A file git cannot read (a credential store, a broken config), or none, is empty.
 */
export function keptConfig(bytes: Buffer | undefined): string {
  let entries: ConfigEntry[]
  try {
    entries = bytes ? parseConfig(bytes).entries.filter(kept) : []
  } catch (e) {
    if (!(e instanceof ConfigSyntaxError)) throw e
    return ''
  }
  let text = ''
  let header = ''
  for (const e of entries) {
    const sub = e.subsection === undefined ? '' : ` "${e.subsection.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`
    if (`[${e.section}${sub}]` !== header) text += `${(header = `[${e.section}${sub}]`)}\n`
    text += e.value === undefined ? `\t${e.name}\n` : `\t${e.name} = ${utf8(quoteValue(e.value.replace(URL_USERINFO, '$1')))}\n`
  }
  return text
}

/**
 * The file a `credential.helper = store --file=<path>` (or `--file <path>`; any helper given a file) keeps its
 * credentials in, resolved as git runs the helper: from the repository's top (the folder holding `.git`), else
 * from the git directory.
 */
export function storeFileOf(helper: string, configFile: string): string | undefined {
  const words = helper.trim().match(/(?:[^\s"']+|"[^"]*"|'[^']*')+/g) ?? []
  const at = words.findIndex(w => w === '--file' || w.startsWith('--file='))
  if (at < 0) return undefined
  const file = (words[at] === '--file' ? (words[at + 1] ?? '') : words[at].slice('--file='.length)).replace(/["']/g, '')
  if (!file || file.startsWith('~')) return undefined // the agent's own home: not in the workspace
  const dir = path.dirname(configFile)
  return path.resolve(path.basename(dir) === '.git' ? path.dirname(dir) : dir, file)
}
