// Hidden markers in the action's own comments: how one run finds what an
// earlier run in the same thread left (its history, whether it still runs, who
// stopped it). They are HTML comments, so readers do not see them and
// stripHidden takes them out of any text the model gets. A marker is only
// believed in a comment written by the action's own identity (see github.ts);
// anyone else can type the same text. And only at the very start of it, right
// after MARKER: the rest of a report holds text the agent controls (its final
// text, its commands' output), where a prompt-injected model could write a
// marker naming any run of the repository for `/agent stop` to cancel.
import { MARKER } from '../trigger'

export interface RunMarker {
  runId: number
  attempt: number
  state: 'running' | 'done'
  /** the history artifact this run saved, and the sha256 (hex) of its bytes */
  history?: { artifact: string; sha256: string }
}

export interface StopMarker {
  runId: number
  by: string
}

const RUN =
  /^<!-- bash-agent-run run=(\d{1,20}) attempt=(\d{1,6}) state=(running|done)(?: artifact=([A-Za-z0-9._-]{1,200}) sha256=([0-9a-f]{64}))? -->(?:\n|$)/
const STOP = /^<!-- bash-agent-stop run=(\d{1,20}) by=([A-Za-z0-9-]{1,39}(?:\[bot\])?) -->(?:\n|$)/

/** The text right after MARKER and a newline at the start of a body, where the action puts its marker. */
const head = (body: string): string | undefined => (body.startsWith(`${MARKER}\n`) ? body.slice(MARKER.length + 1) : undefined)

export function runMarker(m: RunMarker): string {
  const history = m.history ? ` artifact=${m.history.artifact} sha256=${m.history.sha256}` : ''
  return `<!-- bash-agent-run run=${m.runId} attempt=${m.attempt} state=${m.state}${history} -->`
}

export function stopMarker(m: StopMarker): string {
  return `<!-- bash-agent-stop run=${m.runId} by=${m.by} -->`
}

/** The run marker at the start of a comment body (right after MARKER), if any. */
export function parseRunMarker(body: string): RunMarker | undefined {
  const m = RUN.exec(head(body) ?? '')
  if (!m) return undefined
  return {
    runId: Number(m[1]),
    attempt: Number(m[2]),
    state: m[3] as RunMarker['state'],
    ...(m[4] && m[5] ? { history: { artifact: m[4], sha256: m[5] } } : {})
  }
}

/** The stop marker at the start of a comment body (right after MARKER), if any. */
export function parseStopMarker(body: string): StopMarker | undefined {
  const m = STOP.exec(head(body) ?? '')
  return m ? { runId: Number(m[1]), by: m[2] } : undefined
}

/** A login is only ever put into a marker when it has GitHub's shape (it came from the event, but still). */
export const isLogin = (login: string): boolean => /^[A-Za-z0-9-]{1,39}(?:\[bot\])?$/.test(login)
