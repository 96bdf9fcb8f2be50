// Git for the tests' own repositories: no system or global config of this machine, a fixed author.
import { execFileSync } from 'node:child_process'

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
