// How the command server (root) runs its helper programs: a quiet environment,
// output collected, never a throw unless asked for (`must`).
import { spawn, type ChildProcess } from 'node:child_process'
import type { ExecResult } from './protocol'

export const SYSTEM_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
export const quietEnv: Record<string, string> = {
  PATH: SYSTEM_PATH,
  LANG: 'C',
  LC_ALL: 'C',
  HOME: '/',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null'
}

export interface RunOptions {
  cwd?: string
  env?: Record<string, string>
  input?: Buffer
  ids?: { uid: number; gid: number }
  /** stdout goes here as it comes instead of into the result */
  onStdout?: (d: Buffer) => void
}

/** Run a program (as root, or as `ids`), collecting its output; never throws. */
export function run(file: string, args: string[], o: RunOptions = {}): Promise<ExecResult> {
  return new Promise(resolve => {
    const chunks: Buffer[] = []
    let stderr = ''
    let child: ChildProcess
    try {
      child = spawn(file, args, {
        cwd: o.cwd ?? '/',
        env: o.env ?? quietEnv,
        stdio: [o.input ? 'pipe' : 'ignore', 'pipe', 'pipe'],
        ...(o.ids ?? {})
      })
    } catch (e) {
      resolve({ code: null, stdout: Buffer.alloc(0), stderr: (e as Error).message })
      return
    }
    child.stdout?.on('data', (d: Buffer) => (o.onStdout ? o.onStdout(d) : chunks.push(d)))
    child.stderr?.on('data', (d: Buffer) => {
      if (stderr.length < 20_000) stderr += d.toString()
    })
    child.on('error', e => resolve({ code: null, stdout: Buffer.concat(chunks), stderr: e.message }))
    child.on('close', code => resolve({ code, stdout: Buffer.concat(chunks), stderr }))
    if (o.input && child.stdin) {
      child.stdin.on('error', () => undefined)
      child.stdin.end(o.input)
    }
  })
}

/** The first line of what went wrong: stderr, else the exit status. */
export const firstLine = (r: { code: number | null; stderr: string }): string => (r.stderr.trim() || `exit ${r.code}`).split('\n')[0]

/** `run`, throwing `what: <first line of stderr>` unless it exits 0; its stdout. */
export async function must(what: string, file: string, args: string[], o: RunOptions = {}): Promise<Buffer> {
  const r = await run(file, args, o)
  if (r.code !== 0) throw new Error(`${what}: ${firstLine(r)}`)
  return r.stdout
}
