// Nested checkouts' credentials in the forms git accepts but a line-by-line reader misses, through the built
// action (dist/, sandbox: user) in both privilege kinds: a key on the `[http "…"]` line itself, a value
// continued with a trailing `\`, an include.path to another file of the workspace. None reaches the agent's
// copy in any encoding (not even redacted: absent); the workspace's files stay byte for byte.
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
function workspace(kind: Kind) {
  const base = mkdtempSync(path.join(os.tmpdir(), 'forms-'))
  made.push(base)
  const ws = path.join(base, 'repo')
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
  // keys no denylist knows (issue 37): gitlab.token, sendemail.smtppass, npm.token, and a credential.helper;
  // the copy's configs keep only what is known to be harmless. (The store file such a helper names is not
  // yet left out of the copy: to do.)
  Object.assign(secrets, { gitlab: `Gl${alnum(30)}`, smtp: `Sm${alnum(30)}`, npm: `Np${alnum(30)}` })
  repo(path.join(ws, 'deps', 'd'))
  const store = path.join(ws, 'deps', 'd', '.git', 'creds-store')
  writeFileSync(
    path.join(ws, 'deps', 'd', '.git', 'config'),
    `[core]\n\trepositoryformatversion = 0\n[gitlab]\n\ttoken = ${secrets.gitlab}\n[sendemail]\n\tsmtppass = ${secrets.smtp}\n` +
      `[npm]\n\ttoken = ${secrets.npm}\n[credential]\n\thelper = store --file=${store}\n`
  )
  // git itself reads all three
  for (const d of ['a', 'b', 'c'])
    expect(git(path.join(ws, 'deps', d), 'config', '--get', 'http.https://github.com/.extraheader')).toMatch(/^AUTHORIZATION: basic /)
  if (kind.asUser) execFileSync('chown', ['-R', `${kind.asUser.uid}:${kind.asUser.gid}`, base])
  const files = ['deps/a/.git/config', 'deps/b/.git/config', 'deps/c/.git/config', 'deps/c/creds.config', 'deps/d/.git/config'].map(f =>
    path.join(ws, f)
  )
  return { ws, secrets, files, bytes: files.map(f => readFileSync(f)) }
}

const STEAL: Record<string, string> = {
  list: 'for d in deps/a deps/b deps/c deps/d; do git -C $d config --list --show-origin; git -C $d config --includes --get-all http.https://github.com/.extraheader; done; echo listed',
  cat: 'cat deps/a/.git/config deps/b/.git/config deps/c/.git/config deps/c/creds.config deps/d/.git/config',
  b64: 'cat deps/*/.git/config deps/c/creds.config | base64 -w0',
  hex: 'od -An -tx1 deps/*/.git/config deps/c/creds.config | tr -d " \\n"',
  grep: 'grep -rIa -i "extraheader\\|authorization" . 2>/dev/null | head -50; echo searched'
}

describe.each(KINDS)("nested checkouts' credentials in every form git reads ($name)", kind => {
  test('a key on the section line, a continued value, an include: none reaches the copy in any encoding', async () => {
    const w = workspace(kind)
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
    const last = r.anthropic.requests[r.anthropic.requests.length - 1]
    const all = (last.body.messages as Array<{ content: unknown }>)
      .flatMap(m => (Array.isArray(m.content) ? m.content : []))
      .filter((b: { type?: string }) => b.type === 'tool_result')
      .map((b: { content?: unknown }) => JSON.stringify(b.content))
      .join('\n')
    expect(all).toContain('listed')
    expect(all).toContain('searched')
    expect(all).toContain('repositoryformatversion')
    for (const s of Object.values(w.secrets)) for (const f of formsOf(s)) expect(all).not.toContain(f)
    expect(all).not.toMatch(/extraheader|authorization/i)
    expect(all).not.toContain('***')
    expect(r.comment.updates[r.comment.updates.length - 1]).toContain('sandbox: user')
    w.files.forEach((f, i) => expect({ f, same: readFileSync(f).equals(w.bytes[i]) }).toEqual({ f, same: true }))
  }, 300_000)
})
