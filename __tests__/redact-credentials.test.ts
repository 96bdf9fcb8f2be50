// A value that carries a credential (a URL with `user:password@`, an
// `Authorization:` header) is learned by the redactor for its credential only:
// the scheme, host and path are public, so their hex dump (or any run of
// them) is no secret, while every run of the token still is. Taught through
// the real paths that learn such values: the credential store and remote URL
// of a checkout (collectCredentials), a pass-env variable (commandEnv) and
// the action's environment (secretsFromEnv).
import { afterAll, describe, expect, it, test } from '@jest/globals'
import { execFileSync, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Redactor, REDACTED, secretsFromEnv } from '../src/report/redact'
import { collectCredentials } from '../src/sandbox/credentials'
import { commandEnv } from '../src/sandbox/env'

const withGit = spawnSync('git', ['--version']).status === 0 ? test : test.skip

const created: string[] = []
afterAll(() => {
  for (const d of created) rmSync(d, { recursive: true, force: true })
})
const tempDir = (): string => {
  const d = mkdtempSync(path.join(os.tmpdir(), 'redact-cred-'))
  created.push(d)
  return d
}

const hex = (s: string): string => Buffer.from(s, 'utf8').toString('hex')
const reverse = (s: string): string => [...s].reverse().join('')
/** How `xxd -p` (60 hex digits a line) and `od -An -tx1` (16 bytes a line) print `s`. */
const xxd = (s: string): string => `${(hex(s).match(/.{1,60}/g) ?? []).join('\n')}\n`
const od = (s: string): string =>
  `${(hex(s).match(/.{1,32}/g) ?? []).map(l => (l.match(/../g) ?? []).map(b => ` ${b}`).join('')).join('\n')}\n`

/** Public text next to the credentials below, in the forms a command could print it. */
const PUBLIC = ['https://github.com/o/r', '//github.com', 'git@github.com:o/r.git', 'https://github.com/', 'Authorization: basic']
const publicForms = (s: string): string[] => [s, hex(s), hex(s).toUpperCase(), xxd(s), od(s), reverse(s), hex(reverse(s))]

/** A token of no known shape (no ghs_ or sk-ant- prefix), with - and _ inside. */
const newToken = (): string => `${randomBytes(30).toString('base64url')}-_x`

function expectOnlyTheToken(r: Redactor, token: string): void {
  for (const text of PUBLIC.flatMap(publicForms)) expect(r.redact(text)).toBe(text)
  for (const form of [token, hex(token), hex(token).toUpperCase(), reverse(token), hex(reverse(token))]) {
    expect(r.redact(`!${form}!`)).toBe(`!${REDACTED}!`)
    expect(r.redact(`!${form.slice(3, 27)}!`)).toBe(`!${REDACTED}!`)
  }
  expect(r.redact(xxd(token))).toBe(`${REDACTED}\n`)
  expect(r.redact(`${xxd('https://github.com/o/r')}${xxd(token)}`)).not.toContain(hex(token).slice(0, 12))
}

describe('a credential in a URL or header: only the credential is learned', () => {
  it('the redactor, given whole URLs and header lines', () => {
    const token = newToken()
    const basic = Buffer.from(`x-access-token:${token}`).toString('base64')
    // a PAT's `github_pat_` is public too: the hex of `github` is no piece of it, even after `x-access-token:`
    const pat = `github_pat_${randomBytes(60).toString('base64url').replace(/[-_]/g, 'x')}`
    const r = new Redactor([
      `https://x-access-token:${token}@github.com/o/r`,
      `https://x-access-token:${encodeURIComponent(token)}@github.com`,
      `\textraheader = AUTHORIZATION: basic ${basic}`,
      `x-access-token:${pat}`
    ])
    expectOnlyTheToken(r, token)
    expect(r.redact(`!${hex(pat.slice(11))}!`)).toBe(`!${REDACTED}!`)
    expect(r.redact(`!${hex(basic)}!`)).toBe(`!${REDACTED}!`)
    // the whole value is still a secret as it is
    expect(r.redact(`url https://x-access-token:${token}@github.com/o/r`)).toBe(`url ${REDACTED}`)
  })

  withGit('collectCredentials: a credential store line and a remote URL with a token', async () => {
    const token = newToken()
    const home = tempDir()
    writeFileSync(path.join(home, '.git-credentials'), `https://x-access-token:${token}@github.com\n`)
    const workspace = tempDir()
    mkdirSync(workspace, { recursive: true })
    execFileSync('git', ['init', '-q', workspace])
    execFileSync('git', ['-C', workspace, 'config', 'remote.origin.url', `https://oauth2:${token}@github.com/o/r`])
    const r = new Redactor()
    expect((await collectCredentials(workspace, r, undefined, { home })).length).toBeGreaterThan(0)
    expectOnlyTheToken(r, token)
  })

  it('commandEnv: a pass-env variable holding a URL with a token', () => {
    const token = newToken()
    const r = new Redactor()
    const env = commandEnv(
      { GIT_REMOTE: `https://x-access-token:${token}@github.com/o/r` },
      { passEnv: ['GIT_REMOTE'], home: '/home/agent', user: 'agent', tmpdir: '/tmp', redactor: r }
    )
    expect(env.GIT_REMOTE).toContain(token) // asked for by name: passed, and redacted wherever it shows
    expectOnlyTheToken(r, token)
  })

  it('secretsFromEnv: a secret-named variable holding a URL with a token', () => {
    const token = newToken()
    const r = new Redactor(secretsFromEnv({ GIT_CREDENTIALS: `https://x-access-token:${token}@github.com` }))
    expectOnlyTheToken(r, token)
  })
})
