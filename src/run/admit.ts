// Whether this event starts a run: valid settings, a trigger the action answers,
// and someone allowed to start it. Anything else ends the step here, said in the log.
import { decide, type Task } from '../trigger'
import type { Log } from '../report/log'
import type { Settings } from '../settings'
import { skip } from './finish'
import { GitHubSide } from '../github/side'
import { readThreadComments, type ThreadComment } from '../github/thread'
import { hasSession } from '../thread'
import { readEvent, schemaOrFail, settingsOrFail } from './inputs'

export interface Admitted {
  settings: Settings
  task: Task
  payload: unknown
  github: GitHubSide
  /** the thread's comments, being read */
  comments?: Promise<ThreadComment[]>
}

/** The run to make, or undefined when the step was failed (bad settings) or skipped (said why). */
export async function admit(out: Log): Promise<Admitted | undefined> {
  const settings = settingsOrFail(out)
  if (!settings) return undefined
  if (settings.outputSchema && !(await schemaOrFail(settings.outputSchema, out))) return undefined
  const { eventName, payload } = readEvent()
  const decision = decide(eventName, payload, settings)
  if (!decision.run) {
    skip(out, decision.reason)
    return undefined
  }
  const { task } = decision
  const github = new GitHubSide(settings, task, out)
  const comments = prefetchComments(task, github)
  if (task.people.length) {
    const gate = await github.gate(settings)
    if (!gate.allowed) {
      skip(out, gate.reason)
      return undefined
    }
    out.log(`Trigger from ${task.source}; ${gate.reason}.`)
  }
  return { settings, task, payload, github, comments }
}

/** The thread's comments (where its last run is found), read beside the permission read when the run may continue one. */
function prefetchComments(task: Task, github: GitHubSide): Promise<ThreadComment[]> | undefined {
  if (task.mode !== 'continue' || !hasSession(task, github.repo, github.token, process.env)) return undefined
  const read = readThreadComments({ token: github.token, getOctokit: () => github.getOctokit() }, github.repo!, task.thread!)
  read.catch(() => {}) // the session awaits it and says what failed
  return read
}
