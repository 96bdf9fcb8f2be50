// Entry of the main and the post step, told apart by saved state (as
// actions/checkout does).
import * as core from '@actions/core'

const isPost = core.getState('isPost') === 'true'

async function run(): Promise<void> {
  try {
    if (isPost) await (await import('./post')).post()
    else await (await import('./main')).main()
  } catch (error) {
    core.setFailed(`The action crashed: ${(error as Error)?.message ?? String(error)}`)
  }
  // Leftover handles (a background command's pipe, HTTP keep-alive) must not keep the step alive.
  process.exit()
}

void run()
