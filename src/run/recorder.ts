// The live record of a run: what the loop reported so far, saved as a
// transcript at most once a second while the run goes on (the post step
// finishes a report from it), and once more, finished, at the end. After that
// final save it is closed: a late event of a loop that did not stop in time
// can no longer rewrite it.
import type { AgentEvent } from '../agent/loop'
import type { Outcome } from '../report/render'
import type { Log } from '../report/log'
import type { NetworkReport } from '../network/launch'
import { writeTranscript, type Transcript } from '../transcript'
import { emptyUsage, stoppedRecord, type MessageParam, type RunResult } from '../types'
import { messageOf } from '../util'

/** The transcript is written at most this often while the run goes on. */
const SAVE_INTERVAL_MS = 1000

export interface RecorderInfo {
  path: string
  model: string
  startedAt: number
  sandbox: string
  /** hosts reached and refused (known at release), or that the network was not contained */
  network?: NetworkReport
}

export class Recorder {
  readonly live: Outcome = { finalText: '', exitReason: 'running', turns: 0, commands: [], usage: emptyUsage(), costUsd: null }
  /** the conversation, owned by the loop (it appends to this array) */
  readonly messages: MessageParam[] = []
  system = ''
  /** one line about the thread's conversation (continued, or why it started afresh) */
  note: string | undefined
  /** the command running now, if any */
  running: { command: string; since: number; note?: string } | undefined
  /** called after every event (the progress comment listens) */
  onChange: () => void = () => {}
  /** called when the loop raised max_tokens after a cut tool call (the report's limits follow) */
  onMaxTokens: (maxTokens: number) => void = () => {}
  private lastSave = 0
  private timer: NodeJS.Timeout | undefined
  private closed = false

  constructor(
    readonly info: RecorderInfo,
    private readonly out: Log
  ) {}

  /** The run as it stands, with a command still running shown as stopped. */
  snapshot(why: string): RunResult {
    const { running } = this
    const commands = running
      ? [...this.live.commands, stoppedRecord(running.command, Date.now() - running.since, why)]
      : [...this.live.commands]
    return { ...this.live, exitReason: 'error', commands, messages: this.messages }
  }

  readonly onEvent = (e: AgentEvent): void => {
    if (this.closed) return
    try {
      this.apply(e)
      this.onChange()
      this.saveSoon()
    } catch (error) {
      // Showing progress must never stop the agent.
      this.out.warn(`Could not show progress: ${messageOf(error)}`)
    }
  }

  private apply(e: AgentEvent): void {
    const { live, out } = this
    if (e.type === 'response') {
      live.turns = e.turn
      live.usage = e.usage
      live.costUsd = e.costUsd
      if (e.text) live.finalText = e.text
      out.logAgent(`Turn ${e.turn}: ${e.stopReason}${e.text ? ` — ${e.text.slice(0, 200)}` : ''}`)
    } else if (e.type === 'command-start') {
      this.running = { command: e.command, since: Date.now(), ...(e.note ? { note: e.note } : {}) }
      if (e.note) out.logAgent(`💬 ${e.note}`)
      out.logAgent(`$ ${e.command}`)
    } else if (e.type === 'command-end') {
      this.running = undefined
      live.commands.push(e.record)
      const r = e.record
      out.log(
        `  -> ${r.blocked ? 'refused' : r.timedOut ? 'timed out' : r.aborted ? 'stopped' : `exit ${r.exitCode}`}${r.outOfMemory ? ` (${r.outOfMemory})` : ''} in ${r.durationMs} ms`
      )
    } else if (e.type === 'retry-longer') {
      this.onMaxTokens(e.maxTokens)
      out.log(
        `Turn ${e.turn}: the reply stopped at max_tokens inside a tool call; asking again with max_tokens ${e.maxTokens} (the cut call was not run).`
      )
    } else if (e.type === 'correction') {
      out.logAgent(`Turn ${e.turn}: the answer does not match output-schema; asking once more:\n${e.errors.join('\n')}`)
    } else if (e.type === 'format-refused') {
      out.warn(
        `Structured outputs are not supported by this model endpoint (it refused output_config.format: ${e.detail}); asked again without it. The answer is still checked against output-schema.`
      )
    } else {
      out.warn(e.message)
    }
  }

  /** Saves the live run now, or soon (at most once a second, never missing the latest state). */
  saveSoon(): void {
    if (this.closed || this.timer) return
    const wait = this.lastSave + SAVE_INTERVAL_MS - Date.now()
    if (wait <= 0) return this.write(this.live, false)
    this.timer = setTimeout(() => {
      this.timer = undefined
      if (!this.closed) this.write(this.live, false)
    }, wait)
    this.timer.unref()
  }

  /** The last save: the finished run. Nothing is written after it. */
  close(result: Outcome): void {
    if (this.closed) return
    clearTimeout(this.timer)
    this.write(result, true)
    this.closed = true
  }

  private write(o: Outcome, finished: boolean): void {
    this.lastSave = Date.now()
    const { info, running } = this
    try {
      const t: Transcript = {
        version: 1,
        model: info.model,
        system: this.system,
        startedAt: new Date(info.startedAt).toISOString(),
        sandbox: info.sandbox,
        finished,
        messages: this.messages,
        ...o,
        ...(!finished && running ? { running: { command: running.command, startedAt: new Date(running.since).toISOString() } } : {})
      }
      writeTranscript(info.path, t, v => this.out.redactor.redactDeep(v))
    } catch (e) {
      this.out.warn(`Could not write the transcript: ${messageOf(e)}`)
    }
  }
}
