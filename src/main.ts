// One run, top to bottom: settings -> task -> gate -> agent -> report. Every
// ending once the run has started is reported (the model ending its turn, a
// limit, an API failure, a crash, cancellation); what this step cannot finish
// (it was killed), the post step finishes from the saved state (post.ts).
import { join } from 'node:path'
import type { Base, ChangesReport } from './changes'
import { createLog, type Log } from './report/log'
import { runUrlOf } from './report/render'
import { RunControl } from './run/control'
import { admit } from './run/admit'
import { openLive } from './run/live'
import { startAgent } from './run/agent'
import { finish, skip } from './run/finish'
import { handBackChanges } from './run/handback'
import { trustedGit } from './sandbox/trusted-git'
import * as state from './run/state'
import { ThreadSession, answerStop } from './thread'
import type { RunResult } from './types'
import { messageOf } from './util'

export async function main(): Promise<void> {
  const startedAt = Date.now()
  state.setIsPost()
  const out = createLog()
  const control = new RunControl(out)
  control.install()

  const admitted = await admit(out)
  if (!admitted) return
  const { settings, task, payload, github } = admitted

  const thread = new ThreadSession({
    task,
    repo: github.repo,
    token: github.token,
    // history-key, else the API key; empty: sealed without a secret (docs/providers.md, "The thread's history")
    secret: settings.historyKey ?? (settings.apiKey || settings.authToken || ''),
    getOctokit: () => github.getOctokit(),
    warn: out.warn,
    comments: admitted.comments
  })
  if (task.mode === 'stop') {
    await answerStop(thread.options, out.log).catch(e => out.warn(`Stop: ${messageOf(e)}`))
    return skip(out, 'a stop request runs no agent')
  }

  // From here on every ending is reported.
  control.begin(startedAt, settings.timeoutMinutes)
  const { rec, transcript, meta, progress, setMarker } = openLive(settings, task, startedAt, thread.runningMarker(), out)
  rec.onChange = () => github.comment?.progress(progress)
  rec.saveSoon()
  github.sayWhereTheReportGoes()

  const workspace = process.env.GITHUB_WORKSPACE || process.cwd()
  const repository = process.env.GITHUB_REPOSITORY
  const onFirstRequest = () => void github.start(progress)
  const git = trustedGit(workspace) // before the agent starts: every git the action runs is this one
  const agent = startAgent({ settings, task, workspace, git, repository, control, rec, out, onFirstRequest, thread })
  let result = await agent.result
  if (control.crash) result = { ...result, exitReason: 'error', error: control.crash }
  control.finishing()
  await github.start(progress) // at once when the run ended before its first request was sent
  const base = agent.base()
  const changes = await agent.handBack(
    c => handBackChanges({ ...c, settings, task, payload, workspace, base, control, github, out, runUrl: runUrlOf(), startedAt, thread }),
    // no sandbox was set up, so no command ran: no changes of the agent's (nothing to show, apply or commit)
    { kind: 'no-repository' } as ChangesReport
  )
  rec.close(result)
  const cancelled = control.signalAt !== undefined
  const ended = await endThread(thread, result, { changes, base, out, cancelled, startedAt, model: settings.model })
  setMarker(ended.marker)
  const shown = { ...result, stoppedBy: ended.stoppedBy, messages: thread.ownMessages(result.messages) }
  await finish(shown, { ...meta(), changes }, { out, github, control, thread: task.thread, transcript })
}

/** The conversation saved for the next comment in the thread; who stopped a cancelled run. */
async function endThread(
  thread: ThreadSession,
  result: RunResult,
  o: { changes: ChangesReport; base: Promise<Base | undefined>; out: Log; cancelled: boolean; startedAt: number; model: string }
): Promise<{ marker?: string; stoppedBy?: string }> {
  const work = await thread.branch.forHistory(o.changes, o.base, text => o.out.redactor.contains(text))
  return thread.end(result, o.out.redactor.redactDeep(result.messages), {
    budgetMs: o.cancelled ? 3000 : 20_000,
    dir: join(process.env.RUNNER_TEMP || process.cwd(), `bash-agent-history-${o.startedAt}`),
    model: o.model,
    ...work
  })
}

/** For `npx @github/local-action run . src/main.ts .env`, which calls an exported run(). */
export const run = main
