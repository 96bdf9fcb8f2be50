// Nested checkouts' credentials in the forms git accepts but a line-by-line reader misses, through the built
// action (dist/, sandbox: user) in both privilege kinds: a key on the `[http "…"]` line itself, a value
// continued with a trailing `\`, an include.path to another file of the workspace; and (issue 37) keys no
// denylist knows (gitlab.token, sendemail.smtppass, npm.token) in a config, a config.worktree and a bare
// repository's, the store a credential.helper names and a `.git-credentials`. None reaches the agent's copy
// (overlay or copied files) in any encoding (not even redacted: absent); the stores are named as not given;
// the workspace's files stay byte for byte.
import { afterAll, describe, expect, test } from '@jest/globals'
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { text, type Reply } from './helpers/fake-anthropic'
import { cleanupRuns } from './helpers/run-action'
import { agent } from './helpers/agent-run'
import { sandboxKinds, type Kind } from './helpers/kinds'
import { gitEnv } from './helpers/git'

const KINDS = sandboxKinds()
if (!KINDS.length) test.skip('the user sandbox needs root or passwordless sudo on Linux', () => undefined)

const made: string[] = []
afterAll(() => {
  cleanupRuns()
  for (const d of made) rmSync(d, { recursive: true, force: true })
})

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'
const alnum = (n: number) => Array.from(randomBytes(n), b => ALNUM[b % ALNUM.length]).join('')
const b64 = (s: string) => Buffer.from(s).toString('base64')

/** Forms a command could print a secret in: as is, base64 (whole and its stable cores), base64url, hex. */
function formsOf(secret: string): string[] {
  const bytes = Buffer.from(secret)
  const out = new Set([secret, bytes.toString('base64'), bytes.toString('base64url'), bytes.toString('hex')])
  for (let k = 0; k < 3; k++) {
    const enc = Buffer.concat([Buffer.alloc(k), bytes]).toString('base64')
    out.add(enc.slice(k > 0 ? 4 : 0, (k + bytes.length) % 3 !== 0 ? enc.length - 4 : enc.length))
  }
  return [...out].filter(f => f.length >= 8)
}

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, env: gitEnv('t', 't@e') }).toString()

function repo(dir: string): void {
  mkdirSync(dir, { recursive: true })
  git(dir, 'init', '-q', '-b', 'main')
  writeFileSync(path.join(dir, 'f.txt'), 'f\n')
  git(dir, 'add', '-A')
  git(dir, 'commit', '-qm', 'f')
}

/** A workspace whose nested checkouts hold credentials in the three forms (tokens of no known shape). */
function workspace(kind: Kind, name: string) {
  const base = mkdtempSync(path.join(os.tmpdir(), 'forms-'))
  made.push(base)
  const ws = path.join(base, name)
  repo(ws)
  const secrets: Record<string, string> = { onHeader: `Qz${alnum(30)}`, continued: `Wy${alnum(30)}`, included: `Vx${alnum(30)}` }
  const header = (s: string) => `AUTHORIZATION: basic ${b64(`x-access-token:${s}`)}`
  repo(path.join(ws, 'deps', 'a'))
  writeFileSync(
    path.join(ws, 'deps', 'a', '.git', 'config'),
    `[core]\n\trepositoryformatversion = 0\n[http "https://github.com/"] extraheader = ${header(secrets.onHeader)}\n`
  )
  repo(path.join(ws, 'deps', 'b'))
  const h = header(secrets.continued)
  const cut = h.indexOf('basic ') + 12
  writeFileSync(
    path.join(ws, 'deps', 'b', '.git', 'config'),
    `[core]\n\trepositoryformatversion = 0\n[http "https://github.com/"]\n\textraheader = ${h.slice(0, cut)}\\\n${h.slice(cut)}\n`
  )
  repo(path.join(ws, 'deps', 'c'))
  writeFileSync(path.join(ws, 'deps', 'c', 'creds.config'), `[http "https://github.com/"]\n\textraheader = ${header(secrets.included)}\n`)
  writeFileSync(
    path.join(ws, 'deps', 'c', '.git', 'config'),
    `[core]\n\trepositoryformatversion = 0\n[include]\n\tpath = ../creds.config\n`
  )
  // keys no denylist knows (issue 37): gitlab.token, sendemail.smtppass, npm.token, and a credential.helper,
  // in a checkout's config, its config.worktree and a bare repository's; the copy's configs keep only what is
  // known to be harmless. The store file the helper names and a `.git-credentials` are not in the copy at all.
  const mark = (p: string) => `${MARK}${p}${alnum(28)}`
  Object.assign(secrets, { gitlab: mark('Gl'), smtp: mark('Sm'), npm: mark('Np'), tree: mark('Wt'), bare: mark('Br') })
  Object.assign(secrets, { store: mark('St'), dotCreds: mark('Dc') })
  repo(path.join(ws, 'deps', 'd'))
  const store = path.join(ws, 'deps', 'd', '.git', 'creds-store')
  writeFileSync(
    path.join(ws, 'deps', 'd', '.git', 'config'),
    `[core]\n\trepositoryformatversion = 0\n[gitlab]\n\ttoken = ${secrets.gitlab}\n[sendemail]\n\tsmtppass = ${secrets.smtp}\n` +
      `[npm]\n\ttoken = ${secrets.npm}\n[credential]\n\thelper = store --file=${store}\n[extensions]\n\tworktreeConfig = true\n`
  )
  writeFileSync(path.join(ws, 'deps', 'd', '.git', 'config.worktree'), `[npm]\n\ttoken = ${secrets.tree}\n`)
  writeFileSync(store, `https://oauth2:${secrets.store}@gitlab.example.com\n`)
  mkdirSync(path.join(ws, 'tools'))
  writeFileSync(path.join(ws, 'tools', '.git-credentials'), `https://someone:${secrets.dotCreds}@git.example.com\n`)
  git(ws, 'init', '-q', '--bare', 'mirrors/e.git')
  git(path.join(ws, 'mirrors', 'e.git'), 'config', 'gitlab.token', secrets.bare)
  // committed (an unchanged file is not searched for known secrets): what reaches the copy is the cleaned config
  git(ws, 'add', 'mirrors')
  git(ws, 'commit', '-qm', 'a mirror')
  // git itself reads all three
  for (const d of ['a', 'b', 'c'])
    expect(git(path.join(ws, 'deps', d), 'config', '--get', 'http.https://github.com/.extraheader')).toMatch(/^AUTHORIZATION: basic /)
  if (kind.asUser) execFileSync('chown', ['-R', `${kind.asUser.uid}:${kind.asUser.gid}`, base])
  const files = [
    ...['deps/a/.git/config', 'deps/b/.git/config', 'deps/c/.git/config', 'deps/c/creds.config', 'deps/d/.git/config'],
    ...['deps/d/.git/config.worktree', 'deps/d/.git/creds-store', 'tools/.git-credentials', 'mirrors/e.git/config']
  ].map(f => path.join(ws, f))
  return { ws, secrets, files, bytes: files.map(f => readFileSync(f)) }
}

/** Where each secret of the new forms starts: what the agent searches its whole copy for. */
const MARK = 'zQ7mk'

const STEAL: Record<string, string> = {
  list: 'for d in deps/a deps/b deps/c deps/d; do git -C $d config --list --show-origin; git -C $d config --includes --get-all http.https://github.com/.extraheader; done; echo listed',
  cat: 'cat deps/a/.git/config deps/b/.git/config deps/c/.git/config deps/c/creds.config deps/d/.git/config',
  b64: 'cat deps/*/.git/config deps/c/creds.config | base64 -w0',
  hex: 'od -An -tx1 deps/*/.git/config deps/c/creds.config | tr -d " \\n"',
  grep: 'grep -rIa -i "extraheader\\|authorization" . 2>/dev/null | head -50; echo searched',
  forms:
    'git -C deps/d config --list --show-origin; git -C mirrors/e.git config --list; cat deps/d/.git/config.worktree mirrors/e.git/config; ' +
    'cat deps/d/.git/creds-store tools/.git-credentials 2>&1; ls -a tools deps/d/.git; echo formed',
  fill: "printf 'protocol=https\\nhost=gitlab.example.com\\n\\n' | GIT_TERMINAL_PROMPT=0 git -C deps/d credential fill 2>&1; echo filled",
  copy: `grep -raoh "${MARK}[A-Za-z0-9]*" . 2>&1 | head; echo copy-searched`
}

describe.each(KINDS)("nested checkouts' credentials in every form git reads ($name)", kind => {
  // the copy as an overlay, and as copied files (a workspace path no overlay's options can hold)
  test.each([
    ['an overlay', 'repo'],
    ['copied files', 'a,b']
  ])(
    'a key on the section line, a continued value, an include, keys no denylist knows, stores: none reaches %s',
    async (how, name) => {
      const w = workspace(kind, name)
      const script: Reply[] = [
        {
          content: Object.entries(STEAL).map(([id, command]) => ({
            type: 'tool_use' as const,
            id: `toolu_${id}`,
            name: 'bash',
            input: { command }
          })),
          stop_reason: 'tool_use'
        },
        text('Nothing found.')
      ]
      const r = await agent(script, {
        inputs: { sandbox: 'user', 'blocked-commands': '' },
        extra: { workspace: w.ws, asUser: kind.asUser },
        timeoutMs: 240_000
      })
      expect(r.run.code).toBe(0)
      expect(r.run.stdout).toContain(`copy of the workspace (${how}`)
      const last = r.anthropic.requests[r.anthropic.requests.length - 1]
      const all = (last.body.messages as Array<{ content: unknown }>)
        .flatMap(m => (Array.isArray(m.content) ? m.content : []))
        .filter((b: { type?: string }) => b.type === 'tool_result')
        .map((b: { content?: unknown }) => JSON.stringify(b.content))
        .join('\n')
      expect(all).toContain('listed')
      expect(all).toContain('searched')
      for (const done of ['formed', 'filled', 'copy-searched']) expect(all).toContain(done)
      expect(all).toMatch(/creds-store: No such file or directory/)
      expect(all).toMatch(/\.git-credentials: No such file or directory/)
      expect(all).not.toContain(MARK)
      expect(all).toContain('core.bare=true') // the mirror's config, cleaned, not withheld
      expect(all).toContain('repositoryformatversion')
      for (const s of Object.values(w.secrets)) for (const f of formsOf(s)) expect(all).not.toContain(f)
      expect(all).not.toMatch(/extraheader|authorization/i)
      expect(all).not.toContain('***')
      const report = r.comment.updates[r.comment.updates.length - 1]
      expect(report).toContain('sandbox: user')
      // the stores are named as not given to the agent, never shown
      expect(report).toMatch(/Not given to the agent[\s\S]*deps\/d\/\.git\/creds-store/)
      expect(report).toContain('tools/.git-credentials')
      w.files.forEach((f, i) => expect({ f, same: readFileSync(f).equals(w.bytes[i]) }).toEqual({ f, same: true }))
    },
    300_000
  )
})
