// The commands' network, attacked end to end through dist/ (root, and the
// non-root user with passwordless sudo): a stand-in "internet" host and the
// runner's own service on 127.0.0.1, tried every way a command could; only the
// run's proxy gets out, and only to what allowed-domains names.
import { afterAll, describe, expect, test } from '@jest/globals'
import { spawnSync } from 'node:child_process'
import dgram from 'node:dgram'
import http from 'node:http'
import net from 'node:net'
import type { AddressInfo } from 'node:net'
import { existsSync, readFileSync } from 'node:fs'
import { bash, startFakeAnthropic, text } from './helpers/fake-anthropic'
import { startFakeGitHub } from './helpers/fake-github'
import { cleanupRuns, runAction, type ActionRun } from './helpers/run-action'
import { issueCommentEvent } from './helpers/events'
import { hasSudo, isRoot, sandboxKinds, type Kind } from './helpers/kinds'

const privileged = isRoot || hasSudo
const API_KEY = 'sk-ant-api03-networkTestKey000000000000000000000'

const KINDS: Kind[] = sandboxKinds()
if (!KINDS.length) KINDS.push({ name: 'this user' }) // the tests below that need privileges skip themselves

afterAll(() => cleanupRuns())

/** The stand-in internet: an HTTP server, and a UDP one, counting what arrives. */
async function standIn() {
  const got: string[] = []
  const web = http.createServer((req, res) => {
    got.push(`${req.method} ${req.url}`)
    res.end('REACHED-THE-STAND-IN\n')
  })
  web.on('connect', (req, sock) => {
    got.push(`CONNECT ${req.url}`)
    sock.end('HTTP/1.1 500 no\r\n\r\n')
  })
  web.on('connection', () => got.push('tcp'))
  await new Promise<void>(r => web.listen(0, '127.0.0.1', () => r()))
  const udp = dgram.createSocket('udp4')
  udp.on('message', m => got.push(`udp ${m}`))
  await new Promise<void>(r => udp.bind(0, '127.0.0.1', () => r()))
  const abstract = net.createServer(s => {
    got.push('abstract')
    s.end()
  })
  const name = `bash-agent-net-test-${process.pid}`
  await new Promise<void>(r => abstract.listen(`\0${name}`, () => r()))
  return {
    got,
    port: (web.address() as AddressInfo).port,
    udpPort: (udp.address() as AddressInfo).port,
    abstract: name,
    close: () => {
      web.close()
      web.closeAllConnections()
      udp.close()
      abstract.close()
    }
  }
}

async function run(kind: Kind, commands: string[], inputs: Record<string, string> = {}) {
  const fake = await startFakeAnthropic([bash(...commands), text('done')], { apiKey: API_KEY })
  const gh = await startFakeGitHub({ permissions: { Codertocat: 'admin' } })
  try {
    const r: ActionRun = await runAction({
      eventName: 'issue_comment',
      payload: issueCommentEvent({ body: '/agent try the network' }),
      inputs: { 'anthropic-api-key': API_KEY, 'anthropic-base-url': fake.url, 'blocked-commands': '', ...inputs },
      env: { GITHUB_API_URL: gh.url },
      timeoutMs: 150_000,
      asUser: kind.asUser
    })
    const results: string[] = []
    for (const req of fake.requests)
      for (const m of req.body?.messages ?? [])
        if (Array.isArray(m.content))
          for (const b of m.content)
            if (b.type === 'tool_result') results.push(typeof b.content === 'string' ? b.content : JSON.stringify(b.content))
    const comment = [...gh.comments.values()].map(c => c.updates[c.updates.length - 1]).join('\n')
    return { r, out: results.join('\n'), comment }
  } finally {
    await Promise.all([fake.close(), gh.close()])
  }
}

const ATTACKS = (p: number, u: number, abs: string) => [
  `timeout 20 bash -c 'exec 3<>/dev/tcp/127.0.0.1/${p}' 2>/dev/null; echo "direct=$?"`,
  `timeout 20 bash -c 'exec 3<>/dev/tcp/::1/${p}' 2>/dev/null; echo "v6=$?"`,
  `echo "proxy=$HTTP_PROXY no=$NO_PROXY"; unset NO_PROXY no_proxy; curl -s -m 20 -o /dev/null -w 'http=%{http_code}\\n' http://127.0.0.1:${p}/x`,
  `curl -s -m 20 -w '\\n' http://internet.invalid:${p}/y`,
  `unset NO_PROXY no_proxy; curl -s -m 20 -p -o /dev/null -w 'tunnel=%{http_connect}\\n' http://127.0.0.1:${p}/z; echo "tunnel-exit=$?"`,
  `curl -s -m 20 --noproxy '*' -o /dev/null http://127.0.0.1:${p}/w; echo "noproxy-exit=$?"`,
  `timeout 20 bash -c 'echo leak > /dev/udp/127.0.0.1/${u}' 2>/dev/null; echo "udp=$?"`,
  `timeout 20 getent hosts example.com; echo "dns=$?"`,
  `timeout 20 /usr/bin/python3 -c "import socket; s=socket.socket(socket.AF_UNIX); s.connect(b'\\0${abs}'); print('abstract=connected')" 2>&1 | tail -1`,
  `ip -o addr 2>/dev/null | awk '{print "if=" $2}' | sort -u | tr '\\n' ' '; echo; wc -l < /proc/net/unix | sed 's/^/unix-lines=/'`
]

describe.each(KINDS)('network: allowlist by default ($name)', kind => {
  const t = privileged ? test : test.skip
  t(
    'nothing arrives at the stand-in or the runner, every attempt ends in seconds, and the report names the host and allowed-domains',
    async () => {
      const s = await standIn()
      try {
        const started = Date.now()
        const { r, out, comment } = await run(kind, ATTACKS(s.port, s.udpPort, s.abstract))
        expect(r.code).toBe(0)
        expect(Date.now() - started).toBeLessThan(120_000)
        expect(s.got).toEqual([])
        expect(out).toMatch(/direct=[1-9]/)
        expect(out).toMatch(/v6=[1-9]/)
        expect(out).toMatch(/proxy=http:\/\/127\.0\.0\.1:\d+ no=localhost\n/)
        expect(out).toContain('http=403')
        expect(out).toContain('tunnel=403')
        expect(out).toMatch(/internet\.invalid is not in allowed-domains.*line: internet\.invalid/)
        expect(out).toMatch(/noproxy-exit=[1-9]/)
        expect(out).toMatch(/dns=[1-9]/)
        expect(out).not.toContain('abstract=connected')
        expect(out).toMatch(/if=lo *\n/)
        expect(out).not.toContain('REACHED-THE-STAND-IN')
        for (const where of [comment, r.summary]) {
          expect(where).toContain('**Network:**')
          expect(where).toMatch(/Refused: `127\.0\.0\.1` \(\d times?\), `internet\.invalid`/)
          expect(where).toContain('allowed-domains')
        }
        expect(r.stdout).toMatch(/Network: refused internet\.invalid:\d+/)
      } finally {
        s.close()
      }
    },
    180_000
  )

  t(
    'with allowed-domains naming the stand-in, HTTP and a tunnel reach it, git clones through the proxy, and the report lists it',
    async () => {
      const s = await standIn()
      const repo = spawnSync('bash', ['-c', 'd=$(mktemp -d); cd $d && git init -q --bare r.git && echo $d'], {
        encoding: 'utf8'
      }).stdout.trim()
      const git = http.createServer((req, res) => {
        // a package registry's document, for npm- and pip-style clients
        if (req.url?.startsWith('/reg/leftpad')) {
          const doc = { name: 'leftpad', 'dist-tags': { latest: '1.2.3' }, versions: { '1.2.3': { name: 'leftpad', version: '1.2.3' } } }
          res.setHeader('content-type', 'application/json')
          return void res.end(JSON.stringify(doc))
        }
        // the dumb HTTP protocol, from a bare repository with one commit
        const f = `${repo}/r.git${(req.url ?? '').replace(/\?.*$/, '').replace(/^\/r\.git/, '')}`
        try {
          res.end(readFileSync(f))
        } catch {
          res.statusCode = 404
          res.end()
        }
      })
      spawnSync('bash', [
        '-c',
        `cd ${repo} && git clone -q r.git w 2>/dev/null && cd w && echo hi > f && git add f && git -c user.name=a -c user.email=a@b commit -qm one && git push -q origin HEAD:master && cd ../r.git && git update-server-info`
      ])
      await new Promise<void>(res => git.listen(0, '127.0.0.1', () => res()))
      const gp = (git.address() as AddressInfo).port
      try {
        const { r, out, comment } = await run(
          kind,
          [
            // NO_PROXY names only localhost, so 127.0.0.1 goes through the proxy either way
            `curl -s -m 20 http://127.0.0.1:${s.port}/allowed`,
            `unset NO_PROXY no_proxy; curl -s -m 20 -p -o /dev/null -w 'tunnel=%{http_code}\\n' http://127.0.0.1:${s.port}/t`,
            `timeout 20 bash -c 'exec 3<>/dev/tcp/127.0.0.1/${s.port}' 2>/dev/null; echo "direct=$?"`,
            `unset NO_PROXY no_proxy; curl -s -m 20 -w '\\n' http://localhost:${s.port}/by-name`,
            `unset NO_PROXY no_proxy; git clone -q http://127.0.0.1:${gp}/r.git c && cat c/f`,
            // npm and Python's urllib (what pip's requests does) take the proxy from the environment
            `unset NO_PROXY no_proxy; npm view leftpad version --registry http://127.0.0.1:${gp}/reg/ --no-update-notifier 2>&1 | tail -1 | sed 's/^/npm=/'`,
            `unset NO_PROXY no_proxy; python3 -c "import urllib.request as u; print('py=' + u.urlopen('http://127.0.0.1:${gp}/reg/leftpad').read().decode()[:17])" 2>&1 | tail -1`
          ],
          { 'allowed-domains': '127.0.0.1\nlocalhost' }
        )
        expect(r.code).toBe(0)
        expect(out).toContain('REACHED-THE-STAND-IN')
        expect(out).toContain('tunnel=200')
        expect(s.got).toContain('GET /allowed')
        expect(s.got.some(g => g.startsWith('CONNECT'))).toBe(false) // the tunnel is the proxy's, the stand-in sees its bytes
        expect(out).toMatch(/direct=[1-9]/)
        expect(s.got).toContain('GET /by-name') // a name resolving to an address an entry names itself
        expect(out).toContain('hi')
        expect(out).toContain('npm=1.2.3')
        if (existsSync('/usr/bin/python3')) expect(out).toContain('py={"name":"leftpad"')
        for (const where of [comment, r.summary]) expect(where).toMatch(/Reached: `127\.0\.0\.1` \(\d+ times?\)/)
      } finally {
        s.close()
        git.close()
      }
    },
    180_000
  )
})

describe.each(KINDS)('network presets ($name)', kind => {
  const t = privileged ? test : test.skip
  t(
    'without allowed-domains the npm registry is refused and the report names the preset npm; with npm and pypi their hosts pass, example.com does not',
    async () => {
      const code = (host: string) => `curl -s -m 40 -o /dev/null -w '${host}=%{http_connect}\\n' https://${host}/ ; true`
      const closed = await run(kind, [code('registry.npmjs.org')])
      expect(closed.r.code).toBe(0)
      expect(closed.out).toContain('registry.npmjs.org=403')
      for (const where of [closed.comment, closed.r.summary]) {
        expect(where).toContain('`registry.npmjs.org` (1 time, a host of the preset `npm`)')
        expect(where).toContain('```text\nnpm\n```')
      }
      expect(closed.r.stdout).toMatch(/Network: refused registry\.npmjs\.org:443 .*preset npm/)
      // no internet here: an allowed host may then fail to connect, but it is not refused
      const open = await run(kind, [code('registry.npmjs.org'), code('files.pythonhosted.org'), code('example.com')], {
        'allowed-domains': 'npm\npypi'
      })
      expect(open.r.code).toBe(0)
      expect(open.out).toMatch(/registry\.npmjs\.org=(?!403)\d+/)
      expect(open.out).toMatch(/files\.pythonhosted\.org=(?!403)\d+/)
      expect(open.out).toContain('example.com=403')
      expect(open.comment).not.toContain('`registry.npmjs.org` (1 time, a host')
      expect(open.comment).toMatch(/Refused: `example\.com` \(1 time\)/)
    },
    300_000
  )
})

describe('not contained', () => {
  const t = privileged ? test : test.skip
  t(
    'network: open lets a direct connection through and says so',
    async () => {
      const s = await standIn()
      try {
        const { out, comment } = await run(KINDS[0], [`curl -s -m 20 http://127.0.0.1:${s.port}/open`], { network: 'open' })
        expect(out).toContain('REACHED-THE-STAND-IN')
        expect(comment).toMatch(/\*\*Network:\*\* not contained \(network: open\)/)
      } finally {
        s.close()
      }
    },
    120_000
  )
  test('sandbox: none says the network was not contained', async () => {
    const { comment } = await run(KINDS[0], ['true'], { sandbox: 'none' })
    expect(comment).toMatch(/\*\*Network:\*\* not contained \(sandbox: none\)/)
  }, 120_000)
  test.each([
    ['https://example.com/x', /allowed-domains/],
    [
      'npm\nnpmm',
      /allowed-domains.*"npmm" is not a preset \(the presets: github, npm, pypi, go, crates, rubygems, maven, gradle, debian, ubuntu\)/
    ]
  ])(
    'a bad allowed-domains entry (%j) fails the step with one line naming the input, before any model request',
    async (entry, message) => {
      const fake = await startFakeAnthropic([text('never')], { apiKey: API_KEY })
      try {
        const r = await runAction({
          eventName: 'issue_comment',
          payload: issueCommentEvent({ body: '/agent x' }),
          inputs: { 'anthropic-api-key': API_KEY, 'anthropic-base-url': fake.url, 'allowed-domains': entry },
          timeoutMs: 60_000
        })
        expect(r.code).not.toBe(0)
        const errors = r.commands.filter(c => c.command === 'error')
        expect(errors).toHaveLength(1)
        expect(errors[0].message).toMatch(message)
        expect(errors[0].message).not.toContain('\n')
        expect(fake.requests).toHaveLength(0)
      } finally {
        await fake.close()
      }
    },
    120_000
  )
})
