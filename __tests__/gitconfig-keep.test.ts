// The one definition of a git credential (issue 37): what of a nested repository's config the agent's copy
// keeps (keys known to be harmless, read back by real git as written), and the store a helper names.
import { describe, expect, test } from '@jest/globals'
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { keptConfig, storeFileOf } from '../src/sandbox/gitconfig-keep'
import { scanCredentials } from '../src/sandbox/credentials'
import { nestedPlan } from '../src/sandbox/nested'
import { Redactor } from '../src/report/redact'

const hasGit = spawnSync('git', ['--version']).status === 0
const withGit = hasGit ? test : test.skip

/** What git reads from `text` (no includes followed), one `key=value` a line. */
function gitReads(text: string): string[] {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'keep-'))
  try {
    writeFileSync(path.join(dir, 'config'), text)
    const env = { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' }
    return execFileSync('git', ['config', '--file', path.join(dir, 'config'), '--no-includes', '--list'], { env })
      .toString()
      .split('\n')
      .filter(Boolean)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const TOKEN = 'Zk4vQ8pL2mN7xR1tY6wB3cD9fG5hJ0sA'

describe('keptConfig: only keys known to be harmless', () => {
  withGit('a checkout keeps what git needs; every other key, any credential and any program goes', () => {
    const config = [
      '[core]',
      '\trepositoryformatversion = 0',
      '\tbare = false',
      '\tfsmonitor = /tmp/run-me',
      '\tsshCommand = ssh -i key',
      '[remote "origin"]',
      `\turl = https://x-access-token:${TOKEN}@github.com/octo-org/octo-repo`,
      '\tfetch = +refs/heads/*:refs/remotes/origin/*',
      '\tuploadpack = /tmp/run-me',
      '[branch "main"]',
      '\tremote = origin',
      '\tmerge = refs/heads/main',
      `[gitlab]\n\ttoken = ${TOKEN}`,
      `[sendemail]\n\tsmtppass = ${TOKEN}`,
      `[npm]\n\ttoken = ${TOKEN}`,
      '[credential]\n\thelper = store --file=/ws/creds',
      `[http "https://github.com/"] extraheader = AUTHORIZATION: basic ${TOKEN}`,
      `[url "https://${TOKEN}@github.com/"]\n\tinsteadOf = https://github.com/`,
      '[include]\n\tpath = ../creds.config',
      '[submodule "lib"]\n\turl = !sh -c "touch /tmp/pwned"\n\tpath = lib',
      '[user]\n\tname = someone\n\temail = someone@example.com',
      '[extensions]\n\tworktreeConfig = true'
    ].join('\n')
    const kept = keptConfig(Buffer.from(`${config}\n`))
    expect(kept).not.toContain(TOKEN)
    expect(gitReads(kept)).toEqual([
      'core.repositoryformatversion=0',
      'core.bare=false',
      'remote.origin.url=https://github.com/octo-org/octo-repo',
      'remote.origin.fetch=+refs/heads/*:refs/remotes/origin/*',
      'branch.main.remote=origin',
      'branch.main.merge=refs/heads/main',
      'submodule.lib.path=lib',
      'user.name=someone',
      'user.email=someone@example.com',
      'extensions.worktreeconfig=true'
    ])
  })

  withGit('values git reads back as they were: quotes, escapes, UTF-8, a subsection with a quote', () => {
    const kept = keptConfig(Buffer.from('[remote "we\\"ird"]\n\turl = "/srv/dépôt \\"x\\"\\\\y"\n'))
    expect(gitReads(kept)).toEqual(['remote.we"ird.url=/srv/dépôt "x"\\y'])
  })

  test('a file git cannot read (a credential store, a broken config), or none, is empty', () => {
    expect(keptConfig(Buffer.from(`https://someone:${TOKEN}@git.example.com\n`))).toBe('')
    expect(keptConfig(Buffer.from('[core\n'))).toBe('')
    expect(keptConfig(undefined)).toBe('')
  })
})

describe('storeFileOf: the file a helper keeps credentials in', () => {
  test('--file=, --file, quoted; relative to the repository holding .git; none for the home or no file', () => {
    expect(storeFileOf('store --file=/ws/creds', '/ws/a/.git/config')).toBe('/ws/creds')
    expect(storeFileOf('store --file "/ws/my creds"', '/ws/a/.git/config')).toBe('/ws/my creds')
    expect(storeFileOf('store --file=creds', '/ws/a/.git/config')).toBe('/ws/a/creds')
    expect(storeFileOf('store --file=creds', '/ws/m.git/config')).toBe('/ws/m.git/creds')
    expect(storeFileOf('store --file=~/.creds', '/ws/a/.git/config')).toBeUndefined()
    expect(storeFileOf('store', '/ws/a/.git/config')).toBeUndefined()
    expect(storeFileOf('cache --timeout=300', '/ws/a/.git/config')).toBeUndefined()
  })
})

describe('nestedPlan: what the copy gets of the nested repositories, from the scan', () => {
  withGit('every config below the top cleaned (a symlinked one too), the stores withheld, the top .git left alone', async () => {
    const ws = mkdtempSync(path.join(os.tmpdir(), 'plan-'))
    try {
      const env = { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' }
      for (const d of ['.', 'deps/a', 'deps/b']) {
        mkdirSync(path.join(ws, d), { recursive: true })
        execFileSync('git', ['init', '-q', path.join(ws, d)], { env })
      }
      const helper = `[credential]\n\thelper = store --file=${path.join(ws, 'deps', 'a', 'store')}\n`
      writeFileSync(path.join(ws, 'deps', 'a', '.git', 'config'), `[core]\n\tbare = false\n[gitlab]\n\ttoken = ${TOKEN}\n${helper}`)
      writeFileSync(path.join(ws, 'deps', 'a', 'store'), `https://u:${TOKEN}@git.example.com\n`)
      writeFileSync(path.join(ws, 'deps', 'shared.config'), `[npm]\n\ttoken = ${TOKEN}\n`)
      rmSync(path.join(ws, 'deps', 'b', '.git', 'config'))
      symlinkSync('../../shared.config', path.join(ws, 'deps', 'b', '.git', 'config'))
      writeFileSync(path.join(ws, '.git-credentials'), `https://u:${TOKEN}@git.example.com\n`)
      const redactor = new Redactor()
      const plan = nestedPlan(ws, await scanCredentials(ws, redactor))
      expect(redactor.redact(`x ${TOKEN} x`)).not.toContain(TOKEN)
      expect(Object.fromEntries(plan.replace.map(r => [r.path, r.content]))).toEqual({
        'deps/a/.git/config': '[core]\n\tbare = "false"\n',
        'deps/b/.git/config': '',
        'deps/shared.config': '' // what the link named: a file holding credentials, cleaned too
      })
      expect(plan.withhold.map(f => f.path).sort()).toEqual(['.git-credentials', 'deps/a/store'])
      expect(plan.withhold[0].why).toMatch(/credential store/)
    } finally {
      rmSync(ws, { recursive: true, force: true })
    }
  })
})
