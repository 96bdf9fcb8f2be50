// The sandbox user: who the commands run as in `user` mode. The command
// server (server.ts) creates it on first use and refuses it when it could
// reach root; these are the rules it applies.

/** The default sandbox user. */
export const SANDBOX_USER = 'bash-agent'

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
