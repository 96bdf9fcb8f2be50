// The command server's bundle entry (dist/server/index.js), run as root from
// the action's own folder:
//   node dist/server/index.js serve <key>   the command server of one run (protocol.ts)
//   node dist/server/index.js recover <ns> <dir> <rm> <key> <user> <userdel> <cgroup>
// `key` marks the process as the run's for the recovery helper.
import { commandServer } from './server'
import { recoverRun } from './server-recover'

const [what, ...args] = process.argv.slice(2)
if (what === 'serve') commandServer()
else if (what === 'recover') recoverRun(args)
else {
  process.stderr.write('usage: node dist/server/index.js serve <key> | recover <ns> <dir> <rm> <key> <user> <userdel> <cgroup>\n')
  process.exitCode = 2
}
