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
import { setFlagsFromString } from 'node:v8'
import { isPost, setCrash } from './run/state'
import { messageOf } from './util'

/**
 * The main step's V8 flag: --expose-gc, for the young-generation collections
 * of src/tools/bash.ts (a command printing 1 GiB: a peak of ~101 MB with them,
 * ~153 MB without, on Node 24; docs/performance.md). --liftoff-only, which
 * kept undici's WebAssembly HTTP parser from a second TurboFan copy on Node
 * 20, bought nothing measurable on Node 24 (100.7 MB either way) and is gone.
 *
 * When: after the main step's modules are evaluated and Node's own undici is
 * loaded (touching `Headers` loads it), not at start. A changed flag changes the
 * hash V8 checks its code caches against, so each Node-internal module loaded
 * after it is compiled from source: set at start, that cost ~50 ms of CPU, ~30 ms
 * of it before the first model request.
 */
function setV8Flags(): void {
  void (globalThis as { Headers?: unknown }).Headers
  try {
    setFlagsFromString('--expose-gc')
  } catch {
    // not fatal: V8 ignores flags it does not know
  }
}

async function run(): Promise<void> {
  try {
    if (isPost()) await (await import('./post')).post()
    else {
      const { main } = await import(/* webpackMode: "eager" */ './main')
      setV8Flags()
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
