// The run as the report shows it while it goes: the recorder and its transcript
// (which the post step reads), and the report's header, whose limits and thread
// marker can change on the way (max_tokens raised, the conversation saved).
import { join } from 'node:path'
import type { Log } from '../report/log'
import { renderProgress, runUrlOf, type ReportMeta } from '../report/render'
import type { Settings } from '../settings'
import type { Task } from '../trigger'
import { Recorder } from './recorder'
import { pricedElsewhere, providerLabel } from '../agent/providers/config'
import * as state from './state'

export interface Live {
  rec: Recorder
  transcript: string
  /** the report's header as it stands */
  meta: () => ReportMeta
  /** the progress comment as it stands */
  progress: () => string
  /** the thread's marker in the report (what `/agent stop` finds; at the end, the saved conversation) */
  setMarker: (marker: string | undefined) => void
}

/** Opens the run's record; the post step learns where its transcript is. */
export function openLive(settings: Settings, task: Task, startedAt: number, marker: string | undefined, out: Log): Live {
  const runId = process.env.GITHUB_RUN_ID ?? 'local'
  const transcript = join(process.env.RUNNER_TEMP || process.cwd(), `bash-agent-${runId}-${startedAt}.json`)
  state.setTranscriptPath(transcript)
  if (task.thread) state.setThread(task.thread)
  const rec = new Recorder({ path: transcript, model: settings.model, startedAt, sandbox: settings.sandbox }, out)
  const { maxTurns, timeoutMinutes, maxCostUsd } = settings
  let maxTokens = settings.maxTokens
  rec.onMaxTokens = n => (maxTokens = n)
  // the footer names the provider unless it is the Claude API with a key (the common case, as before)
  const p = settings.provider
  const provider = p && (p.name !== 'anthropic' || p.federation) ? { label: providerLabel(p), otherPrices: pricedElsewhere(p) } : undefined
  const meta = (): ReportMeta => ({
    model: settings.model,
    runUrl: runUrlOf(),
    sandbox: rec.info.sandbox,
    network: rec.info.network,
    limits: { maxTurns, timeoutMinutes, maxCostUsd, maxTokens },
    elapsedMs: Date.now() - startedAt,
    marker,
    note: rec.note,
    ...(provider ? { provider } : {})
  })
  const progress = () => renderProgress(rec.live, meta(), rec.running?.command, rec.running?.note)
  return { rec, transcript, meta, progress, setMarker: m => (marker = m) }
}
