// Git for the tests' own repositories: no system or global config of this machine, a fixed author.
import { execFileSync } from 'node:child_process'
import { copyFileSync, mkdirSync, readdirSync } from 'node:fs'
import { join } from 'node:path'

export function gitEnv(name = 'a', email = 'a@example.com'): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: '/nonexistent',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_AUTHOR_NAME: name,
    GIT_AUTHOR_EMAIL: email,
    GIT_COMMITTER_NAME: name,
    GIT_COMMITTER_EMAIL: email
  }
}

/** `git args` in `cwd`; its output, trimmed. */
export const git = (cwd: string, args: string[]): string => execFileSync('git', args, { cwd, env: gitEnv() }).toString().trim()

/**
 * A copy of a small tree (a template repository): directories and regular files only. A test's
 * repositories are made once and copied, because every git run forks the whole jest worker.
 */
export function copyTree(from: string, to: string): void {
  mkdirSync(to, { recursive: true })
  for (const e of readdirSync(from, { withFileTypes: true })) {
    if (e.isDirectory()) copyTree(join(from, e.name), join(to, e.name))
    else if (e.isFile()) copyFileSync(join(from, e.name), join(to, e.name))
    else throw new Error(`copyTree: ${join(from, e.name)} is neither a file nor a directory`)
  }
}

/** `git init` (no template: no sample hooks to copy), add everything, commit, and the commit's sha: one shell, one fork. */
export function commitAll(dir: string, env: Record<string, string>, after = ''): string {
  const script = `git init -q --template= -b main && git add -A && git -c commit.gpgsign=false commit -q -m "Initial commit" && ${after}git rev-parse HEAD`
  return execFileSync('sh', ['-c', script], { cwd: dir, env }).toString('utf8').trim()
}
