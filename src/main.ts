// One run, top to bottom: settings -> task -> gate -> agent -> report. Every
// ending once the run has started is reported (the model ending its turn, a
// limit, an API failure, a crash, cancellation); what this step cannot finish
// (it was killed), the post step finishes from the saved state (post.ts).
import { join } from 'node:path'
import { decide } from './trigger'
import { createLog } from './report/log'
import { renderProgress, runUrlOf, type ReportMeta } from './report/render'
import { RunControl } from './run/control'
import { GitHubSide } from './run/github-side'
import { readEvent, settingsOrFail } from './run/inputs'
import { Recorder } from './run/recorder'
import { startAgent } from './run/agent'
import { finish, skip } from './run/finish'
import { handBackChanges, readStart } from './run/handback'
import * as state from './run/state'
import { ThreadSession, answerStop } from './thread'
import { messageOf } from './util'

export async function main(): Promise<void> {
  const startedAt = Date.now()
  state.setIsPost()
  const out = createLog()
  const control = new RunControl(out)
  control.install()

  const settings = settingsOrFail(out)
  if (!settings) return
  const { eventName, payload } = readEvent()
  const decision = decide(eventName, payload, settings)
  if (!decision.run) return skip(out, decision.reason)
  const task = decision.task
  const github = new GitHubSide(settings, task, out)
  if (task.people.length) {
    const gate = await github.gate(settings)
    if (!gate.allowed) return skip(out, gate.reason)
    out.log(`Trigger from ${task.source}; ${gate.reason}.`)
  }

  const thread = new ThreadSession({
    task,
    repo: github.repo,
    token: github.token,
    secret: settings.apiKey || settings.authToken || '',
    getOctokit: () => github.getOctokit(),
    warn: out.warn
  })
  if (task.mode === 'stop') {
    await answerStop(thread.options, out.log).catch(e => out.warn(`Stop: ${messageOf(e)}`))
    return skip(out, 'a stop request runs no agent')
  }

  // From here on every ending is reported.
  control.begin(startedAt, settings.timeoutMinutes)
  const runId = process.env.GITHUB_RUN_ID ?? 'local'
  const transcript = join(process.env.RUNNER_TEMP || process.cwd(), `bash-agent-${runId}-${startedAt}.json`)
  state.setTranscriptPath(transcript)
  if (task.thread) state.setThread(task.thread)
  const rec = new Recorder({ path: transcript, model: settings.model, startedAt, sandbox: settings.sandbox }, out)
  const { maxTurns, timeoutMinutes, maxCostUsd } = settings
  let maxTokens = settings.maxTokens
  rec.onMaxTokens = n => (maxTokens = n)
  let threadMarker = thread.runningMarker() // what `/agent stop` finds
  const meta = (): ReportMeta => ({
    model: settings.model,
    runUrl: runUrlOf(),
    sandbox: rec.info.sandbox,
    limits: { maxTurns, timeoutMinutes, maxCostUsd, maxTokens },
    elapsedMs: Date.now() - startedAt,
    marker: threadMarker,
    note: rec.note
  })
  const progress = () => renderProgress(rec.live, meta(), rec.running?.command)
  rec.onChange = () => github.comment?.progress(progress())
  rec.saveSoon()
  if (!github.canComment) {
    out.log(
      task.thread
        ? 'No github-token: the report goes to the job summary only.'
        : 'No issue to answer in: the report goes to the job summary only.'
    )
  }

  const workspace = process.env.GITHUB_WORKSPACE || process.cwd()
  const repository = process.env.GITHUB_REPOSITORY
  const onFirstRequest = () => void github.start(progress)
  const base = readStart(workspace)
  const agent = startAgent({ settings, task, workspace, repository, control, rec, out, onFirstRequest, thread })
  let result = await agent.result
  if (control.crash) result = { ...result, exitReason: 'error', error: control.crash }
  control.finishing()
  await github.start(progress) // at once when the run ended before its first request was sent
  const changes = await agent.handBack(c =>
    handBackChanges({ ...c, settings, task, payload, workspace, base, control, github, out, runUrl: runUrlOf(), startedAt, thread })
  )
  rec.close(result)
  // The conversation saved for the next comment in the thread; who stopped a cancelled run.
  const work = await thread.branch.forHistory(changes, base, text => out.redactor.contains(text)) // thread-branch: the branch and its patch
  const ended = await thread.end(result, out.redactor.redactDeep(result.messages), {
    budgetMs: control.signalAt !== undefined ? 3000 : 20_000,
    dir: join(process.env.RUNNER_TEMP || process.cwd(), `bash-agent-history-${startedAt}`),
    model: settings.model,
    ...work
  })
  threadMarker = ended.marker
  const shown = { ...result, stoppedBy: ended.stoppedBy, messages: thread.ownMessages(result.messages) }
  await finish(shown, { ...meta(), changes }, { out, github, control, thread: task.thread, transcript })
}

/** For `npx @github/local-action run . src/main.ts .env`, which calls an exported run(). */
export const run = main
