// The hand-back one level below the action, with real processes: a workspace
// checkout, the run's sandbox (its copy and command server in user mode, the
// workspace itself in none), a command that makes the agent's changes, then
// the hand-back as the action drives it (patch streamed from the sandbox,
// checked, applied). For changes too big to make a whole action run worth it
// (hand-back tests, npm run bench).
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { handBack, localExec, readBase, type ChangesReport, type ChangesMode } from '../../src/changes'
import { trustedGit } from '../../src/sandbox/trusted-git'
import { copySource } from '../../src/run/handback'
import { prepareSandbox } from '../../src/sandbox'
import { Redactor } from '../../src/report/redact'
import { gitEnv } from './git'

export interface Below {
  /** the sandbox mode in force (user falls back to none where it cannot be had) */
  mode: string
  report: ChangesReport
  /** how long the hand-back took (ms), from the patch's computing to the workspace written */
  ms: number
  workspace: string
  log: string[]
  /** removes the workspace */
  cleanup(): void
}

/** A checkout with one commit; `command` (bash) makes the agent's changes in the sandbox; then the hand-back. */
export async function handBackBelow(o: {
  sandbox: 'user' | 'none'
  command: string
  changes?: ChangesMode
  secrets?: string[]
}): Promise<Below> {
  const root = mkdtempSync(join(tmpdir(), 'handback-below-'))
  const ws = join(root, 'ws')
  const env = gitEnv('Octo Cat', 'octocat@example.com')
  execFileSync('git', ['init', '-q', '-b', 'main', ws], { env })
  writeFileSync(join(ws, 'README.md'), '# Hello\n')
  execFileSync('git', ['add', '-A'], { cwd: ws, env })
  execFileSync('git', ['-c', 'commit.gpgsign=false', 'commit', '-q', '-m', 'base'], { cwd: ws, env })
  const log: string[] = []
  const redactor = new Redactor(o.secrets ?? [])
  const sb = await prepareSandbox({ mode: o.sandbox, workspace: ws, env: process.env, redactor, log: m => log.push(m) })
  try {
    const made =
      sb.mode === 'user'
        ? await sb.exec('bash', ['-c', o.command], { cwd: sb.workdir, env: sb.env })
        : await localExec('bash', ['-c', o.command], { cwd: ws, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } })
    if (made.code !== 0) throw new Error(`the command failed (${made.code}): ${made.stderr.slice(0, 500)}`)
    await sb.stopAll()
    const t0 = performance.now()
    const report = await handBack({
      mode: o.changes ?? 'apply',
      base: await readBase(ws, localExec),
      workspace: ws,
      source: sb.mode === 'user' ? copySource(sb, trustedGit(ws)) : { workdir: ws, exec: localExec, inPlace: true },
      containsSecret: text => redactor.contains(text),
      patchDir: root,
      patchName: 'run.patch',
      log: m => log.push(m)
    })
    const ms = performance.now() - t0
    return { mode: sb.mode, report, ms, workspace: ws, log, cleanup: () => rmSync(root, { recursive: true, force: true }) }
  } finally {
    const problems = await sb.release()
    if (problems.length) log.push(`release: ${problems.join('; ')}`)
  }
}
