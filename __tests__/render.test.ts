// The report as markdown: within GitHub's 65,536-character limit whatever the run
// did (the log trimmed first, the final text last), command output kept inside
// a code block it cannot close, nobody pinged, and a footer with the numbers.
import { describe, expect, it } from '@jest/globals'
import {
  COMMENT_LIMIT,
  footer,
  renderCommand,
  renderFinal,
  renderProgress,
  renderSummary,
  SUMMARY_LIMIT,
  toolProblems,
  type Outcome,
  type ReportMeta
} from '../src/report/render'
import { MARKER } from '../src/trigger'
import type { CommandRecord, ExitReason } from '../src/types'

const meta = (over: Partial<ReportMeta> = {}): ReportMeta => ({
  model: 'claude-sonnet-4-6',
  runUrl: 'https://github.com/o/r/actions/runs/1234',
  sandbox: 'none',
  limits: { maxTurns: 50, timeoutMinutes: 30, maxTokens: 8000 },
  elapsedMs: 12_345,
  ...over
})

const rec = (command: string, output: string, over: Partial<CommandRecord> = {}): CommandRecord => ({
  command,
  exitCode: 0,
  durationMs: 1200,
  output,
  truncated: false,
  timedOut: false,
  blocked: false,
  ...over
})

const outcome = (over: Partial<Outcome> = {}): Outcome => ({
  finalText: 'All done.',
  exitReason: 'end_turn',
  turns: 3,
  commands: [],
  usage: { inputTokens: 12_345, outputTokens: 678, cacheReadTokens: 0, cacheCreationTokens: 0 },
  costUsd: 0.0421,
  ...over
})

/** GitHub counts characters (code points); a JS length (UTF-16 units) is never less. */
const codePoints = (s: string): number => [...s].length

interface Block {
  fence: string
  info: string
  lines: string[]
  /** line index of the opening fence */
  start: number
  /** line index of the closing fence (lines.length when never closed) */
  end: number
}

/** Fenced code blocks as CommonMark reads them (backtick and tilde fences, up to 3 spaces of indent). */
function fencedBlocks(markdown: string): Block[] {
  const lines = markdown.split('\n')
  const blocks: Block[] = []
  let open: Block | undefined
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]
    if (!open) {
      const m = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(line)
      if (m && !(m[1][0] === '`' && m[2].includes('`'))) open = { fence: m[1], info: m[2].trim(), lines: [], start: i, end: lines.length }
      continue
    }
    const close = new RegExp(`^ {0,3}${open.fence[0] === '`' ? '`' : '~'}{${open.fence.length},}[ \\t]*$`)
    if (close.test(line)) {
      open.end = i
      blocks.push(open)
      open = undefined
    } else open.lines.push(line)
  }
  if (open) blocks.push(open)
  return blocks
}

/** Whether `needle` (its first occurrence) lies outside every fenced code block. */
function outsideCode(markdown: string, needle: string): boolean {
  const at = markdown.indexOf(needle)
  if (at < 0) throw new Error(`not found: ${needle}`)
  const line = markdown.slice(0, at).split('\n').length - 1
  return !fencedBlocks(markdown).some(b => line > b.start && line <= b.end)
}

describe('the 65,536-character limit', () => {
  const output5k = (i: number) => `line of command ${i}: ${'x'.repeat(100)}\n`.repeat(45).slice(0, 5000)
  const many = Array.from({ length: 150 }, (_, i) => rec(`echo step ${i}`, output5k(i), { exitCode: i % 7 === 0 ? 1 : 0 }))

  it('150 commands of 5 KB output each: the log is trimmed with a line saying how many were left out; the final text is whole', () => {
    const finalText = 'Here is what I found.\n\n' + 'The build fails because of a missing semicolon. '.repeat(40)
    const body = renderFinal(outcome({ commands: many, finalText, turns: 151 }), meta())
    expect(body.length).toBeLessThanOrEqual(COMMENT_LIMIT)
    expect(codePoints(body)).toBeLessThanOrEqual(COMMENT_LIMIT)
    expect(body.startsWith(MARKER)).toBe(true)
    expect(body).toContain(finalText.trim())
    const left = /(\d+) commands left out here to fit; the job summary has them all/.exec(body)
    expect(left).not.toBeNull()
    const shown = [...body.matchAll(/\$ echo step (\d+)\n/g)].map(m => Number(m[1]))
    expect(shown.length + Number(left?.[1])).toBe(150)
    // the first and the last commands show; the gap is in between
    expect(shown).toContain(0)
    expect(shown).toContain(149)
    expect(body).toContain('<sub>model claude-sonnet-4-6')
    // the room is used: the log is not trimmed to almost nothing
    expect(body.length).toBeGreaterThan(COMMENT_LIMIT - 8000)
  })

  it('a 100 KB final text with 150 commands: the log goes first, then the final text is cut, within the limit', () => {
    const finalText = 'word '.repeat(20_000)
    const body = renderFinal(outcome({ commands: many, finalText }), meta())
    expect(codePoints(body)).toBeLessThanOrEqual(COMMENT_LIMIT)
    expect(body.length).toBeLessThanOrEqual(COMMENT_LIMIT)
    expect(body).toMatch(/characters of the final text cut to fit/)
    expect(body).toMatch(/150 commands left out here to fit|\d+ commands left out here to fit/)
    expect(body.startsWith(MARKER)).toBe(true)
    expect(body).toContain('word word word')
    expect(body).toContain('<sub>model claude-sonnet-4-6')
  })

  it('a 100 KB final text alone is cut to fit, keeping the footer', () => {
    const body = renderFinal(outcome({ finalText: 'y'.repeat(100_000) }), meta())
    expect(body.length).toBeLessThanOrEqual(COMMENT_LIMIT)
    expect(body).toMatch(/characters of the final text cut to fit/)
    expect(body).toContain('<sub>model')
    expect(body.length).toBeGreaterThan(COMMENT_LIMIT - 4000)
  })

  it('astral characters (4 bytes, 2 UTF-16 units) in the text and the output still fit, and no surrogate is split', () => {
    const emoji = '🚀'.repeat(60_000)
    const body = renderFinal(
      outcome({ finalText: emoji, commands: many.slice(0, 20).map(c => ({ ...c, output: '😀'.repeat(5000) })) }),
      meta()
    )
    expect(body.length).toBeLessThanOrEqual(COMMENT_LIMIT)
    expect(body).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/)
  })

  it('mentions in 150 outputs (each @ gains a zero-width space) do not push it over', () => {
    const cmds = Array.from({ length: 150 }, (_, i) => rec(`echo ${i}`, '@a '.repeat(1700)))
    const body = renderFinal(outcome({ commands: cmds, finalText: '@b '.repeat(30_000) }), meta())
    expect(body.length).toBeLessThanOrEqual(COMMENT_LIMIT)
  })

  it('a huge command (a heredoc writing a file) is trimmed in the comment, not dropped with everything after it', () => {
    const heredoc = `cat > big.txt <<'EOF'\n${'data line\n'.repeat(8000)}EOF`
    const cmds = [rec(heredoc, '(no output)'), rec('wc -l big.txt', '8000 big.txt')]
    const body = renderFinal(outcome({ commands: cmds }), meta())
    expect(body.length).toBeLessThanOrEqual(COMMENT_LIMIT)
    expect(body).toContain("$ cat > big.txt <<'EOF'")
    expect(body).toContain('$ wc -l big.txt\n8000 big.txt')
    expect(body).not.toMatch(/left out here/)
    // the job summary keeps it whole
    expect(renderSummary(outcome({ commands: cmds }), meta())).toContain(heredoc)
  })

  it('the job summary holds every command and every output in full', () => {
    const summary = renderSummary(outcome({ commands: many }), meta())
    expect(summary.length).toBeLessThanOrEqual(SUMMARY_LIMIT)
    for (let i = 0; i < 150; i++) expect(summary).toContain(`$ echo step ${i}\n${output5k(i)}`)
    expect(summary).not.toMatch(/left out/)
  })

  it('the progress comment stays within the limit too', () => {
    const cmds = Array.from({ length: 3000 }, (_, i) => rec(`echo ${'z'.repeat(200)} ${i}`, 'x'))
    expect(renderProgress(outcome({ commands: cmds, exitReason: 'running' }), meta(), 'sleep 1').length).toBeLessThanOrEqual(COMMENT_LIMIT)
  })
})

describe('command output is data', () => {
  const evil = ['before', '```', '# Injected heading outside the block?', '````', '~~~', '   ```', '```````````', 'after'].join('\n')

  it('output with backtick runs cannot close its fence: everything stays in the one code block', () => {
    const body = renderFinal(outcome({ commands: [rec('cat evil.md', evil), rec('echo next', 'next')] }), meta())
    const blocks = fencedBlocks(body)
    const first = blocks.find(b => b.lines[0] === '$ cat evil.md')
    expect(first).toBeDefined()
    expect(first?.lines.join('\n')).toBe(`$ cat evil.md\n${evil}`)
    expect(first?.end).toBeLessThan(body.split('\n').length)
    const second = blocks.find(b => b.lines[0] === '$ echo next')
    expect(second?.lines).toEqual(['$ echo next', 'next'])
    expect(outsideCode(body, '<sub>model')).toBe(true)
  })

  it('a command containing backticks cannot close its fence either', () => {
    const md = renderCommand(rec('echo "```" && echo `date`', '```\nok'), 0, 2000)
    const blocks = fencedBlocks(md)
    expect(blocks).toHaveLength(1)
    expect(blocks[0].lines).toEqual(['$ echo "```" && echo `date`', '```', 'ok'])
  })

  it('trimmed output (the middle cut away) still cannot close its fence', () => {
    const long = '```\n'.repeat(2000) + '`'.repeat(10) + '\n' + 'tail\n'.repeat(2000)
    const md = renderCommand(rec('cat x', long), 0, 2000)
    const blocks = fencedBlocks(md)
    expect(blocks).toHaveLength(1)
    expect(blocks[0].end).toBe(md.trimEnd().split('\n').length - 1)
  })

  it('mentions in output, commands and the final text are neutralised; e-mail addresses are left alone', () => {
    const body = renderFinal(
      outcome({
        finalText: 'Thanks @octocat and @octo-org/team, mail me at dev@example.com',
        commands: [rec('git log --format="%an @alice"', 'Author: @bob\nReviewed-by: carol@example.com')]
      }),
      meta()
    )
    expect(body).not.toMatch(/(?<![A-Za-z0-9])@(octocat|octo-org|alice|bob)/)
    expect(body).toContain('@\u200boctocat')
    expect(body).toContain('@\u200bocto-org/team')
    expect(body).toContain('@\u200balice')
    expect(body).toContain('@\u200bbob')
    expect(body).toContain('dev@example.com')
    expect(body).toContain('carol@example.com')
  })

  it('an unclosed code block in the final text does not swallow the log and the footer', () => {
    const body = renderFinal(outcome({ finalText: 'Run this:\n```bash\nnpm test', commands: [rec('ls', 'README.md')] }), meta())
    expect(outsideCode(body, '<details>')).toBe(true)
    expect(outsideCode(body, '<sub>model')).toBe(true)
    expect(fencedBlocks(body).find(b => b.lines[0] === 'npm test')?.info).toBe('bash')
  })

  it('a final text cut inside a code block does not swallow the log and the footer either', () => {
    const finalText = 'Output:\n```\n' + 'log line\n'.repeat(12_000) + '```\nDone.'
    const body = renderFinal(outcome({ finalText, commands: [rec('ls', 'README.md')] }), meta())
    expect(body.length).toBeLessThanOrEqual(COMMENT_LIMIT)
    expect(body).toMatch(/characters of the final text cut to fit/)
    expect(outsideCode(body, '<sub>model')).toBe(true)
    expect(outsideCode(body, 'characters of the final text cut to fit')).toBe(true)
  })
})

describe('each command in the log', () => {
  it('shows the command, its exit status, its time and its output', () => {
    const md = renderCommand(rec('ls -la', 'README.md\nsrc', { exitCode: 0, durationMs: 2500 }), 0, 2000)
    expect(md).toMatch(/^✅ \*\*1\*\* · exit 0 · 2\.5 s/)
    expect(md).toContain('$ ls -la\nREADME.md\nsrc')
  })

  it.each([
    [{ exitCode: 2 }, /⚠️ \*\*1\*\* · exit 2/],
    [{ exitCode: null, timedOut: true }, /timed out/],
    [{ exitCode: null, blocked: true }, /refused \(blocked\)/],
    [{ exitCode: null, aborted: true }, /stopped/],
    [{ exitCode: null, error: 'spawn bash ENOENT' }, /could not run/],
    [{ truncated: true }, /output cut/]
  ] as Array<[Partial<CommandRecord>, RegExp]>)('%j', (over, re) => {
    expect(renderCommand(rec('x', 'y', over), 0, 2000)).toMatch(re)
  })

  it('the comment shows at most about 2,000 characters of one output, head and tail', () => {
    const out = 'HEAD' + 'm'.repeat(10_000) + 'TAIL'
    const body = renderFinal(outcome({ commands: [rec('cat f', out)] }), meta())
    expect(body).toContain('HEAD')
    expect(body).toContain('TAIL')
    expect(body).toMatch(/characters trimmed here; the job summary has the whole output/)
    expect(body.length).toBeLessThan(4000)
  })
})

describe('the footer', () => {
  it('shows model, turns, commands, tokens, cost, time, sandbox and the run link', () => {
    const f = footer(outcome({ commands: [rec('ls', 'x')] }), meta())
    expect(f).toBe(
      '<sub>model claude-sonnet-4-6 · 3 turns · 1 command · 12,345 in / 678 out tokens · ~$0.0421 · 12 s · sandbox: none · [run log](https://github.com/o/r/actions/runs/1234)</sub>'
    )
  })

  it('shows cache tokens when there are any, and no cost when it is unknown', () => {
    const f = footer(
      outcome({ turns: 1, costUsd: null, usage: { inputTokens: 5, outputTokens: 6, cacheReadTokens: 7000, cacheCreationTokens: 800 } }),
      meta({ model: 'my-gateway-model', runUrl: undefined })
    )
    expect(f).toContain('model my-gateway-model · 1 turn · 0 commands · 5 in / 6 out tokens (cache: 7,000 read, 800 written)')
    expect(f).not.toContain('$')
    expect(f).not.toContain('run log')
  })

  it('shows what the sandbox could not put back as text: a file name the agent chose cannot close the footer, link, ping or inject HTML', () => {
    const hostile =
      "user (bash-agent); WARNING: the agent's change to a/x</sub><img src=x onerror=alert(1)> [click](https://evil.example) @octocat **b** could not be applied"
    const f = footer(outcome(), meta({ sandbox: hostile }))
    expect(f.startsWith('<sub>')).toBe(true)
    expect(f.match(/<\/sub>/g)).toEqual(['</sub>'])
    expect(f.endsWith('</sub>')).toBe(true)
    expect(f).not.toContain('<img')
    expect(f).not.toContain('](https://evil.example)')
    expect(f).not.toContain('@octocat')
  })

  it('is at the end of the final comment', () => {
    const body = renderFinal(outcome(), meta())
    expect(body.endsWith(footer(outcome(), meta()))).toBe(true)
    expect(body).toContain('_No commands were run._')
  })
})

describe('how the run ended', () => {
  it.each([
    ['max_turns', /Stopped at the turn limit\*\* \(max-turns: 50\)/],
    ['timeout', /Stopped at the time limit\*\* \(timeout-minutes: 30\)/],
    ['budget', /Stopped at the cost limit/],
    ['cancelled', /Cancelled/],
    ['error', /The run failed\*\*: the API is down/]
  ] as Array<[ExitReason, RegExp]>)('%s is said at the top, and the partial log is kept', (exitReason, re) => {
    const body = renderFinal(
      outcome({ exitReason, error: exitReason === 'error' ? 'the API is down' : undefined, finalText: '', commands: [rec('ls', 'a')] }),
      meta({ limits: { maxTurns: 50, timeoutMinutes: 30, maxTokens: 8000, maxCostUsd: 1 } })
    )
    expect(body).toMatch(re)
    expect(body.indexOf('\n')).toBeGreaterThan(0)
    expect(body.split('\n\n')[1]).toMatch(re)
    expect(body).toContain('$ ls\na')
    expect(body).toContain('1 command ran in 3 turns')
  })

  it('a plain end without a final message says so', () => {
    expect(renderFinal(outcome({ finalText: '' }), meta())).toContain('_The agent finished without a final message._')
  })
})

describe('tool calls that ran no command', () => {
  const messages = [
    { role: 'user' as const, content: 'task' },
    {
      role: 'assistant' as const,
      content: [
        { type: 'tool_use' as const, id: 'toolu_1', name: 'bash', input: { command: 'ls' } },
        { type: 'tool_use' as const, id: 'toolu_2', name: 'python', input: { code: 'print("@octocat ```")' } },
        { type: 'tool_use' as const, id: 'toolu_3', name: 'bash', input: {} },
        { type: 'tool_use' as const, id: 'toolu_4', name: 'bash', input: { command: '   ' } }
      ]
    },
    {
      role: 'user' as const,
      content: [
        { type: 'tool_result' as const, tool_use_id: 'toolu_1', content: 'README.md' },
        {
          type: 'tool_result' as const,
          tool_use_id: 'toolu_2',
          content: 'Error: unknown tool "python"; the only tool is bash.',
          is_error: true
        },
        {
          type: 'tool_result' as const,
          tool_use_id: 'toolu_3',
          content: [{ type: 'text' as const, text: 'Error: the bash tool needs a "command" string.' }],
          is_error: true
        },
        { type: 'tool_result' as const, tool_use_id: 'toolu_4', content: 'Error: the bash tool needs a "command" string.', is_error: true }
      ]
    },
    { role: 'assistant' as const, content: [{ type: 'text' as const, text: 'done' }] }
  ]

  it('are found in the conversation with the answer they got', () => {
    expect(toolProblems(messages)).toEqual([
      { name: 'python', input: '{"code":"print(\\"@octocat ```\\")"}', result: 'Error: unknown tool "python"; the only tool is bash.' },
      { name: 'bash', input: '{}', result: 'Error: the bash tool needs a "command" string.' },
      { name: 'bash', input: '{"command":"   "}', result: 'Error: the bash tool needs a "command" string.' }
    ])
    expect(toolProblems(undefined)).toEqual([])
  })

  it('are shown in the report after the log, as data', () => {
    const body = renderFinal(outcome({ messages, commands: [rec('ls', 'README.md')] }), meta())
    expect(body).toContain('3 tool calls ran no command')
    expect(body).toContain('Error: unknown tool "python"')
    expect(body).toContain('Error: the bash tool needs a "command" string.')
    expect(body).not.toMatch(/(?<![A-Za-z0-9])@octocat/)
    expect(outsideCode(body, '<sub>model')).toBe(true)
    expect(body.indexOf('</details>')).toBeLessThan(body.indexOf('ran no command'))
    expect(renderSummary(outcome({ messages }), meta())).toContain('unknown tool "python"')
  })

  it('many of them stay within a small part of the comment', () => {
    const uses = Array.from({ length: 500 }, (_, i) => ({
      type: 'tool_use' as const,
      id: `t${i}`,
      name: `tool${i}`,
      input: { x: 'y'.repeat(2000) }
    }))
    const many = [
      { role: 'user' as const, content: 'task' },
      { role: 'assistant' as const, content: uses },
      {
        role: 'user' as const,
        content: uses.map(u => ({ type: 'tool_result' as const, tool_use_id: u.id, content: 'Error: ' + 'e'.repeat(3000), is_error: true }))
      }
    ]
    const body = renderFinal(outcome({ messages: many, finalText: 'z'.repeat(100_000) }), meta())
    expect(body.length).toBeLessThanOrEqual(COMMENT_LIMIT)
    expect(body).toMatch(/500 tool calls ran no command/)
    expect(body).toMatch(/more left out here to fit/)
  })
})
