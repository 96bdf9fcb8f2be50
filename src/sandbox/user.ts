// The sandbox user: who the commands run as in `user` mode. Each run has its
// own uid, so that runs cannot reach each other's files, processes or keys and
// limits like RLIMIT_NPROC are per run: a random one of RUN_UIDS, never used
// on the machine before (the command server refuses it otherwise, setup.ts
// claimIds). No account is made: the commands see its name in a passwd file of
// the run's own.
import { randomBytes, randomInt } from 'node:crypto'
import { RUN_UIDS } from '../trusted/protocol'

/** A new run user: its name (what the commands and the report call it) and uid (its gid the same). */
export const newRunUser = (): { name: string; uid: number } => ({
  name: `bash-agent-${randomBytes(4).toString('hex')}`,
  uid: randomInt(RUN_UIDS.from, RUN_UIDS.to)
})

/** Most processes (and threads) the sandbox user may have at once (RLIMIT_NPROC): a fork bomb stops here. */
export const MAX_PROCESSES = 4096
