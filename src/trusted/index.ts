// The one bundle that runs as root (dist/trusted/index.js), from the action's
// own folder once it and the node running it passed the trusted-file check
// (src/sandbox/privilege.ts). Everything it runs is in this folder, importing
// only `node:` built-ins (__tests__/trusted.test.ts keeps that true). The run's
// proxy is not here: it never runs as root (dist/proxy/, src/network/).
//   serve <key>      the command server of one run (protocol.ts); `key` marks it as the run's
//   recover <ns> <dir> <rm> <key> <uid> <cgroup>   what is left of a run, removed
import { commandServer } from './server'
import { recoverRun } from './recover'

const [what, ...args] = process.argv.slice(2)
if (what === 'serve') commandServer()
else if (what === 'recover') recoverRun(args)
else {
  process.stderr.write('usage: node dist/trusted/index.js serve <key> | recover <ns> <dir> <rm> <key> <uid> <cgroup>\n')
  process.exitCode = 2
}
