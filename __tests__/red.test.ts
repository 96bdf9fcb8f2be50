// Red team (issue 37's sandbox rewrite): attacks on the new root, through the built action (dist/, sandbox: user).
import { afterAll, describe, expect, test } from '@jest/globals'
import { execFile, execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { bash, text } from './helpers/fake-anthropic'
import { ACTION_NODE, cleanupRuns } from './helpers/run-action'
import { agent, sleepers, toolResults, until } from './helpers/agent-run'
import { isRoot, sandboxKinds, type Kind } from './helpers/kinds'

const KINDS = sandboxKinds().slice(0, 1)
if (!KINDS.length) test.skip('the user sandbox needs root or passwordless sudo on Linux', () => undefined)
const execFileP = promisify(execFile)
const asRoot = (argv: string[]) => execFileSync(isRoot ? argv[0] : 'sudo', isRoot ? argv.slice(1) : ['-n', ...argv]).toString()
const rootArgv = (argv: string[]): [string, string[]] => (isRoot ? [argv[0], argv.slice(1)] : ['sudo', ['-n', ...argv]])
const hex = (n: number) => randomBytes(n).toString('hex')
afterAll(() => cleanupRuns())

const userRun = (kind: Kind, inputs: Record<string, string> = {}) => ({
  inputs: { sandbox: 'user', 'blocked-commands': '', 'command-timeout': '600', ...inputs },
  extra: { asUser: kind.asUser },
  timeoutMs: 900_000
})

const end = (pids: number[]) => pids.forEach(p => asRoot(['kill', String(p)]))

// The proxy runs as the run's uid outside the sandbox. The agent connects to its socket (bound read-only into the
// view), asks the kernel for a pidfd of its peer (SO_PEERPIDFD), and takes the proxy's descriptors with
// pidfd_getfd: same uid, dumpable, no Yama. The proxy's stdout is the action's report channel.
const PIDFD = String.raw`use Socket;
my $path = $ARGV[0];
socket(my $s, AF_UNIX, SOCK_STREAM, 0) or die "socket: $!\n";
connect($s, pack_sockaddr_un($path)) or die "connect $path: $!\n";
my $p = getsockopt($s, SOL_SOCKET, 77) or die "SO_PEERPIDFD: $!\n"; my $pfd = unpack("l", $p); print "pidfd=$pfd\n";
for my $t (0..40) {
  my $n = syscall(438, $pfd, $t, 0); next if $n < 0;
  my $l = readlink("/proc/self/fd/$n"); print "stolen fd $t -> $l\n";
  if ($t == 1) { open(my $o, ">&=", $n) or die "dup: $!\n"; syswrite $o, (($ARGV[2] // qq({"t":"reached","host":"$ARGV[1]","port":443})) . "\n") x 3; print "forged\n" }
}`

describe.each(KINDS)('red: the proxy, same uid as the agent ($name)', kind => {
  test("the agent cannot take the proxy's descriptors (pidfd_getfd) nor forge the network report through them", async () => {
    const forged = `forged-${hex(6)}.example`
    const cmd = `cat > /tmp/p.pl <<'EOF'\n${PIDFD}\nEOF\nfor s in "$(dirname "$HOME")/net/proxy.sock" "$(dirname "$HOME")/proxy/net/proxy.sock"; do perl /tmp/p.pl "$s" ${forged} 2>&1; done; echo tried`
    const r = await agent([bash(cmd), text('Done.')], userRun(kind))
    const out = toolResults(r)[0]
    expect(out).toMatch(/tried$/)
    // what the action reports: the forged host was never reached
    // (the command's own text, shown in the report, holds the name: only the network lines count)
    const said = (r.comment.updates.join('\n') + r.run.summary).split('\n')
    expect(said.filter(l => l.includes(forged) && /Reached|reached/.test(l) && !l.includes('perl /tmp/p.pl'))).toEqual([])
    expect(out).not.toMatch(/stolen fd/)
  }, 900_000)
})

describe.each(KINDS)('red: the proxy, same uid as the agent: its stop reason ($name)', kind => {
  test("a forged proxy failure through its stolen stdout does not put the agent's text into the report", async () => {
    const mark = `forged-${hex(6)}`
    const line = JSON.stringify({ t: 'error', why: `${mark} [see](https://evil.example/${mark}) **now**` })
    const cmd = `cat > /tmp/p.pl <<'EOF'\n${PIDFD}\nEOF\nfor s in "$(dirname "$HOME")/net/proxy.sock" "$(dirname "$HOME")/proxy/net/proxy.sock"; do perl /tmp/p.pl "$s" x '${line}' 2>&1; done; echo tried`
    const r = await agent([bash(cmd), text('Done.')], userRun(kind))
    expect(toolResults(r)[0]).toMatch(/tried$/)
    const said = r.comment.updates.join('\n') + r.run.summary + r.run.stdout
    expect(said.split('\n').filter(l => l.includes(mark) && !l.includes('perl /tmp/p.pl'))).toEqual([])
  }, 900_000)
})

describe.each(KINDS)('red: another local user and a running run ($name)', kind => {
  test("as uid 65534, the agent's command text cannot be read from /proc/<pid>/cmdline", async () => {
    const canary = `CANARY-cmd-${hex(8)}`
    const hold = `7${hex(3).replace(/\D/g, '1')}.${process.pid}`
    const running = agent([bash(`: ${canary}; sleep ${hold}; echo held`), text('Done.')], userRun(kind))
    const held = await until(() => sleepers(hold).length > 0, running, 300_000)
    let out = ''
    try {
      expect(held).toBe(true)
      // the canary in the environment only: the look's own command lines never hold it
      const look = `for p in /proc/[0-9]*; do l=$(tr '\\0' ' ' < "$p/cmdline" 2>/dev/null); [[ $l == *"$C"* ]] && echo "$p: $l"; done; echo looked`
      const [cmd, args] = rootArgv([
        'env',
        `C=${canary}`,
        'setpriv',
        '--reuid=65534',
        '--regid=65534',
        '--clear-groups',
        'bash',
        '-c',
        look
      ])
      out = (await execFileP(cmd, args, { cwd: '/', env: { PATH: '/usr/bin:/bin' }, maxBuffer: 64 << 20 })).stdout
    } finally {
      end(sleepers(hold))
    }
    await running
    expect(out).toMatch(/looked/)
    expect(out.split('\n').filter(l => l.includes(canary))).toEqual([])
  }, 900_000)
})

describe.each(KINDS.filter(k => !k.asUser && isRoot))('red: descriptors the action inherited ($name)', kind => {
  test("a descriptor the action inherited (a host folder) does not reach the agent's commands", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'red-fd-'))
    const canary = `CANARY-fd-${hex(8)}`
    writeFileSync(path.join(dir, 'secret.txt'), `${canary}\n`)
    chmodSync(dir, 0o755)
    // the action's node, started with a host folder open on fd 250 without close-on-exec (as a parent process may
    // leave it: the runner, a wrapper script, jest's own fd 251 does the same); every process down to the commands
    // keeps it, and /proc/self/fd/250 is a path into the host's file system whatever the root
    const wrapper = path.join(dir, 'node-with-fd')
    writeFileSync(wrapper, `#!/bin/bash\nexec 250<${JSON.stringify(dir)}\nexec ${JSON.stringify(ACTION_NODE)} "$@"\n`)
    chmodSync(wrapper, 0o755)
    try {
      const look = `ls -l /proc/self/fd; for f in /proc/self/fd/*; do cat "$f/secret.txt" 2>/dev/null; done; echo looked`
      const r = await agent([bash(look), text('Done.')], { ...userRun(kind), extra: { node: wrapper } })
      const out = toolResults(r)[0]
      expect(out).toMatch(/looked$/)
      expect(out).not.toContain(canary)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 900_000)
})

describe.each(KINDS)('red: a full tmpfs and the hand-back ($name)', kind => {
  test("with the run's tmpfs filled by the agent, its change still comes back (or the report says why)", async () => {
    const mark = `CHANGE-${hex(6)}`
    const fill = `echo ${mark} >> README.md; head -c 400M /dev/zero > /tmp/fill 2>&1; head -c 100M /dev/zero > /dev/shm/fill 2>&1; df -k / 2>&1 | tail -1; echo filled`
    const r = await agent([bash(fill), text('Done.')], userRun(kind, { 'memory-limit': '256' }))
    expect(toolResults(r)[0]).toMatch(/filled$/)
    const body = r.comment.updates[r.comment.updates.length - 1]
    expect(body).toMatch(/README\.md|could not|cannot/)
  }, 900_000)
})
