// The run's environment while it is still being set up: the first command
// waits for it. Set-up that fails ends the run (this is the one `run` that
// throws: there is nowhere for the command to go).
import { messageOf } from '../util'
import type { CommandRecord } from '../types'
import type { CommandOptions, Environment } from './types'

export function afterSetUp<E extends Environment>(
  prepared: Promise<E>,
  o: {
    /** how to wait for `prepared`: stops at an abort */
    wait: (p: Promise<E>, signal: AbortSignal | undefined) => Promise<E>
    /** the first time it is ready */
    onReady: (env: E) => void
  }
): Pick<Environment, 'run'> {
  let ready: E | undefined
  return {
    async run(command: string, opts: CommandOptions): Promise<CommandRecord> {
      if (!ready) {
        try {
          ready = await o.wait(prepared, opts.signal)
        } catch (error) {
          if (opts.signal?.aborted) throw error
          throw new Error(`the sandbox for commands could not be set up: ${messageOf(error)}`)
        }
        o.onReady(ready)
      }
      return ready.run(command, opts)
    }
  }
}
