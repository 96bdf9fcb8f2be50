// The command server and the recovery helper as the source text `node -e`
// runs as root: never a file the agent could change. The set-up functions
// travel beside the server's own and reach it as its `lib` parameter.
import { commandServer } from './server'
import { recoverRun } from './server-recover'
import {
  buildCopy,
  cleanConfig,
  cleanFound,
  ensureUser,
  freshGit,
  overlayCopy,
  plainCopy,
  readOnlyView,
  stripNested,
  netBridge
} from './server-setup'
import { agentCgroup, carveMemory, gated, joinCgroup, oomKills, runMemory } from './server-memory'

const lib = {
  buildCopy,
  cleanConfig,
  cleanFound,
  ensureUser,
  freshGit,
  overlayCopy,
  plainCopy,
  readOnlyView,
  stripNested,
  netBridge,
  runMemory,
  carveMemory,
  agentCgroup,
  gated,
  joinCgroup,
  oomKills
}

export const SERVER_SOURCE = `(${commandServer.toString()})({\n${Object.entries(lib)
  .map(([name, f]) => `${name}: ${f.toString()}`)
  .join(',\n')}\n})`

export const RECOVER_SOURCE = `(${recoverRun.toString()})()`
