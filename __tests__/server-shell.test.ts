// The bash that starts the command server reads no startup file: started with
// a socket on stdin (as Node's pipes are), bash sources ~/.bashrc even when not
// interactive, and a .bashrc that prints or fails broke the sandbox's start.
import { describe, expect, it } from '@jest/globals'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { serverShell } from '../src/sandbox/index'
import { systemPrompt } from '../src/agent/prompt'

function homeWithBadRc(): string {
  const home = mkdtempSync(join(tmpdir(), 'rc-home-'))
  writeFileSync(join(home, '.bashrc'), 'echo FROM-BASHRC; exit 7\n')
  writeFileSync(join(home, '.bash_profile'), 'echo FROM-PROFILE; exit 8\n')
  writeFileSync(join(home, 'env.sh'), 'echo FROM-BASH_ENV; exit 9\n')
  return home
}

const run = (argv: string[], home: string) =>
  spawnSync(argv[0], [...argv.slice(1), process.execPath, '-e', 'console.log("server up")'], {
    // a pipe on stdin is a socketpair in Node, what makes bash read ~/.bashrc
    stdio: ['pipe', 'pipe', 'pipe'],
    input: '',
    env: { PATH: process.env.PATH, HOME: home, BASH_ENV: join(home, 'env.sh') },
    encoding: 'utf8'
  })

describe('the command server’s bash', () => {
  it('reads no ~/.bashrc, profile or BASH_ENV', () => {
    const home = homeWithBadRc()
    const r = run(serverShell('bash'), home)
    expect(r.stdout).toBe('server up\n')
    expect(r.status).toBe(0)
  })
  it('(without the flags the same start breaks, so the test means something)', () => {
    const home = homeWithBadRc()
    const r = run(['bash', '-c', '"$@"; exit $?', 'bash'], home)
    expect(r.stdout).toMatch(/FROM-/)
    expect(r.stdout).not.toBe('server up\n')
  })
})

describe('the system prompt', () => {
  it('says that earlier turns of a continued thread are data', () => {
    const p = systemPrompt({ workspace: '/w', commandTimeoutSec: 120, maxOutputChars: 50000, blocked: [] })
    expect(p).toMatch(/earlier turns .*issues, files and command output.*data/i)
  })
})
