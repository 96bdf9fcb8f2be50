// Git configs in the agent's copy without credentials, read the way git reads
// them: by git itself. Runs as root in the command server while the copy is
// still root's alone.
import fs from 'node:fs'
import type { ServerConfig } from './protocol'
import { quietEnv, run } from './exec'

/**
 * A git config (or a file one includes, or a credential store) in the copy without credentials. git lists
 * it (`git config --file F --no-includes --list -z`, no system or global config): a key on a section's line,
 * a continued value, an include are seen as git sees them. When it holds one, the file is written again from
 * what git read, without: http.*.extraheader, include and includeIf, credential helpers, sections named by a
 * URL with a user or password, values shaped like a token or an Authorization header; URLs lose their user
 * and password. A file git cannot read is emptied; a symlink in its place is removed, never followed.
 */
export async function cleanConfig(cfg: ServerConfig, file: string): Promise<void> {
  const st = fs.lstatSync(file)
  if (st.isSymbolicLink()) return fs.unlinkSync(file)
  if (!st.isFile()) return
  const listed = await run(cfg.bins.git, ['config', '--file', file, '--no-includes', '--list', '-z'], { env: quietEnv })
  const USERINFO = /([a-z][a-z0-9+.-]*:\/\/)[^\s/@]+@/gi
  const userinfo = (s: string) => new RegExp(USERINFO.source, 'i').test(s)
  const TOKEN =
    /gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}|sk-ant-[\w-]{20,}|^\s*(authorization|proxy-authorization)\s*:|^\s*(basic|bearer|token)\s+\S{12,}/i
  const entries = (listed.code === 0 ? listed.stdout.toString('utf8').split('\0') : []).filter(Boolean).map(e => {
    const nl = e.indexOf('\n')
    const key = nl < 0 ? e : e.slice(0, nl)
    const [first, last] = [key.indexOf('.'), key.lastIndexOf('.')]
    return {
      section: key.slice(0, first),
      sub: first === last ? undefined : key.slice(first + 1, last),
      name: key.slice(last + 1),
      value: nl < 0 ? undefined : e.slice(nl + 1)
    }
  })
  const credential = (e: (typeof entries)[number]) =>
    (e.section === 'http' && e.name === 'extraheader') ||
    e.section === 'include' ||
    e.section === 'includeif' ||
    (e.section === 'credential' && e.name === 'helper') ||
    userinfo(e.sub ?? '') ||
    TOKEN.test(e.sub ?? '') ||
    TOKEN.test((e.value ?? '').replace(USERINFO, '$1')) // a URL's user and password go, the URL stays
  const clean = listed.code === 0 && !entries.some(e => credential(e) || userinfo(e.value ?? ''))
  if (clean) return
  const quote = (s: string) =>
    `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n').replace(/\t/g, '\\t').split('\b').join('\\b')}"`
  let text = ''
  let header = ''
  for (const e of entries.filter(x => !credential(x))) {
    const h = e.sub === undefined ? `[${e.section}]` : `[${e.section} "${e.sub.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"]`
    if (h !== header) text += `${(header = h)}\n`
    text += e.value === undefined ? `\t${e.name}\n` : `\t${e.name} = ${quote(e.value.replace(USERINFO, '$1'))}\n`
  }
  const fd = fs.openSync(file, fs.constants.O_RDWR | fs.constants.O_NOFOLLOW)
  try {
    fs.ftruncateSync(fd, 0)
    fs.writeSync(fd, text, 0)
  } finally {
    fs.closeSync(fd)
  }
}
