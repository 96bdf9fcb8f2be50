// The privilege kinds a sandbox test runs in: this process's own (root, or a user with
// passwordless sudo), and, when this process is root and CI's non-root user with
// passwordless sudo exists (`bash-agent-ci`, made by .ci/run), the action launched as that
// user, as on GitHub's hosted runners.
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'

export const isRoot = process.platform === 'linux' && process.getuid?.() === 0
export const hasSudo = !isRoot && process.platform === 'linux' && spawnSync('sudo', ['-n', 'true']).status === 0

export interface Kind {
  name: string
  asUser?: { uid: number; gid: number }
}

/** The kinds this machine has; empty where the user sandbox cannot run (neither root nor sudo). */
export function sandboxKinds(): Kind[] {
  const kinds: Kind[] = isRoot || hasSudo ? [{ name: isRoot ? 'root' : 'this user with sudo' }] : []
  if (!isRoot) return kinds
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find(l => l.startsWith('bash-agent-ci:'))
  if (line && spawnSync('sudo', ['-n', '-u', 'bash-agent-ci', 'sudo', '-n', 'true']).status === 0) {
    const [, , uid, gid] = line.split(':')
    kinds.push({ name: 'bash-agent-ci with passwordless sudo', asUser: { uid: Number(uid), gid: Number(gid) } })
  }
  return kinds
}
