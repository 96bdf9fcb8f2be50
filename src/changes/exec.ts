// How the hand-back runs a program: as the contain helper's Sandbox.exec (the
// sandbox user, no shell) or, here, as the current user. The same type either way.
import { spawn } from 'node:child_process'
import { messageOf } from '../util'

export interface ExecResult {
  code: number | null
  stdout: Buffer
  stderr: string
}
export type Exec = (
  file: string,
  args: string[],
  opts?: { cwd?: string; input?: Buffer; env?: Record<string, string> }
) => Promise<ExecResult>

/** stderr kept per program run: enough for an error message. */
const STDERR_KEEP_CHARS = 8000

/** Runs a program as the current user, no shell; never throws (a spawn failure is code null with the reason in stderr). */
export const localExec: Exec = (file, args, opts = {}) =>
  new Promise(resolve => {
    const out: Buffer[] = []
    let err = ''
    let done = false
    const finish = (r: ExecResult) => {
      if (done) return
      done = true
      resolve(r)
    }
    let child
    try {
      child = spawn(file, args, { cwd: opts.cwd, env: opts.env, stdio: ['pipe', 'pipe', 'pipe'] })
    } catch (error) {
      return finish({ code: null, stdout: Buffer.alloc(0), stderr: messageOf(error) })
    }
    child.stdout.on('data', (c: Buffer) => out.push(c))
    child.stderr.on('data', (c: Buffer) => {
      if (err.length < STDERR_KEEP_CHARS) err += c.toString('utf8')
    })
    child.on('error', e => finish({ code: null, stdout: Buffer.concat(out), stderr: `${err}${e.message}` }))
    child.on('close', code => finish({ code, stdout: Buffer.concat(out), stderr: err.slice(0, STDERR_KEEP_CHARS) }))
    child.stdin.on('error', () => {}) // a program that exits without reading its input
    child.stdin.end(opts.input ?? Buffer.alloc(0))
  })
