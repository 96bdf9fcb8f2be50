// Git configs in the agent's copy: only what is known to be harmless is kept.
// Runs as root in the command server while the copy is still root's alone.
import fs from 'node:fs'
import type { ServerConfig } from './protocol'
import { quietEnv, run } from './exec'

/**
 * The keys kept, by section (subsection-less name, or `*` for any subsection): settings git needs to read the
 * repository and that run no program and read no other file. Everything else goes (an allowlist: gitlab.token,
 * sendemail.smtppass, npm.token, credential.*, http.*.extraheader, include, includeIf, core.fsmonitor,
 * core.sshCommand, remote.*.uploadpack, submodule.*.update=!cmd, url.*.insteadOf, ...).
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
/** A URL's user and password: taken out of a kept value. */
const USERINFO = /([a-z][a-z0-9+.-]*:\/\/)[^\s/@]+@/gi
/** What a credential looks like where it might still hide (a query string): such a value goes whole. */
const TOKEN =
  /gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}|glpat-[\w-]{20,}|npm_[A-Za-z0-9]{36}|sk-ant-[\w-]{20,}|[?&](access_)?token=|private_token=/i

/**
 * A git config (or a file found holding credentials) in the copy, rewritten with only the KEEP keys, as git
 * read them (`git config --file F --no-includes --list -z`: a key on a section's line, a continued value, an
 * include are seen as git sees them); URLs lose their user and password. A file git cannot read (a credential
 * store) is emptied; a symlink in its place is removed, never followed.
 */
export async function cleanConfig(cfg: ServerConfig, file: string): Promise<void> {
  const st = fs.lstatSync(file)
  if (st.isSymbolicLink()) return fs.unlinkSync(file)
  if (!st.isFile()) return
  const listed = await run(cfg.bins.git, ['config', '--file', file, '--no-includes', '--list', '-z'], { env: quietEnv })
  const all = (listed.code === 0 ? listed.stdout.toString('utf8').split('\0') : []).filter(Boolean).map(e => {
    const nl = e.indexOf('\n')
    const key = nl < 0 ? e : e.slice(0, nl)
    const [first, last] = [key.indexOf('.'), key.lastIndexOf('.')]
    const value = nl < 0 ? undefined : e.slice(nl + 1)
    return {
      section: key.slice(0, first),
      sub: first === last ? undefined : key.slice(first + 1, last),
      name: key.slice(last + 1),
      value: value?.replace(USERINFO, '$1')
    }
  })
  const kept = all.filter(
    e =>
      (KEEP[e.section] ?? []).includes(e.name) &&
      (e.sub === undefined) === (e.section === 'core' || e.section === 'extensions' || e.section === 'user') &&
      !TOKEN.test(e.sub ?? '') &&
      !new RegExp(USERINFO.source, 'i').test(e.sub ?? '') &&
      !TOKEN.test(e.value ?? '') &&
      !(e.section === 'submodule' && e.name === 'url' && /^!/.test(e.value ?? ''))
  )
  const quote = (s: string) =>
    `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n').replace(/\t/g, '\\t').split('\b').join('\\b')}"`
  let text = ''
  let header = ''
  for (const e of kept) {
    const h = e.sub === undefined ? `[${e.section}]` : `[${e.section} "${e.sub.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"]`
    if (h !== header) text += `${(header = h)}\n`
    text += e.value === undefined ? `\t${e.name}\n` : `\t${e.name} = ${quote(e.value)}\n`
  }
  const fd = fs.openSync(file, fs.constants.O_RDWR | fs.constants.O_NOFOLLOW)
  try {
    fs.ftruncateSync(fd, 0)
    fs.writeSync(fd, text, 0)
  } finally {
    fs.closeSync(fd)
  }
}
