// The sandbox user: who the commands run as in `user` mode. Each run has its
// own, so that runs cannot reach each other's files or processes and limits
// like RLIMIT_NPROC are per run. The command server (server.ts) creates it and
// refuses it when it could reach root; these are the rules it applies. It is
// removed when the run ends.
import { randomBytes } from 'node:crypto'

/** The run users' names: only a name of this form is ever removed. */
export const RUN_USER = /^bash-agent-[0-9a-f]{8}$/

/** A new run user's name. */
export const newRunUser = (): string => `bash-agent-${randomBytes(4).toString('hex')}`

/** Most processes (and threads) the sandbox user may have at once (RLIMIT_NPROC): a fork bomb stops here. */
export const MAX_PROCESSES = 4096

/** Groups that amount to root, or to reading what the runner reads: a sandbox user in one is refused. */
export const POWERFUL_GROUPS = [
  'root',
  'sudo',
  'admin',
  'wheel',
  'adm',
  'docker',
  'lxd',
  'libvirt',
  'disk',
  'shadow',
  'systemd-journal',
  'kvm'
]
