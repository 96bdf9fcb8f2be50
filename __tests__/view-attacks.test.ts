// Attacks of issue 37 on the agent's view of the machine, through the built action (dist/, sandbox: user) in
// every privilege kind: host UNIX sockets under /run, another runner's folders, another uid reading a running
// run, copy-mode writes filling the host's disk, kernel keyrings carried to a later run. Each asserts what a user
// relies on (nothing reaches the agent, nothing leaves the run), never how the view is built.
//
// No test waits a fixed time where a race decides: a run is held by its own command (a `sleep` of a unique
// length the test finds in /proc and ends by its pid), a measure is taken when the model is asked its next turn.
import { afterAll, describe, expect, test } from '@jest/globals'
import { execFile, execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { bash, text, type Reply } from './helpers/fake-anthropic'
import { cleanupRuns } from './helpers/run-action'
import { agent, sleepers, toolResults, type Ran, until } from './helpers/agent-run'
import { isRoot, sandboxKinds, type Kind } from './helpers/kinds'
import { git } from './helpers/git'
import { usedBy } from '../src/trusted/setup'

const KINDS = sandboxKinds()
if (!KINDS.length) test.skip('the user sandbox needs root or passwordless sudo on Linux', () => undefined)

const execFileP = promisify(execFile)
const asRoot = (argv: string[]) => execFileSync(isRoot ? argv[0] : 'sudo', isRoot ? argv.slice(1) : ['-n', ...argv]).toString()
const rootArgv = (argv: string[]): [string, string[]] => (isRoot ? [argv[0], argv.slice(1)] : ['sudo', ['-n', ...argv]])
const hex = (n: number) => randomBytes(n).toString('hex')

/** What the test made on the host (removed as root after the file, whatever happened). */
const made: string[] = []
const closers: Array<() => Promise<void> | void> = []
afterAll(async () => {
  for (const c of closers.splice(0).reverse()) await c()
  cleanupRuns()
  for (const d of made.splice(0)) asRoot(['rm', '-rf', '--', d])
})

/** The lines of everything the model was sent in the whole run (every request's body) that hold `canary`. */
const leaked = (r: Ran, canary: string) =>
  JSON.stringify(r.anthropic.requests.map(q => q.body))
    .split('\\n')
    .filter(l => l.includes(canary))

/**
 * A workspace as checkout leaves it (one commit), in a folder closed to others, owned by the action's user:
 * `name` its last component (a comma: a path no overlay's options can hold, so the copy is files).
 */
function workspace(kind: Kind, name: string, files: Record<string, string> = {}): string {
  const base = mkdtempSync(path.join(os.tmpdir(), 'view-attacks-'))
  made.push(base)
  const ws = path.join(base, name)
  mkdirSync(ws)
  const g = (...args: string[]) => git(ws, args)
  g('init', '-q', '-b', 'main')
  writeFileSync(path.join(ws, 'README.md'), '# repo\n')
  for (const [f, content] of Object.entries(files)) writeFileSync(path.join(ws, f), content)
  g('add', '-A')
  g('commit', '-qm', 'base')
  chmodSync(base, 0o700)
  if (kind.asUser) asRoot(['chown', '-R', `${kind.asUser.uid}:${kind.asUser.gid}`, base])
  return ws
}

const userRun = (kind: Kind, o: { inputs?: Record<string, string>; workspace?: string } = {}) => ({
  inputs: { sandbox: 'user', 'blocked-commands': '', 'command-timeout': '240', ...o.inputs },
  extra: { asUser: kind.asUser, ...(o.workspace ? { workspace: o.workspace } : {}) },
  timeoutMs: 360_000
})

/** Ends the processes with these ids (the agent's `sleep`, which the test's own run started). */
const end = (pids: number[]) => {
  for (const pid of pids) {
    try {
      asRoot(['kill', String(pid)])
    } catch {
      // gone already
    }
  }
}

describe.each(KINDS)('host UNIX sockets under /run ($name)', kind => {
  test('stand-in servers on 0666 sockets under /run (a resolver, a database) receive nothing; the agent cannot connect', async () => {
    // one in a folder of its own (as systemd-resolved's io.systemd.Resolve), one right in /run (as a database's)
    const folder = `/run/bash-agent-test-${hex(6)}`
    asRoot(['install', '-d', '-m', '0755', '-o', String(os.userInfo().uid), folder])
    made.push(folder)
    const loose = `/run/${hex(8)}.sock`
    made.push(loose)
    const received: string[] = []
    let connections = 0
    const listen = async (at: string, label = at) => {
      const server = net.createServer(s => {
        connections++
        s.on('data', d => received.push(`${label}: ${d.toString('latin1')}`))
        s.on('error', () => undefined)
      })
      await new Promise<void>((resolve, reject) => server.once('error', reject).listen(at, resolve))
      chmodSync(at, 0o666)
      closers.push(() => new Promise<void>(r => server.close(() => r())))
    }
    const resolver = path.join(folder, 'resolve.sock')
    await listen(resolver)
    // made in the test's folder, then moved into /run (root's): a socket stays bound to its inode
    const staged = path.join(folder, 'db.sock')
    await listen(staged, loose)
    asRoot(['mv', staged, loose])
    const canary = `CANARY-socket-${hex(8)}`
    const connect = `for s in ${resolver} ${loose}; do
      perl -MIO::Socket::UNIX -e '$c = IO::Socket::UNIX->new(Type => SOCK_STREAM(), Peer => $ARGV[0]) or die "no connection to $ARGV[0]: $!\\n"; print $c "${canary}-perl\\n"; close $c; print "sent to $ARGV[0]\\n"' "$s" 2>&1
      if command -v python3 >/dev/null; then python3 -c 'import socket, sys
c = socket.socket(socket.AF_UNIX); c.connect(sys.argv[1]); c.sendall(b"${canary}-python\\n"); print("sent to", sys.argv[1])' "$s" 2>&1 | tail -n 1; fi
    done; echo tried`
    const look = `ls -la /run 2>&1; echo ---; timeout 200 find / \\( -path /proc -o -path /sys \\) -prune -o -type s -print 2>/dev/null | head -n 500; echo listed`
    const r = await agent([bash(connect), bash(look), text('Done.')], userRun(kind))
    expect(r.run.code).toBe(0)
    const [tried, listed] = toolResults(r)
    expect(tried).toMatch(/tried$/)
    expect(listed).toMatch(/listed$/)
    expect(received).toEqual([])
    expect(connections).toBe(0)
    expect(tried).not.toMatch(/^sent to/m)
    // the sockets are not even there to be found
    for (const name of [path.basename(folder), path.basename(loose)]) expect(listed).not.toContain(name)
  }, 400_000)
})

describe.each(KINDS)("another runner instance's folders ($name)", kind => {
  test("a second runner's work folders (0755 folders, 0644 files) are unreadable: nothing of them reaches the model", async () => {
    const tag = hex(6)
    const canary = `CANARY-runner-${hex(8)}`
    const places = [
      `/home/runner2-${tag}/actions-runner/_work/other/other/secret.txt`,
      `/opt/actions-runner-2-${tag}/_work/x/secret.txt`,
      `/srv/runner3-${tag}/_work/secret.txt`
    ]
    for (const file of places) {
      made.push(file.split('/').slice(0, 3).join('/'))
      asRoot(['install', '-d', '-m', '0755', path.dirname(file)])
      asRoot(['sh', '-c', `umask 022; printf '%s\\n' "$1" > "$2"`, 'sh', `${canary} ${file}`, file])
      asRoot(['chmod', '0644', file])
    }
    const read = `cat ${places.join(' ')} 2>&1
      ls -la /home /opt /srv 2>&1
      timeout 200 find /home /opt /srv -name secret.txt -exec cat {} + 2>&1 | head -n 50; echo read`
    const r = await agent([bash(read), text('Done.')], userRun(kind))
    expect(r.run.code).toBe(0)
    expect(toolResults(r)[0]).toMatch(/read$/)
    expect(leaked(r, canary)).toEqual([])
    expect(r.comment.updates.join('\n')).not.toContain(canary)
  }, 400_000)
})

/**
 * What another local user (uid 65534) finds of a running run: the run folders' names wherever they show
 * (the runs' folder, every readable /proc/<pid>/cmdline, environ and mountinfo, the cgroup tree), then every
 * file it can read there (git objects inflated), what /proc/<pid>/cwd and /root show, and a search of the
 * places shared by all for the canaries. Prints what it read; the test looks for the canaries in it.
 */
const NOBODY = String.raw`
R=/var/lib/bash-agent/runs
ls -la "$R" 2>&1
names=$( {
  ls "$R"
  for p in /proc/[0-9]*; do cat "$p/cmdline" "$p/environ" "$p/mountinfo"; echo; done | tr '\0' '\n'
  find /sys/fs/cgroup -maxdepth 4 2>/dev/null
} 2>/dev/null | grep -oE '[0-9a-f]{32}' | sort -u)
echo "names: $names"
inflate() { perl -MCompress::Zlib -e 'for my $f (@ARGV) { open(my $h, "<", $f) or next; local $/; my $d = uncompress(<$h>); print "$f: $d\n" if defined $d }' "$@"; }
for n in $names; do
  d="$R/$n"
  # the folder itself cannot be listed (0711): the names the set-up gives its parts, and the copy's
  for sub in "" home tmp layers objects objects-lower objects-empty start-objects start-index net lower cgroup repo "a,b"; do
    ls -la "$d/$sub" 2>&1
    timeout 120 find "$d/$sub" -xdev -type f -size -10M 2>/dev/null | head -n 5000 | while IFS= read -r f; do echo "== $f"; cat "$f" 2>&1 | head -c 4096; echo; inflate "$f" 2>/dev/null | head -c 4096; done
  done
done
# the mount points the processes' mountinfo names: under the runs' folder, or naming a run, read what can be read
for p in /proc/[0-9]*; do cut -d' ' -f4,5 "$p/mountinfo" 2>/dev/null; done | tr ' ' '\n' | grep -E '^/var/lib/bash-agent|[0-9a-f]{32}' | sort -u | while IFS= read -r m; do
  echo "== mount $m"; ls -la "$m" 2>&1 | head -n 50
  timeout 60 find "$m" -xdev -maxdepth 3 -type f 2>/dev/null | head -n 200 | while IFS= read -r f; do cat "$f" 2>/dev/null | head -c 4096; inflate "$f" 2>/dev/null | head -c 4096; done
done
for p in /proc/[0-9]*; do
  for f in tracked.txt .env draft.txt mine.txt; do cat "$p/cwd/$f" "$p/root/tmp/$f" 2>/dev/null; done
  ls "$p/cwd/" "$p/root/tmp/" 2>/dev/null | head -n 20
done
timeout 300 grep -rsF --exclude-dir=proc -e "$1" -e "$2" -e "$3" -e "$4" /var/lib/bash-agent /tmp /var/tmp /dev/shm /run 2>/dev/null | head -c 100000
echo nobody-done
`

describe.each(KINDS)('another uid and a running run ($name)', kind => {
  test.each([
    ['an overlay', 'repo'],
    ['copied files', 'a,b']
  ])(
    'as uid 65534, nothing of the run is readable by any route (the copy is %s)',
    async (_how, name) => {
      const tracked = `CANARY-tracked-${hex(10)}`
      const ignored = `CANARY-env-${hex(10)}`
      const untracked = `CANARY-draft-${hex(10)}`
      const written = `CANARY-written-${hex(10)}`
      const canaries = [tracked, ignored, untracked, written]
      const ws = workspace(kind, name, { 'tracked.txt': `${tracked}\n`, '.gitignore': '.env\n' })
      // an earlier step wrote them: one untracked and ignored, one untracked
      writeFileSync(path.join(ws, '.env'), `TOKEN=${ignored}\n`)
      writeFileSync(path.join(ws, 'draft.txt'), `${untracked}\n`)
      if (kind.asUser) asRoot(['chown', `${kind.asUser.uid}:${kind.asUser.gid}`, path.join(ws, '.env'), path.join(ws, 'draft.txt')])
      const hold = `7${hex(3).replace(/\D/g, '1')}.${process.pid}`
      const marks = `echo ${written} > mine.txt; echo ${written} > "$HOME/mine.txt"; echo ${written} > /tmp/mine.txt; echo ${written} > "$TMPDIR/mine.txt"
      cat tracked.txt .env draft.txt > /dev/null; git status --short > /dev/null; sleep ${hold}; echo held`
      // the command may hold the run for as long as the look takes (ended by the test)
      const running = agent([bash(marks), text('Done.')], {
        ...userRun(kind, { workspace: ws, inputs: { 'command-timeout': '1800' } }),
        timeoutMs: 1_800_000
      })
      const held = await until(() => sleepers(hold).length > 0, running, 300_000)
      let out = ''
      try {
        expect(held).toBe(true)
        // as root (or through sudo), become uid 65534 with no groups: a plain local user
        const [cmd, args] = rootArgv([
          'setpriv',
          '--reuid=65534',
          '--regid=65534',
          '--clear-groups',
          'bash',
          '-c',
          NOBODY,
          'nobody',
          ...canaries
        ])
        const r = await execFileP(cmd, args, {
          cwd: '/',
          env: { PATH: '/usr/bin:/bin:/usr/sbin:/sbin' },
          maxBuffer: 512 * 1024 * 1024,
          timeout: 900_000
        }).catch((e: { stdout?: string; stderr?: string; message: string }) => ({ stdout: e.stdout ?? e.message, stderr: e.stderr ?? '' }))
        out = r.stdout + r.stderr
        // the run was there all along: its command still held when the look ended
        expect(sleepers(hold).length).toBeGreaterThan(0)
      } finally {
        end(sleepers(hold))
      }
      const ran = await running
      expect(ran.run.code).toBe(0)
      expect(out).toMatch(/nobody-done/)
      // the lines that hold a canary (what was read, and from where)
      const found = out.split('\n').filter(l => canaries.some(c => l.includes(c)))
      expect(found).toEqual([])
    },
    2_000_000
  )
})

describe.each(KINDS)('copy mode writes ($name)', kind => {
  test('with memory-limit 256, 1 GiB written into the copy, $HOME and /tmp fails for want of space; the host disk does not grow', async () => {
    // a comma in the workspace's path: no overlay can be mounted on it, the copy is files
    const ws = workspace(kind, 'a,b')
    const used = () =>
      execFileSync('df', ['-B1', '--output=used', '/var/lib', ws]).toString().split('\n').slice(1).filter(Boolean).map(Number)
    const before = used()
    let during: number[] = []
    const fill = `for d in /tmp "$HOME" .; do head -c 1G /dev/zero 2>&1 > "$d/big"; echo "rc=$? size=$(stat -c %s "$d/big")"; [ "$d" = . ] || rm -f "$d/big"; done`
    const measure: Reply = () => {
      during = used() // asked for its next turn: the writes are done, the copy's still there
      return bash('rm -f big; echo removed')
    }
    const r = await agent([bash(fill), measure, text('Done.')], userRun(kind, { workspace: ws, inputs: { 'memory-limit': '256' } }))
    expect(r.run.code).toBe(0)
    expect(r.run.stdout).toContain('copied files')
    const [out] = toolResults(r)
    const sizes = [...out.matchAll(/size=(\d+)/g)].map(m => Number(m[1]))
    expect(sizes).toHaveLength(3)
    // each write stopped for want of space, well before 1 GiB
    for (const s of sizes) expect(s).toBeLessThan(300 * 1024 * 1024)
    expect(out).not.toMatch(/rc=0/)
    expect(out.match(/No space left on device/g) ?? []).toHaveLength(3)
    // the host's disk, before vs while the copy held its writes
    expect(during).toHaveLength(before.length)
    for (const [i, b] of before.entries()) expect(during[i] - b).toBeLessThan(300 * 1024 * 1024)
  }, 600_000)
})

/** add_key and keyctl: x86_64's and the generic table's (arm64) syscall numbers. */
const KEYS_PERL =
  String.raw`
my ($add, $ctl) = ` +
  '`uname -m`' +
  String.raw` =~ /x86_64/ ? (248, 250) : (217, 219);
# syscall passes a string by its address: every one a variable (a literal is read-only to it)
my ($what, $desc, $data) = @ARGV;
my $type = "user";
if ($what eq "add") {
  my $id = syscall($add, $type, $desc, $data, length($data), -4);
  print $id > 0 ? "added $id\n" : "add_key failed: $!\n";
} else {
  my $id = syscall($ctl, 10, -4, $type, $desc, 0);
  if ($id > 0) { my $buf = "\0" x 256; my $n = syscall($ctl, 11, $id, $buf, 256); print "found $id: ", substr($buf, 0, $n > 0 ? $n : 0), "\n" }
  else { print "search failed: $!\n" }
}`

describe.each(KINDS)('kernel keyrings ($name)', kind => {
  test("a key the agent adds to its user keyring is not there for a later run's agent, and its uid is never given again", async () => {
    const desc = `bash-agent-test-${hex(6)}`
    const secret = `CANARY-key-${hex(10)}`
    const keys = (what: string) => `perl -e '${KEYS_PERL}' ${what} ${desc} ${secret} 2>&1`
    const first = await agent(
      [
        bash(
          `id -u; ${keys('add')}; grep -c ${desc} /proc/keys; command -v keyctl >/dev/null && keyctl show @u 2>&1 | head -n 5; echo first`
        ),
        text('Done.')
      ],
      userRun(kind)
    )
    const [one] = toolResults(first)
    const uid = one.split('\n')[0]
    // the key to remove from the host after the test, whatever the later run saw
    closers.push(() => {
      if (!/^\d+$/.test(uid)) return
      const [cmd, args] = rootArgv([
        'setpriv',
        `--reuid=${uid}`,
        `--regid=${uid}`,
        '--clear-groups',
        'perl',
        '-e',
        `my ($t, $d) = ("user", "${desc}"); my $c = \`uname -m\` =~ /x86_64/ ? 250 : 219; my $id = syscall($c, 10, -4, $t, $d, 0); syscall($c, 21, $id) if $id > 0`
      ])
      try {
        execFileSync(cmd, args, { stdio: 'ignore' })
      } catch {
        // no such user or key any more
      }
    })
    expect(first.run.code).toBe(0)
    expect(one).toMatch(/first$/)
    // the run is over: its key lives on in the kernel, so its uid is never given again (a run's uid is one no
    // account, process or key has: src/trusted/setup.ts usedBy), and no later run is the key's next user
    expect(uid).toMatch(/^\d+$/)
    expect(readFileSync('/proc/key-users', 'utf8')).toMatch(new RegExp(`^\\s*${uid}:`, 'm'))
    expect(usedBy(Number(uid))).toBe('the kernel holds keys of it')
    const second = await agent(
      [
        bash(
          `id -u; cat /proc/keys 2>&1; ${keys('search')}; command -v keyctl >/dev/null && keyctl search @u user ${desc} 2>&1; echo second`
        ),
        text('Done.')
      ],
      userRun(kind)
    )
    expect(second.run.code).toBe(0)
    const [two] = toolResults(second)
    expect(two).toMatch(/second$/)
    if (two.split('\n')[0] !== uid)
      console.log(`view-attacks: the later run had another uid (${two.split('\n')[0]}, not ${uid}): no carry to see`)
    expect(two).not.toContain(desc)
    expect(two).not.toContain(secret)
  }, 600_000)
})
