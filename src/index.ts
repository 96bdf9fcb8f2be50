// Entry of the main and the post step, told apart by saved state (as
// actions/checkout does).
//
// Start-up (the first model request well under half a second after the
// process starts):
// - The main step is imported "eagerly": webpack keeps it in this file instead
//   of a chunk, yet it is still evaluated inside the try below (a bad event file
//   or a throwing module is reported like any crash). `ncc build --minify`
//   minifies this file only, never the chunks of dynamic imports, so this is
//   what makes the SDK, @actions/core and the bundled undici (~2.5 MB
//   unminified) load minified: ~30 ms sooner to the first request once
//   Octokit is out of that path (npm run bench).
// - The post step stays a lazy chunk, loaded only by the post step.
// - Main and post are told apart by the saved state (run/state.ts); the
//   redactor is imported here only to report a crash.
// What main.ts does not need before the first model request (Octokit, the
// comment machinery) is for it to import lazily.
import { isPost, setCrash } from './run/state'
import { messageOf } from './util'

// No V8 flag is set here. --expose-gc, which the young-generation collections of src/tools/bash.ts
// need, is set by them at the first megabyte of a command's output (most runs never get there): set
// here as well, it bought nothing measurable on Node 24 (1 GiB printed: 103.1 and 104.8 MB with
// it, 105.1 and 102.9 MB without; a run of `true` 96.4 MB either way; docs/performance.md), and a
// changed flag makes Node compile its own modules loaded after it from source. --liftoff-only went
// before it (it paid on Node 20 only).

async function run(): Promise<void> {
  try {
    if (isPost()) await (await import('./post')).post()
    else {
      const { main } = await import(/* webpackMode: "eager" */ './main')
      await main()
    }
  } catch (error) {
    const core = await import('./actions-core')
    const { Redactor, secretsFromEnv } = await import('./report/redact')
    // Never silent, never a secret: the message is redacted with every secret the environment holds.
    const redactor = new Redactor(secretsFromEnv(process.env))
    const message = redactor.redact(`The action crashed: ${messageOf(error)}`)
    if (!isPost()) {
      core.setOutput('exit-reason', 'error')
      // the post step then finishes the report comment, if one was started
      setCrash(message)
    }
    core.setFailed(message)
  }
  // Leftover handles (a background command's pipe, HTTP keep-alive) must not keep the step alive.
  process.exit()
}

void run()
