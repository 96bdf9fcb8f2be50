// Files the agent never gets (SPEC "Not given"): secretFiles() finds the
// workspace files holding a secret the action knows, reading only what is not
// unmodified committed content, with real git and grep.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync, chmodSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { execFileSync } from 'node:child_process'
import { candidates, secretFiles } from '../src/sandbox/secret-files'
import { Redactor, secretsFromEnv } from '../src/report/redact'
import { commitAll, gitEnv } from './helpers/git'
import { ghaCreds } from './helpers/gha-creds'

const TOKEN = 'oidcRequestToken0123456789abcdefABCDEF'
const OTHER = 'sk-ant-api03-secretFilesKey000000000000'

let ws: string
let tmp: string
const oldTmp = process.env.TMPDIR

beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'secret-files-tmp-'))
  process.env.TMPDIR = tmp
  ws = mkdtempSync(join(tmpdir(), 'secret-files-ws-'))
  writeFileSync(join(ws, '.gitignore'), 'node_modules/\n*.log\n')
  writeFileSync(join(ws, 'README.md'), '# hi\n')
  // committed content is public already: never read (this one holds the token, and is not found)
  writeFileSync(join(ws, 'committed.txt'), `${TOKEN}\n`)
  writeFileSync(join(ws, 'changed.txt'), 'before\n')
  commitAll(ws, gitEnv())
  writeFileSync(join(ws, 'changed.txt'), `after ${OTHER}\n`)
  writeFileSync(join(ws, 'gha-creds-0123abcd.json'), ghaCreds(TOKEN, 'https://pipelines.example/idtoken?api-version=2.0'))
  mkdirSync(join(ws, 'node_modules/pkg/dist'), { recursive: true })
  for (let i = 0; i < 50; i++) writeFileSync(join(ws, `node_modules/pkg/dist/f${i}.js`), `module.exports = ${i}\n`)
  writeFileSync(join(ws, 'node_modules/pkg/dist/enc.js'), `x="${Buffer.from(`user:${TOKEN}`).toString('base64')}"\n`)
  writeFileSync(join(ws, 'build.log'), 'nothing here\n')
  // never followed or read: a link to a file holding the token outside, a FIFO (reading it would never end)
  writeFileSync(join(tmp, 'outside.txt'), `${TOKEN}\n`)
  symlinkSync(join(tmp, 'outside.txt'), join(ws, 'outside-link'))
  execFileSync('mkfifo', [join(ws, 'pipe')])
  mkdirSync(join(ws, 'nested'))
  writeFileSync(join(ws, 'nested/README.md'), 'nested\n')
  commitAll(join(ws, 'nested'), gitEnv())
  writeFileSync(join(ws, 'nested/.env'), `TOKEN=${TOKEN}\n`)
})

afterAll(() => {
  process.env.TMPDIR = oldTmp
  rmSync(ws, { recursive: true, force: true })
  rmSync(tmp, { recursive: true, force: true })
})

describe('secretFiles: the workspace files the agent never gets', () => {
  it('finds gha-creds-*.json, a changed file, an ignored file with the base64 form, a nested repository’s file; never committed content', async () => {
    const found = await secretFiles(ws, [TOKEN, OTHER])
    expect(found.map(f => f.path)).toEqual(['changed.txt', 'gha-creds-0123abcd.json', 'nested/.env', 'node_modules/pkg/dist/enc.js'])
    for (const f of found) expect(f.why).toMatch(/holds a secret value/)
    // nothing of the secrets is left behind: the patterns file went with its folder
    expect(readdirSync(tmp)).toEqual(['outside.txt'])
  })

  it('reads only untracked, ignored and modified files: unmodified tracked files are not on the list it scans', async () => {
    const list = await candidates(ws)
    expect(list).toEqual(
      expect.arrayContaining(['changed.txt', 'gha-creds-0123abcd.json', 'build.log', 'node_modules/pkg/dist/f0.js', 'nested/.env'])
    )
    for (const tracked of ['README.md', 'committed.txt', '.gitignore']) expect(list).not.toContain(tracked)
  })

  it('the token the action knows: ACTIONS_ID_TOKEN_REQUEST_TOKEN (and a token in the request URL) are secrets the Redactor knows', async () => {
    const redactor = new Redactor(
      secretsFromEnv({
        ACTIONS_ID_TOKEN_REQUEST_TOKEN: TOKEN,
        ACTIONS_ID_TOKEN_REQUEST_URL: 'https://pipelines.example/idtoken?api-version=2.0&sig=urlSignature0123456789'
      })
    )
    expect(redactor.values()).toEqual(expect.arrayContaining([TOKEN, 'urlSignature0123456789']))
    expect((await secretFiles(ws, redactor.values())).map(f => f.path)).toContain('gha-creds-0123abcd.json')
  })

  it('a file the action cannot read is withheld too (it could not be checked)', async () => {
    if (process.getuid?.() === 0) return // root reads everything
    const f = join(ws, 'locked.txt')
    writeFileSync(f, 'x\n')
    chmodSync(f, 0)
    try {
      expect(await secretFiles(ws, [TOKEN])).toContainEqual({ path: 'locked.txt', why: expect.stringMatching(/could not read/) })
    } finally {
      rmSync(f)
    }
  })

  it('no secret known: nothing read, nothing withheld', async () => {
    expect(await secretFiles(ws, ['short'])).toEqual([])
  })
})

describe('the report names the files the agent never got (never their content)', () => {
  it('in the Changes section, whatever became of the changes', async () => {
    const { renderChanges } = await import('../src/changes/render')
    const withheld = [{ path: 'gha-creds-1.json', why: 'it holds a secret value the action knows' }]
    for (const r of [
      { kind: 'no-repository' as const, withheld },
      { kind: 'failed' as const, why: 'git failed', withheld },
      {
        kind: 'computed' as const,
        mode: 'apply' as const,
        patch: { baseSha: 'a'.repeat(40), files: [], heldBack: [], diff: '', diffBytes: Buffer.alloc(0) },
        withheld
      }
    ]) {
      const text = renderChanges(r, 65536)
      expect(text).toMatch(/^### Changes/)
      expect(text).toMatch(/Not given to the agent[^]*gha-creds-1\.json/)
    }
  })
})

describe('a name that is not UTF-8 (no list of names can carry it to the server)', () => {
  it('is read all the same: holding a secret, it stops the set-up; without one, nothing is withheld', async () => {
    const w = mkdtempSync(join(tmpdir(), 'secret-files-raw-'))
    try {
      writeFileSync(join(w, 'README.md'), 'x\n')
      commitAll(w, gitEnv())
      const name = Buffer.concat([Buffer.from(`${w}/creds-`), Buffer.from([0xff, 0xfe]), Buffer.from('.json')])
      writeFileSync(name, 'nothing\n')
      expect(await secretFiles(w, [TOKEN])).toEqual([])
      writeFileSync(name, `Bearer ${TOKEN}\n`)
      await expect(secretFiles(w, [TOKEN])).rejects.toThrow(/not UTF-8\) holds a secret/)
    } finally {
      rmSync(w, { recursive: true, force: true })
    }
  })
})
