import { afterAll, describe, expect, test } from '@jest/globals'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { spawn } from 'node:child_process'
import { runBash, toolResult, type BashOptions } from '../src/tools/bash'
import { startLocal } from '../src/environments/local'
import type { Started } from '../src/environments/types'
import { OutputCapture, captureBytes, cleanText } from '../src/tools/output'

const tmp = mkdtempSync(path.join(os.tmpdir(), 'bash-tool-test-'))
const marker = `bash-test-${process.pid}-${Date.now()}`

/** Test clean-up: kill the processes whose environment holds BASH_AGENT_RUN=<m> (what runBash left; the sandbox contains them in a run). */
async function killLeftovers(m: string): Promise<number> {
  let n = 0
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue
    try {
      if (readFileSync(`/proc/${name}/environ`, 'latin1').split('\0').includes(`BASH_AGENT_RUN=${m}`)) {
        process.kill(Number(name), 'SIGKILL')
        n++
      }
    } catch {
      // gone
    }
  }
  return n
}

afterAll(async () => {
  await killLeftovers(marker)
  rmSync(tmp, { recursive: true, force: true })
})

function envWith(m: string): Record<string, string> {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: tmp, BASH_AGENT_RUN: m }
}

function opts(over: Partial<BashOptions> = {}): BashOptions {
  return {
    cwd: tmp,
    env: envWith(marker),
    timeoutMs: 30000,
    maxOutputChars: 50000,
    blocked: [],
    redact: t => t,
    launch: startLocal,
    ...over
  }
}

/** Alive and not a zombie (PID 1 here may not reap orphans). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1')
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z'
  } catch {
    return existsSync('/proc') ? false : true
  }
}

async function waitGone(pid: number, ms = 15000): Promise<boolean> {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (!alive(pid)) return true
    await new Promise(r => setTimeout(r, 100))
  }
  return !alive(pid)
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/

function wellFormed(s: string): boolean {
  return Buffer.from(s, 'utf8').toString('utf8') === s
}

describe('runBash: running', () => {
  test('exit codes', async () => {
    const ok = await runBash('true', opts())
    expect(ok.exitCode).toBe(0)
    expect(toolResult(ok, 30000)).toEqual({ content: '(no output)', isError: false })

    const three = await runBash('echo out; exit 3', opts())
    expect(three.exitCode).toBe(3)
    expect(three.output).toBe('out')
    const tr = toolResult(three, 30000)
    expect(tr.isError).toBe(true)
    expect(tr.content).toBe('out\n[exit code 3]')

    const status = await runBash('false; echo "status $?"', opts())
    expect(status.output).toBe('status 1')
    expect(status.exitCode).toBe(0)
  })

  test('syntax errors are reported by bash, on the merged stream', async () => {
    const rec = await runBash('if then fi (', opts())
    expect(rec.exitCode).toBe(2)
    expect(rec.output).toMatch(/syntax error/)
    expect(rec.timedOut).toBe(false)
    expect(rec.blocked).toBe(false)
  })

  test('stdout and stderr are merged in arrival order', async () => {
    const rec = await runBash('echo a; echo b >&2; echo c', opts())
    expect(rec.output).toBe('a\nb\nc')
    const many = await runBash('for i in 1 2 3 4 5; do echo "o$i"; echo "e$i" >&2; done', opts())
    expect(many.output).toBe('o1\ne1\no2\ne2\no3\ne3\no4\ne4\no5\ne5')
  })

  test('empty output is (no output); trailing whitespace is trimmed', async () => {
    expect((await runBash(':', opts())).output).toBe('(no output)')
    expect((await runBash('printf "x\\n\\n  \\n"', opts())).output).toBe('x')
  })

  test('runs in cwd with exactly the given environment', async () => {
    const env = { ...envWith(marker), FOO: 'bar baz' }
    const rec = await runBash('pwd; echo "$FOO|$HOME|${JEST_WORKER_ID:-unset}"', opts({ env }))
    const realTmp = execFileSync('realpath', [tmp]).toString().trim()
    expect(rec.output.split('\n')[0]).toBe(realTmp)
    expect(rec.output.split('\n')[1]).toBe(`bar baz|${tmp}|unset`)
  })

  test('stdin is closed', async () => {
    const rec = await runBash('cat; echo done', opts())
    expect(rec.output).toBe('done')
    expect(rec.exitCode).toBe(0)
  })

  test('a spawn failure becomes a record, never a throw', async () => {
    const rec = await runBash('echo hi', opts({ cwd: path.join(tmp, 'does-not-exist') }))
    expect(rec.exitCode).toBeNull()
    expect(rec.error).toBeDefined()
    expect(rec.output.startsWith('Error: ')).toBe(true)
    expect(toolResult(rec, 30000)).toEqual({ content: rec.output, isError: true })
  })
})

describe('runBash: blocked substrings', () => {
  const blocked = ['rm -rf /', 'sudo', 'shutdown', 'reboot', '> /dev/']
  test.each(blocked)('refuses a command containing %p', async s => {
    const file = path.join(tmp, `blocked-${blocked.indexOf(s)}`)
    const rec = await runBash(`touch ${file}; echo ${s} ; ${s}`, opts({ blocked: ['', ...blocked] }))
    expect(rec.blocked).toBe(true)
    expect(rec.exitCode).toBeNull()
    expect(rec.durationMs).toBe(0)
    expect(rec.output).toBe(`Error: command refused: it contains the blocked substring "${s}"`)
    const tr = toolResult(rec, 30000)
    expect(tr.isError).toBe(true)
    expect(tr.content).toContain(`"${s}"`)
    await new Promise(r => setTimeout(r, 200))
    expect(existsSync(file)).toBe(false)
  })

  test('an empty blocked entry blocks nothing; matching is case-sensitive', async () => {
    const rec = await runBash('echo SUDO', opts({ blocked: ['', 'sudo'] }))
    expect(rec.blocked).toBe(false)
    expect(rec.output).toBe('SUDO')
  })
})

describe('runBash: timeouts, background jobs, abort', () => {
  test('a command-timeout past what a timer can hold does not fire at once', async () => {
    // 30 days in ms is past setTimeout's 2^31-1 ms; unclamped, Node fires such a timer at once.
    const rec = await runBash('sleep 0.3; echo finished', opts({ timeoutMs: 30 * 24 * 3600 * 1000 }))
    expect(rec.timedOut).toBe(false)
    expect(rec.exitCode).toBe(0)
    expect(rec.output).toContain('finished')
  })

  test('a timeout kills the whole process group, grandchildren too', async () => {
    const t0 = Date.now()
    const rec = await runBash(`bash -c 'sleep 30; echo x > late' & echo "pid $!"; sleep 30`, opts({ timeoutMs: 1000 }))
    const elapsed = Date.now() - t0
    expect(elapsed).toBeLessThan(20000)
    expect(rec.timedOut).toBe(true)
    expect(rec.exitCode).toBeNull()
    const m = /pid (\d+)/.exec(rec.output)
    expect(m).not.toBeNull()
    expect(await waitGone(Number(m?.[1]))).toBe(true)
    const tr = toolResult(rec, 1000)
    expect(tr.isError).toBe(true)
    expect(tr.content).toContain('Error: the command timed out after 1 s and its process group was killed')
    expect(tr.content).toContain('pid ')
  })

  test('returns when bash exits, though a background child holds the pipe', async () => {
    const m = `${marker}-bg`
    const t0 = Date.now()
    const rec = await runBash('sleep 60 & echo "pid $!"; echo started', opts({ env: envWith(m) }))
    expect(Date.now() - t0).toBeLessThan(10000)
    expect(rec.exitCode).toBe(0)
    expect(rec.timedOut).toBe(false)
    expect(rec.output).toMatch(/^pid \d+\nstarted$/)
    const pid = Number(/pid (\d+)/.exec(rec.output)?.[1])
    expect(alive(pid)).toBe(true)
    const n = await killLeftovers(m)
    expect(n).toBeGreaterThanOrEqual(1)
    expect(await waitGone(pid)).toBe(true)
  })

  test("a timeout or an abort kills only the command's own process tree, not another command's", async () => {
    const m = `${marker}-setsid`
    const other = `${marker}-other`
    const rec = await runBash('setsid sleep 60 >/dev/null 2>&1 & echo $!', opts({ env: envWith(m) }))
    const keep = await runBash('sleep 60 >/dev/null 2>&1 & echo $!', opts({ env: envWith(other) }))
    const pid = Number(rec.output)
    const keepPid = Number(keep.output)
    expect(pid).toBeGreaterThan(1)
    expect(await killLeftovers(m)).toBeGreaterThanOrEqual(1)
    expect(await waitGone(pid)).toBe(true)
    expect(alive(keepPid)).toBe(true)
    await killLeftovers(other)
    expect(await waitGone(keepPid)).toBe(true)
    expect(await killLeftovers(`${marker}-nothing-here`)).toBe(0)
  })

  test('a background child that keeps writing does not hold the result', async () => {
    const m = `${marker}-spam`
    const t0 = Date.now()
    const rec = await runBash("(trap '' PIPE; while :; do echo spam; sleep 0.01; done 2>/dev/null) & echo main", opts({ env: envWith(m) }))
    expect(Date.now() - t0).toBeLessThan(10000)
    expect(rec.exitCode).toBe(0)
    expect(rec.output.split('\n')).toContain('main')
    expect(await killLeftovers(m)).toBeGreaterThanOrEqual(1)
  })

  test('an abort kills the command at once', async () => {
    const ac = new AbortController()
    const t0 = Date.now()
    setTimeout(() => ac.abort(), 300)
    const rec = await runBash('echo begun; sleep 30', opts({ signal: ac.signal }))
    expect(Date.now() - t0).toBeLessThan(20000)
    expect(rec.aborted).toBe(true)
    expect(rec.exitCode).toBeNull()
    expect(rec.timedOut).toBe(false)
    expect(rec.output).toBe('begun')
    expect(toolResult(rec, 30000).isError).toBe(true)
  })

  test('an already aborted signal runs nothing', async () => {
    const ac = new AbortController()
    ac.abort()
    const file = path.join(tmp, 'aborted-file')
    const rec = await runBash(`touch ${file}`, opts({ signal: ac.signal }))
    expect(rec.aborted).toBe(true)
    expect(rec.exitCode).toBeNull()
    expect(existsSync(file)).toBe(false)
  })

  test('a command killed by a signal has no exit code', async () => {
    const rec = await runBash('echo before; kill -9 $$', opts())
    expect(rec.exitCode).toBeNull()
    expect(rec.timedOut).toBe(false)
    expect(rec.output).toBe('before')
    expect(toolResult(rec, 30000).isError).toBe(true)
  })
})

describe('runBash: output limits', () => {
  test('long output keeps head and tail with a marker', async () => {
    const rec = await runBash(`head -c 200000 /dev/zero | tr '\\0' a`, opts({ maxOutputChars: 1000 }))
    expect(rec.truncated).toBe(true)
    expect(rec.output.startsWith('a'.repeat(400))).toBe(true)
    expect(rec.output.endsWith('a'.repeat(400))).toBe(true)
    expect(rec.output).toMatch(/\n\[\.\.\. \d+ bytes of output cut; .* characters are shown \.\.\.\]\n/)
    expect(rec.output.length).toBeLessThanOrEqual(1200)
    expect(rec.output.length).toBeGreaterThan(800)
  })

  test('output just over the limit (nothing dropped in capture) is cut the same way', async () => {
    const rec = await runBash(`head -c 3000 /dev/zero | tr '\\0' b`, opts({ maxOutputChars: 1000 }))
    expect(rec.truncated).toBe(true)
    expect(rec.output).toMatch(/^b{500}\n\[\.\.\. 2000 bytes of output cut; the first and last 500 characters are shown \.\.\.\]\nb{500}$/)
  })

  test('output within the limit is whole', async () => {
    const rec = await runBash(`head -c 1000 /dev/zero | tr '\\0' c`, opts({ maxOutputChars: 1000 }))
    expect(rec.truncated).toBe(false)
    expect(rec.output).toBe('c'.repeat(1000))
  })

  test('seq keeps its first and last lines', async () => {
    const rec = await runBash('seq 1 100000', opts({ maxOutputChars: 1000 }))
    expect(rec.truncated).toBe(true)
    expect(rec.output.startsWith('1\n2\n3\n')).toBe(true)
    expect(rec.output.endsWith('\n99999\n100000')).toBe(true)
    expect(rec.output.length).toBeLessThanOrEqual(1200)
  })

  test('300 MB of output keeps memory bounded', async () => {
    const before = process.memoryUsage().rss
    const rec = await runBash('head -c 300000000 /dev/zero', opts({ maxOutputChars: 50000, timeoutMs: 300000 }))
    const after = process.memoryUsage().rss
    expect(rec.exitCode).toBe(0)
    expect(rec.truncated).toBe(true)
    expect(rec.output).toContain('bytes of output cut')
    expect(rec.output.length).toBeLessThanOrEqual(50200)
    expect(after - before).toBeLessThan(100 * 1024 * 1024)
  }, 300000)
})

describe('runBash: cleaning', () => {
  test('binary output becomes valid text without control characters', async () => {
    const rec = await runBash('head -c 5000 /dev/urandom', opts())
    expect(wellFormed(rec.output)).toBe(true)
    expect(CONTROL.test(rec.output.replace(/[\n\t]/g, ''))).toBe(false)
    expect(rec.output).not.toContain('\x1b')
  })

  test('binary output cut in the middle is valid text too', async () => {
    const rec = await runBash('head -c 300000 /dev/urandom', opts({ maxOutputChars: 2000 }))
    expect(rec.truncated).toBe(true)
    expect(wellFormed(rec.output)).toBe(true)
    expect(CONTROL.test(rec.output.replace(/[\n\t]/g, ''))).toBe(false)
    expect(rec.output.length).toBeLessThanOrEqual(2200)
  })

  test('NUL bytes are removed', async () => {
    expect((await runBash(`printf 'a\\0b\\0c'`, opts())).output).toBe('abc')
  })

  test('ANSI colours and other escapes are stripped', async () => {
    expect((await runBash(`printf '\\033[31mred\\033[0m'`, opts())).output).toBe('red')
    expect((await runBash(`printf '\\033]0;title\\007x\\033[1;32;40my\\033(Bz\\033[2K'`, opts())).output).toBe('xyz')
  })

  test('invalid UTF-8 becomes replacement characters', async () => {
    const rec = await runBash(`printf 'ok \\xff\\xfe \\xc3( end \\xe2\\x82\\xac'`, opts())
    expect(wellFormed(rec.output)).toBe(true)
    expect(rec.output.startsWith('ok ')).toBe(true)
    expect(rec.output).toContain('\uFFFD')
    expect(rec.output).toContain('( end \u20ac')
  })

  test('CRLF and carriage-return progress', async () => {
    expect((await runBash(`printf 'a\\r\\nb\\r\\n'`, opts())).output).toBe('a\nb')
    expect((await runBash(`printf '10%%\\r50%%\\r100%%\\ndone\\r\\n'`, opts())).output).toBe('100%\ndone')
    expect((await runBash(`printf 'tab\\there\\n'`, opts())).output).toBe('tab\there')
  })

  test('cleanText on its own', () => {
    expect(cleanText('\x1b[1mbold\x1b[0m \x9b31mc1\x07\x00\x7f')).toBe('bold c1')
    expect(cleanText('\x1bP1$r0m\x1b\\after')).toBe('after')
  })
})

describe('runBash: redaction across the cut', () => {
  const canary = 'CANARYK7Q2W9Z4X8M3P6R1T5V0B7N2J8H4L6F9D3'
  const redact = (t: string): string => t.split(canary).join('[REDACTED]')
  function leaks(output: string): string[] {
    const found: string[] = []
    for (let i = 0; i + 10 <= canary.length; i++) if (output.includes(canary.slice(i, i + 10))) found.push(canary.slice(i, i + 10))
    return found
  }
  const fill = (n: number, c: string): string => `head -c ${n} /dev/zero | tr '\\0' ${c}`
  const max = 1000 // 500 chars each side

  test('straddling the head cut, nothing dropped in capture', async () => {
    const rec = await runBash(`${fill(480, 'x')}; printf ${canary}; ${fill(3000, 'y')}`, opts({ maxOutputChars: max, redact }))
    expect(rec.truncated).toBe(true)
    expect(leaks(rec.output)).toEqual([])
    expect(rec.output.startsWith('x'.repeat(480))).toBe(true)
  })

  test('straddling the tail cut, nothing dropped in capture', async () => {
    const rec = await runBash(`${fill(3000, 'y')}; printf ${canary}; ${fill(480, 'z')}`, opts({ maxOutputChars: max, redact }))
    expect(rec.truncated).toBe(true)
    expect(leaks(rec.output)).toEqual([])
    expect(rec.output.endsWith('z'.repeat(480))).toBe(true)
  })

  test('straddling both cuts of a long output', async () => {
    const cmd = `${fill(480, 'x')}; printf ${canary}; ${fill(100000, 'y')}; printf ${canary}; ${fill(480, 'z')}`
    const rec = await runBash(cmd, opts({ maxOutputChars: max, redact }))
    expect(rec.truncated).toBe(true)
    expect(leaks(rec.output)).toEqual([])
    expect(rec.output.startsWith('x'.repeat(480))).toBe(true)
    expect(rec.output.endsWith('z'.repeat(480))).toBe(true)
  })

  test('straddling the capture byte boundaries, where escapes make the text short', async () => {
    const bytes = captureBytes(max, 512) // kept at each end
    const escapes = Math.floor((bytes - 20) / 4) // "\033[0m" is 4 bytes
    const pad = bytes - 20 - escapes * 4
    const esc = `printf '\\033[0m%.0s' $(seq ${escapes}); printf '%${pad}s' ''`
    // head: escapes then the canary across the head byte boundary
    // tail: the canary across the tail byte boundary, then escapes
    const cmd = `${esc}; printf ${canary}; ${fill(100000, 'y')}; printf ${canary}; ${esc}`
    const rec = await runBash(cmd, opts({ maxOutputChars: max, redact }))
    expect(rec.truncated).toBe(true)
    expect(leaks(rec.output)).toEqual([])
  })

  test('a secret in output that fits is redacted', async () => {
    const rec = await runBash(`echo "token ${canary} end"`, opts({ redact }))
    expect(rec.output).toBe('token [REDACTED] end')
  })
})

describe('OutputCapture', () => {
  test('keeps head, a rolling tail and the byte count', () => {
    const cap = new OutputCapture(10, 10)
    for (let i = 0; i < 1000; i++) cap.push(Buffer.from(String(i % 10)))
    cap.push(Buffer.from('ABCDEFGHIJKLMNOPQRSTUVWXYZ'))
    cap.push(Buffer.from('0123'))
    const snap = cap.snapshot()
    expect(snap.head.toString()).toBe('0123456789')
    expect(snap.tail.toString()).toBe('UVWXYZ0123')
    expect(snap.totalBytes).toBe(1030)
    expect(snap.complete).toBe(false)
  })

  test('small outputs are complete', () => {
    const cap = new OutputCapture(8, 8)
    cap.push(Buffer.from('hello '))
    cap.push(Buffer.from('world'))
    const snap = cap.snapshot()
    expect(snap.complete).toBe(true)
    expect(Buffer.concat([snap.head, snap.tail]).toString()).toBe('hello world')
  })
})

describe('runBash: a command started elsewhere (launch)', () => {
  /** A launcher as the sandbox's is: bash started by someone else, killed through kill(). */
  function launcher(calls: string[]): BashOptions['launch'] {
    return (command, o) => {
      calls.push(`start ${command} in ${o.cwd}`)
      const c = spawn('bash', ['-c', 'exec 2>&1; exec bash -c "$1"', 'bash', command], {
        cwd: o.cwd,
        env: o.env,
        stdio: ['ignore', 'pipe', 'ignore'],
        detached: true
      })
      const l: Started = {
        get pid() {
          return c.pid
        },
        stdout: c.stdout,
        on: (ev: string, fn: (...a: never[]) => void) => c.on(ev, fn as (...a: unknown[]) => void),
        kill: () => {
          calls.push('kill')
          if (c.pid) process.kill(-c.pid, 'SIGKILL')
        },
        forget: () => calls.push('forget')
      }
      return l
    }
  }

  test('output, exit code, environment and cwd go through the launcher; the record is as usual', async () => {
    const calls: string[] = []
    const env = { ...envWith(marker), FOO: 'a b=c' }
    const rec = await runBash('echo "$FOO"; echo err >&2; exit 4', opts({ env, launch: launcher(calls) }))
    expect(rec.output).toBe('a b=c\nerr')
    expect(rec.exitCode).toBe(4)
    expect(calls).toEqual([`start echo "$FOO"; echo err >&2; exit 4 in ${tmp}`, 'forget'])
  })

  test('a timeout kills through the launcher', async () => {
    const calls: string[] = []
    const slow = await runBash('echo go; sleep 30', opts({ launch: launcher(calls), timeoutMs: 1000 }))
    expect(slow.timedOut).toBe(true)
    expect(slow.output).toBe('go')
    expect(calls).toContain('kill')
  })
})
