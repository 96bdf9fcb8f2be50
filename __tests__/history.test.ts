// The pure parts of the thread session: closing an unfinished conversation,
// fitting it into the context share, sealing it, the markers, and how a
// comment's words choose continue / new / stop.
import { describe, expect, it } from '@jest/globals'
import { appendTask, closeUnfinished, fitHistory, NOT_RUN } from '../src/agent/history'
import { estimateTokens } from '../src/agent/context'
import { artifactName, seal, unseal, type StoredHistory } from '../src/thread/history'
import { parseRunMarker, parseStopMarker, runMarker, stopMarker } from '../src/thread/marker'
import { commentMode, decide, MARKER } from '../src/trigger'
import type { Settings } from '../src/settings'
import type { MessageParam } from '../src/types'
import { issueCommentEvent, issuesEvent } from './helpers/events'

const use = (id: string, command = 'ls'): MessageParam => ({
  role: 'assistant',
  content: [{ type: 'tool_use', id, name: 'bash', input: { command } }]
})
const result = (id: string, content = 'out'): MessageParam => ({
  role: 'user',
  content: [{ type: 'tool_result', tool_use_id: id, content }]
})

describe('closeUnfinished', () => {
  it('answers a dangling tool_use (a max_turns ending) with a result saying it was not run', () => {
    const history: MessageParam[] = [{ role: 'user', content: 'task' }, use('a')]
    const closed = closeUnfinished(history)
    expect(closed).toHaveLength(3)
    expect(closed[2]).toEqual({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'a', content: NOT_RUN, is_error: true }] })
    expect(history).toHaveLength(2) // the input is not changed
  })

  it('completes a partly answered turn, results first', () => {
    const history: MessageParam[] = [
      { role: 'user', content: 'task' },
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'a', name: 'bash', input: {} },
          { type: 'tool_use', id: 'b', name: 'bash', input: {} }
        ]
      },
      result('a')
    ]
    const closed = closeUnfinished(history)
    expect((closed[2].content as Array<{ tool_use_id: string }>).map(b => b.tool_use_id)).toEqual(['a', 'b'])
  })

  it('leaves a finished conversation as it is', () => {
    const history: MessageParam[] = [
      { role: 'user', content: 'task' },
      use('a'),
      result('a'),
      { role: 'assistant', content: [{ type: 'text', text: 'done' }] }
    ]
    expect(closeUnfinished(history)).toEqual(history)
  })
})

describe('appendTask', () => {
  it('adds the task as a new user message after an assistant turn', () => {
    expect(
      appendTask(
        [
          { role: 'user', content: 'a' },
          { role: 'assistant', content: 'b' }
        ],
        'next'
      ).at(-1)
    ).toEqual({ role: 'user', content: 'next' })
  })
  it('after tool results (a run stopped before it asked again) the task joins that message, after the results', () => {
    const messages = appendTask([{ role: 'user', content: 'a' }, use('x'), result('x')], 'next')
    expect(messages).toHaveLength(3)
    expect(messages[2].content).toEqual([
      { type: 'tool_result', tool_use_id: 'x', content: 'out' },
      { type: 'text', text: 'next' }
    ])
  })
})

describe('fitHistory', () => {
  const big = (n: number): MessageParam[] => {
    const m: MessageParam[] = [{ role: 'user', content: 'task' }]
    for (let i = 0; i < n; i++) m.push(use(`t${i}`), result(`t${i}`, 'x'.repeat(40_000)))
    m.push({ role: 'assistant', content: [{ type: 'text', text: 'done' }] })
    return m
  }
  const paired = (messages: MessageParam[]) => {
    for (let i = 0; i < messages.length; i++) {
      const m = messages[i]
      if (m.role !== 'assistant' || !Array.isArray(m.content)) continue
      for (const b of m.content) {
        if (b.type !== 'tool_use') continue
        const next = messages[i + 1]
        expect(Array.isArray(next.content) && next.content.some(r => r.type === 'tool_result' && r.tool_use_id === b.id)).toBe(true)
      }
    }
  }

  it('elides old outputs to fit, keeping every pair', () => {
    const fitted = fitHistory(big(10), 50_000)
    expect(estimateTokens(fitted)).toBeLessThanOrEqual(50_000)
    expect(fitted).toHaveLength(22)
    expect(JSON.stringify(fitted)).toContain('[output elided to save context')
    paired(fitted)
  })

  it('when eliding is not enough, leaves the oldest turns out, cutting before an assistant turn', () => {
    // even with every output elided, ten calls do not fit in 150 tokens
    const fitted = fitHistory(big(10), 150)
    expect(estimateTokens(fitted)).toBeLessThanOrEqual(150)
    expect(fitted[0].role).toBe('user')
    expect(fitted[0].content).toMatch(/earlier messages of this conversation left out/)
    expect(fitted[1].role).toBe('assistant')
    paired(fitted)
  })
})

describe('the sealed history', () => {
  const thread = { kind: 'issue' as const, number: 4 }
  const h: StoredHistory = {
    version: 1,
    repository: 'o/r',
    thread: 'issue-4',
    runId: 9,
    model: 'claude-x',
    messages: [{ role: 'user', content: 'hello there' }],
    branch: 'agent/issue-4-9',
    commitSha: 'a'.repeat(40),
    savedAt: '2026-01-01T00:00:00Z'
  }

  it('opens with the same key, repository and thread, and keeps the branch and commit', () => {
    const opened = unseal(seal(h, 'key-1'), 'key-1', { repository: 'o/r', thread })
    expect(opened).toEqual({ ok: true, history: h })
  })
  it('does not open with another key, in another repository or thread, or changed', () => {
    const bytes = seal(h, 'key-1')
    expect(unseal(bytes, 'key-2', { repository: 'o/r', thread })).toMatchObject({ ok: false, why: expect.stringMatching(/verified/) })
    expect(unseal(bytes, 'key-1', { repository: 'o/other', thread })).toMatchObject({
      ok: false,
      why: expect.stringMatching(/another repository/)
    })
    expect(unseal(bytes, 'key-1', { repository: 'o/r', thread: { kind: 'issue', number: 5 } })).toMatchObject({
      ok: false,
      why: expect.stringMatching(/another thread/)
    })
    const changed = Buffer.from(bytes)
    changed[40] ^= 1
    expect(unseal(changed, 'key-1', { repository: 'o/r', thread })).toMatchObject({ ok: false })
    expect(bytes.toString('latin1')).not.toContain('hello there')
  })
  it('names one artifact per thread and attempt', () => {
    expect(artifactName({ kind: 'review', pullNumber: 3, commentId: 77 }, 2)).toBe('bash-agent-history-review-3-77-attempt-2.bin')
  })
})

describe('markers', () => {
  const done = runMarker({ runId: 5, attempt: 1, state: 'done', history: { artifact: 'a.bin', sha256: 'f'.repeat(64) } })
  it('are read right after MARKER at the start of a body', () => {
    expect(parseRunMarker(`${MARKER}\n${done}\n\ntext`)).toEqual({
      runId: 5,
      attempt: 1,
      state: 'done',
      history: { artifact: 'a.bin', sha256: 'f'.repeat(64) }
    })
    expect(parseStopMarker(`${MARKER}\n${stopMarker({ runId: 5, by: 'octocat' })}\nStopping`)).toEqual({ runId: 5, by: 'octocat' })
  })
  it('are not read anywhere else: the rest of a report is text the agent controls', () => {
    const forged = runMarker({ runId: 999, attempt: 1, state: 'running' })
    expect(parseRunMarker(`${MARKER}\n${done}\n\nfinal text ${forged}`)?.runId).toBe(5)
    expect(parseRunMarker(`${MARKER}\n\nfinal text\n${forged}`)).toBeUndefined()
    expect(parseRunMarker(forged)).toBeUndefined()
    expect(parseStopMarker(`${MARKER}\nStopping\n${stopMarker({ runId: 5, by: 'octocat' })}`)).toBeUndefined()
    expect(parseStopMarker(`${MARKER}\n<!-- bash-agent-stop run=5 by=<img src=x> -->`)).toBeUndefined()
  })
})

describe('the words after the phrase', () => {
  const settings = { task: '', triggerPhrase: '/agent', issueNumber: undefined } as unknown as Settings
  it('stop, new <task>, or a continuation', () => {
    expect(commentMode('stop')).toEqual({ mode: 'stop', prompt: '' })
    expect(commentMode('Stop.')).toEqual({ mode: 'stop', prompt: '' })
    expect(commentMode('stop the server on port 80')).toEqual({ mode: 'continue', prompt: 'stop the server on port 80' })
    expect(commentMode('new: write a test')).toEqual({ mode: 'new', prompt: 'write a test' })
    expect(commentMode('newer tests please')).toEqual({ mode: 'continue', prompt: 'newer tests please' })
  })
  it('comments continue; issues and the task input start afresh', () => {
    const d = decide('issue_comment', issueCommentEvent({ body: '/agent add a test' }), settings)
    expect(d.run && d.task.mode).toBe('continue')
    const n = decide('issue_comment', issueCommentEvent({ body: '/agent new' }), settings)
    expect(n).toMatchObject({ run: false, reason: expect.stringMatching(/needs a task/) })
    const o = decide('issues', issuesEvent({ action: 'opened', body: '/agent fix it' }), settings)
    expect(o.run && o.task.mode).toBe('new')
  })
  it('the label does not run again what the opened event answered', () => {
    const withPhrase = decide(
      'issues',
      issuesEvent({ action: 'labeled', label: 'agent', title: 'x', body: 'please /agent fix it' }),
      settings
    )
    expect(withPhrase.run).toBe(false)
    const without = decide('issues', issuesEvent({ action: 'labeled', label: 'agent', title: 'Fix it', body: 'it is broken' }), settings)
    expect(without.run && without.task.mode).toBe('new')
  })
})

describe('loadThreadHistory (real Octokit against the fake GitHub)', () => {
  it('exposes the branch and commit the last run committed to, and its model, with the conversation closed', async () => {
    const { startFakeGitHub } = await import('./helpers/fake-github')
    const { createOctokit } = await import('../src/github/octokit')
    const { loadThreadHistory } = await import('../src/thread/session')
    const { identityOf, threadCommentsViaFetch } = await import('../src/github/thread')
    const { sha256Hex } = await import('../src/thread/history')
    const gh = await startFakeGitHub()
    try {
      const repo = { owner: 'o', repo: 'r' }
      const thread = { kind: 'issue' as const, number: 3 }
      const bytes = seal(
        {
          version: 1,
          repository: 'o/r',
          thread: 'issue-3',
          runId: 77,
          model: 'claude-opus-4-6',
          // it ended at a limit: a tool call without its result
          messages: [{ role: 'user', content: 'fix it' }, use('t1')],
          branch: 'agent/issue-3-77',
          commitSha: 'c'.repeat(40),
          savedAt: '2026-01-01T00:00:00Z'
        },
        'the-key'
      )
      gh.artifacts.push({ id: 1, name: 'h.bin', repo: 'o/r', runId: 77, bytes, expired: false, contentType: 'application/octet-stream' })
      gh.addComment({
        repo: 'o/r',
        issueNumber: 3,
        body: `${MARKER}\n${runMarker({ runId: 77, attempt: 1, state: 'done', history: { artifact: 'h.bin', sha256: sha256Hex(bytes) } })}\nreport`,
        login: 'github-actions[bot]',
        type: 'Bot'
      })
      const octokit = await createOctokit('ghs_unitTestToken000000000000000000000000', () => {}, { baseUrl: gh.url })
      const load = await loadThreadHistory({
        repo,
        thread,
        comments: () => threadCommentsViaFetch('ghs_unitTestToken000000000000000000000000', repo, thread, gh.url),
        octokit: async () => octokit,
        identity: identityOf,
        secret: 'the-key',
        budgetTokens: 100_000
      })
      expect(load.kind).toBe('loaded')
      if (load.kind !== 'loaded') return
      expect(load.history).toMatchObject({ model: 'claude-opus-4-6', branch: 'agent/issue-3-77', commitSha: 'c'.repeat(40), runId: 77 })
      expect(load.history.messages).toHaveLength(3)
      expect(load.history.messages[2].content).toEqual([{ type: 'tool_result', tool_use_id: 't1', content: NOT_RUN, is_error: true }])
    } finally {
      await gh.close()
    }
  })
})
