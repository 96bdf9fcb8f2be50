// The command server's set-up in `user` mode (root, in its namespaces): the run's uid and names, the agent's copy.
import fs from 'node:fs'
import pathM from 'node:path'
import { RUN_UIDS, type ServerConfig, type SetUpInfo } from './protocol'
import { withUid } from './proc'
import { firstLine, must, quietEnv, run } from './exec'
import { snapshotUpper } from './upper'

/** What the copy is (protocol.ts SetUpInfo), and the upper layer as set-up left it (upper.ts). */
type CopyInfo = Required<Pick<SetUpInfo, 'workdir' | 'home' | 'tmp' | 'startTree' | 'startObjects' | 'kind'>> &
  Pick<SetUpInfo, 'copyProblem' | 'upper' | 'copyNote'> & { upperSnapshot?: Set<string> }
type Start = { startTree: string; startObjects: string }

/**
 * The run's uid (gid the same), picked by the action, refused unless unused (`usedBy`, on the host's /proc; then the
 * namespace's own is mounted). No account: it is in no group (libuv's setgroups(0) on spawn); sudo cannot name it.
 */
export async function claimIds(cfg: ServerConfig): Promise<{ uid: number; gid: number }> {
  const uid = cfg.uid as number
  if (!/^bash-agent-[0-9a-f]{8}$/.test(cfg.user ?? '')) throw new Error(`invalid user name ${JSON.stringify(cfg.user)}`)
  let why = "the host's processes cannot be seen"
  try {
    // a /proc of the host's PID namespace names us by another pid than our own namespace does
    if (fs.readlinkSync('/proc/self') !== `${process.pid}`) why = usedBy(uid)
  } finally {
    await must('a /proc of its own', cfg.bins.mount, ['-t', 'proc', '-o', 'nosuid,nodev,noexec', 'proc', '/proc'])
  }
  if (why) throw new Error(`uid ${uid} is refused: ${why}`)
  return { uid, gid: uid }
}

/** Why `uid` is no fresh one ('' when it is): out of RUN_UIDS, in /etc/passwd or /etc/group, a process's, a keyring's. */
export function usedBy(uid: number): string {
  if (!Number.isInteger(uid) || uid < RUN_UIDS.from || uid >= RUN_UIDS.to) return 'not among the uids runs pick'
  const third = new RegExp(`^[^:\\n]*:[^:\\n]*:([^:\\n]*:)?${uid}:`, 'm') // the third field (a uid or gid), or a passwd's fourth (gid)
  if (['/etc/passwd', '/etc/group'].some(f => third.test(fs.readFileSync(f, 'utf8')))) return 'a user or group of /etc has it'
  if (withUid(uid).length) return 'a process has it'
  // `<uid>: ...` for each user with keys (or keyrings) in the kernel; none in a kernel without keys
  const keys = fs.existsSync('/proc/key-users') ? fs.readFileSync('/proc/key-users', 'utf8') : ''
  return keys.split('\n').some(l => l.trim().startsWith(`${uid}:`)) ? 'the kernel holds keys of it' : ''
}

/**
 * The names commands see (whoami, git's ident): the host's passwd and group plus the run's lines, laid over the view's
 * /etc (viewPlan: an overlay; the host renaming a new passwd in place would take a bind on the file away).
 */
export function identity(cfg: ServerConfig, account: { uid: number; gid: number }, root: string): string {
  const dir = pathM.join(root + cfg.runDir, 'etc')
  fs.mkdirSync(dir)
  fs.chmodSync(dir, 0o755) // the view's /etc takes the mode of the overlay's top layer
  const home = pathM.join(cfg.runDir as string, 'home')
  const own = { passwd: `${account.uid}:${account.gid}:bash-agent action sandbox:${home}:/bin/bash`, group: `${account.gid}:` }
  for (const [name, line] of Object.entries(own)) {
    fs.writeFileSync(pathM.join(dir, name), `${fs.readFileSync(`/etc/${name}`, 'utf8').replace(/\n?$/, '\n')}${cfg.user}:x:${line}\n`)
    fs.chmodSync(pathM.join(dir, name), 0o644)
  }
  return dir
}

/**
 * Before the view: the workspace at <runDir>/lower of the new root (root-only), idmapped to the run's uid (else
 * bound, and every file is chowned: the note returned), and its objects read-only at <runDir>/objects.
 */
export async function bindWorkspace(cfg: ServerConfig, account: { uid: number; gid: number }, root: string): Promise<string | undefined> {
  const b = cfg.bins
  const lower = pathM.join(root + cfg.runDir, 'lower')
  fs.mkdirSync(lower, { mode: 0o700 })
  const ws = fs.realpathSync(cfg.workspace)
  const st = fs.statSync(ws)
  const ids = [st.uid, account.uid, st.gid, account.gid].map(String)
  const r = b.perl ? await run(b.perl, ['-e', IDMAP, ws, lower, ...ids]) : { code: 1, stderr: 'no perl' }
  if (r.code !== 0) await must('the workspace', b.mount, ['--bind', ws, lower])
  if (cfg.objects && cfg.baseSha) {
    // through a read-only overlay on a bind lazily unmounted: the agent's mount table never names the workspace
    const [held, empty, objects] = ['objects-lower', 'objects-empty', 'objects'].map(n => pathM.join(root + cfg.runDir, n))
    for (const d of [held, empty, objects]) fs.mkdirSync(d, { mode: d === objects ? 0o755 : 0o700 })
    await must('share the objects', b.mount, ['--bind', cfg.objects, held])
    await must('share the objects', b.mount, ['-t', 'overlay', '-o', `ro,nosuid,nodev,lowerdir=${held}:${empty}`, 'overlay', objects])
    await must('share the objects', b.umount, ['-l', held])
  }
  return r.code === 0 ? undefined : `the workspace could not be idmapped (${firstLine(r)}): its files were handed over one by one`
}

/**
 * The agent's copy, in the view (on the run's tmpfs), handed over when complete: the workspace without its .git (an
 * overlay, else its files copied), a fresh .git sharing its objects read-only. `idmapNote`: see bindWorkspace.
 */
export async function buildCopy(cfg: ServerConfig, account: { uid: number; gid: number }, idmapNote?: string): Promise<CopyInfo> {
  const b = cfg.bins
  const runDir = cfg.runDir as string
  const lower = pathM.join(runDir, 'lower')
  const workdir = pathM.join(runDir, pathM.basename(cfg.workspace) || 'repo')
  const home = pathM.join(runDir, 'home')
  const tmp = pathM.join(runDir, 'tmp')
  for (const d of [home, tmp, pathM.join(runDir, 'layers')]) fs.mkdirSync(d, { mode: 0o700 })
  // (the documented case where the files are copied; the layer itself is bound at a neutral path)
  const why = /[,:\\\s]/.test(cfg.workspace) ? 'the workspace path cannot be a layer' : await overlayCopy(cfg, lower, workdir, !!idmapNote)
  const kind = why === undefined ? 'overlay' : 'copy'
  let copyProblem = kind === 'copy' ? await plainCopy(cfg, lower, workdir) : undefined
  if (kind === 'copy') for (const rel of withheld(cfg, workdir)) fs.rmSync(pathM.join(workdir, rel), { force: true })
  replace(cfg, workdir, account)
  const { startTree, startObjects } = await freshGit(cfg, lower, workdir, kind === 'overlay' && !!b.find).catch((e: Error) => {
    // the agent can still work; its changes cannot come back (said in the report)
    copyProblem = `the copy's starting state could not be recorded, so the agent's changes cannot be handed back (${e.message})`
    return { startTree: '', startObjects: '' }
  })
  // the workspace leaves the view (an overlay keeps its own clone of the layer)
  await must('the workspace out of the view', b.umount, ['-l', lower])
  // no-follow, descriptor-relative (GNU chown -R -P); on an overlay a path something else removes from the
  // workspace meanwhile is no failure. With the workspace idmapped, only what set-up wrote in the upper layer.
  const list = ['-P', pathM.join(runDir, 'layers', 'upper'), '-mindepth', '1', '!', '-type', 'c', '-printf', '%P\\0']
  const fresh = kind === 'overlay' && !idmapNote ? (await must('hand the copy over', b.find, list)).toString().split('\0') : undefined
  const to = [workdir, home, tmp, ...(fresh ?? []).filter(Boolean).map(p => pathM.join(workdir, p))]
  const own = await run(b.chown, [...(fresh ? ['-h'] : ['-R', '-P']), `${account.uid}:${account.gid}`, '--', ...to])
  const failed = own.stderr.split('\n').filter(l => l.trim() && !(kind === 'overlay' && /No such file or directory/.test(l)))
  if (own.code !== 0 && (failed.length || kind !== 'overlay')) throw new Error(`hand the copy over: ${failed[0] ?? `exit ${own.code}`}`)
  // the hand-back compares only what the agent wrote: the upper layer's entries that set-up did not leave so
  const upper = kind === 'overlay' && b.find ? pathM.join(runDir, 'layers', 'upper') : undefined
  const upperSnapshot = upper ? await snapshotUpper(b.find, upper).catch(() => undefined) : undefined
  const copyNote = kind === 'overlay' ? idmapNote : undefined
  return { workdir, home, tmp, startTree, startObjects, kind, copyProblem, copyNote, ...(upperSnapshot ? { upper, upperSnapshot } : {}) }
}

/**
 * The copy as an overlay on `lower`; its upper layer, where the agent's changes land, is a root-only folder of the
 * run's tmpfs (`metacopy` when the files are chowned one by one: metadata only is copied up). Returns why not.
 */
export async function overlayCopy(cfg: ServerConfig, lower: string, workdir: string, metacopy: boolean): Promise<string | undefined> {
  const b = cfg.bins
  const upper = pathM.join(cfg.runDir as string, 'layers', 'upper')
  const work = pathM.join(cfg.runDir as string, 'layers', 'work')
  fs.mkdirSync(workdir, { mode: 0o700 })
  const opts = `nosuid,nodev,lowerdir=${lower},upperdir=${upper},workdir=${work},${metacopy ? 'metacopy=on' : 'metacopy=off,redirect_dir=off'}`
  let r = await upperLayer(cfg, lower, upper, work)
  if (r.code === 0) r = await run(b.mount, ['-t', 'overlay', '-o', opts, 'overlay', workdir])
  if (r.code === 0) return undefined
  for (const d of [upper, work]) fs.rmSync(d, { recursive: true, force: true })
  return firstLine(r)
}

/** The upper layer, owned as the copy's root, with whiteouts for the workspace's .git and the files withheld. */
async function upperLayer(cfg: ServerConfig, lower: string, upper: string, work: string): Promise<{ code: number | null; stderr: string }> {
  const b = cfg.bins
  for (const d of [upper, work]) fs.mkdirSync(d, { mode: 0o700 })
  const top = fs.statSync(lower) // the copy's root as the workspace's (as the sandbox user's when idmapped)
  fs.chownSync(upper, top.uid, top.gid)
  // the workspace's .git is not part of the copy, nor the files withheld (they hold a secret): whiteouts hide them
  for (const rel of withheld(cfg, lower)) {
    const parts = rel.split('/')
    for (let i = 1; i < parts.length; i++) {
      // the parent folders as in the workspace (an upper folder's owner and mode are the merged one's)
      const d = parts.slice(0, i).join('/')
      const st = fs.statSync(pathM.join(lower, d))
      fs.mkdirSync(pathM.join(upper, d), { recursive: true })
      fs.chownSync(pathM.join(upper, d), st.uid, st.gid)
      fs.chmodSync(pathM.join(upper, d), st.mode & 0o7777)
    }
    const w = await run(b.mknod, [pathM.join(upper, rel), 'c', '0', '0'])
    if (w.code !== 0) return w
  }
  return run(b.mknod, [pathM.join(upper, '.git'), 'c', '0', '0'])
}

/** perl (essential on Debian) for what util-linux 2.38 lacks: an idmapped bind (args: src, target, owner uid, user uid,
 * owner gid, user gid) by open_tree, mount_setattr, move_mount (same numbers on x86_64 and aarch64; unshare is not) */
const IDMAP = `use Config; my ($src, $dst, $o, $s, $og, $sg) = @ARGV; my $e = "";
pipe(my $r, my $w) or die "pipe: $!\\n"; pipe(my $r2, my $w2) or die "pipe: $!\\n";
my $pid = fork() // die "fork: $!\\n";
if (!$pid) { close $r; close $w2; syscall($Config{archname} =~ /aarch64/ ? 97 : 272, 0x10000000) == 0 or exit 1; syswrite $w, "1"; sysread $r2, my $x, 1; exit 0 }
close $w; close $r2; sysread($r, my $ok, 1) == 1 or die "no user namespace\\n";
for (["uid_map", "$o $s 1"], ["gid_map", "$og $sg 1"]) { my $f; open($f, ">", "/proc/$pid/$_->[0]") && syswrite($f, "$_->[1]\\n") or die "$_->[0]: $!\\n" }
open(my $ns, "<", "/proc/$pid/ns/user") or die "user namespace: $!\\n"; kill 9, $pid; waitpid $pid, 0;
my $fd = syscall(428, -100, $src, 0x80001); $fd >= 0 or die "open_tree: $!\\n";
syscall(442, $fd, $e, 0x1000, pack("Q4", 0x100000, 0, 0, fileno $ns), 32) == 0 or die "mount_setattr: $!\\n";
syscall(429, $fd, $e, -100, $dst, 4) == 0 or die "move_mount: $!\\n";`

/** The files to withhold (cfg.withhold) that are in `root`; one that cannot be checked is an error (never handed over). */
function withheld(cfg: ServerConfig, root: string): string[] {
  return (cfg.withhold ?? []).filter(rel => reached(root, rel, 'withhold'))
}

/** Whether `rel` is in `root` through real folders only (lstat: a link among the parents could point anywhere). */
function reached(root: string, rel: string, what: string): fs.Stats | undefined {
  const parts = rel.split('/')
  // the copy's own .git is made by set-up, never written from the action's word
  if (pathM.isAbsolute(rel) || parts[0] === '.git' || parts.some(p => !p || p === '.' || p === '..'))
    throw new Error(`cannot ${what} ${JSON.stringify(rel)}`)
  let st: fs.Stats | undefined
  for (let i = 0; i < parts.length; i++) {
    st = fs.lstatSync(pathM.join(root, ...parts.slice(0, i + 1)), { throwIfNoEntry: false })
    if (!st) return undefined
    if (i < parts.length - 1 && !st.isDirectory()) throw new Error(`cannot ${what} ${rel}: a parent is not a folder`)
  }
  return st
}

/**
 * The nested repositories' configs as the action cleaned them (cfg.replace: only keys known to be harmless), each
 * written over the copy's as a new file (a link or a hard link in its place is removed, never written through).
 */
function replace(cfg: ServerConfig, workdir: string, account: { uid: number; gid: number }): void {
  for (const { path: rel, content } of cfg.replace ?? []) {
    const st = reached(workdir, rel, 'replace')
    if (!st) continue // not in the copy (another file system, gone meanwhile): nothing of it reaches the agent
    if (st.isDirectory()) throw new Error(`cannot replace ${rel}: a folder`)
    const file = pathM.join(workdir, rel)
    fs.rmSync(file, { force: true }) // gone meanwhile (an overlay on the live workspace): written all the same
    fs.writeFileSync(file, content, { flag: 'wx', mode: st.isFile() ? st.mode & 0o666 : 0o644 })
    fs.chownSync(file, account.uid, account.gid)
  }
}

/** The copy as files from `lower`: GNU cp never follows symlinks in the source (-a implies -P). */
export async function plainCopy(cfg: ServerConfig, lower: string, workdir: string): Promise<string | undefined> {
  fs.mkdirSync(workdir, { mode: 0o700 })
  const entries = fs.readdirSync(lower).filter(n => n !== '.git')
  if (!entries.length) return undefined
  const c = await run(cfg.bins.cp, ['-a', '--', ...entries.map(n => pathM.join(lower, n)), workdir + '/'])
  // files that vanished or changed while copied (a step still writing) are said, not fatal; no room is fatal
  if (c.code === 0) return undefined
  const why = (c.stderr.trim() || `cp exit ${c.code}`).split('\n')[0]
  if (/No space left/.test(c.stderr)) throw new Error(`the copy does not fit in the run's memory (memory-limit): ${why}`)
  return `the copy may be incomplete: ${why}`
}

/**
 * The copy's own .git: the workspace's objects shared read-only, its commit checked out; returns the copy's tree at
 * start, but for an overlay (`viaUpper`): its hand-back reads the upper layer, so no store of the whole copy is made.
 */
export async function freshGit(cfg: ServerConfig, lower: string, workdir: string, viaUpper = false): Promise<Start> {
  const b = cfg.bins
  const runDir = cfg.runDir as string
  const SAFE_GIT = ['-c', 'safe.directory=*', '-c', 'core.fsmonitor=false', '-c', 'core.hooksPath=/dev/null']
  const git = (args: string[], env: Record<string, string> = {}) =>
    must(`git ${args[0]}`, b.git, [...SAFE_GIT, ...args], { cwd: workdir, env: { ...quietEnv, ...env } })
  await git(['init', '-q', '--template=', workdir])
  const dotGit = pathM.join(workdir, '.git')
  // the workspace's objects, bound read-only before the view was entered (bindWorkspace)
  const shared = pathM.join(runDir, 'objects')
  const hasShared = !!(cfg.objects && cfg.baseSha)
  if (hasShared) {
    fs.mkdirSync(pathM.join(dotGit, 'objects', 'info'), { recursive: true })
    fs.writeFileSync(pathM.join(dotGit, 'objects', 'info', 'alternates'), `${shared}\n`)
  }
  for (const [k, v] of cfg.remotes ?? []) await git(['config', '--local', k, v])
  if (cfg.baseSha) {
    fs.writeFileSync(pathM.join(dotGit, 'HEAD'), `${cfg.baseSha}\n`)
    // an overlay shows the workspace's own files: its index (unless split) keeps their stat data, so `git status` need
    // not rehash them; `read-tree -m` keeps it for the entries the commit has. The ownership the copy shows differs
    // from the workspace's (and a chown changes ctime): only size and mtime are checked.
    if (viaUpper) reuseIndex(lower, dotGit)
    await git(['config', '--local', 'core.checkStat', 'minimal'])
    await git(['config', '--local', 'core.trustctime', 'false'])
    const base = cfg.baseSha
    await git(['read-tree', '-m', base]).catch(() => git(['read-tree', base]))
  }
  if (viaUpper) return { startTree: '', startObjects: '' }
  // The state the agent starts from, to compute its changes against: its objects in a store of root's (readable,
  // not writable, by the agent), never the copy's .git, where the agent could forge the start under its name.
  const startIndex = pathM.join(runDir, 'layers', 'start-index')
  const startObjects = pathM.join(runDir, 'start-objects')
  fs.mkdirSync(startObjects, { mode: 0o755 })
  const stores = { GIT_OBJECT_DIRECTORY: startObjects, ...(hasShared ? { GIT_ALTERNATE_OBJECT_DIRECTORIES: shared } : {}) }
  // a path something else changes while it is read is left out (exit 1); one that vanishes between git's
  // listing and its reading fails that attempt (128), not five
  const addAll = () =>
    run(b.git, [...SAFE_GIT, 'add', '-A', '--ignore-errors'], {
      cwd: workdir,
      env: { ...quietEnv, ...stores, GIT_INDEX_FILE: startIndex, GLIBC_TUNABLES: 'glibc.malloc.top_pad=1048576' } // heap slack (src/sandbox/git-add.ts)
    })
  let added = await addAll()
  for (let i = 0; added.code !== 0 && added.code !== 1 && i < 4; i++) added = await addAll()
  if (added.code !== 0 && added.code !== 1) throw new Error(`git add: ${added.stderr.trim().split('\n')[0]}`)
  const startTree = (await git(['write-tree'], { ...stores, GIT_INDEX_FILE: startIndex })).toString().trim()
  fs.rmSync(startIndex, { force: true })
  return { startTree, startObjects: [startObjects, ...(hasShared ? [shared] : [])].join(':') }
}

/** The workspace's index in the copy (unless split): its stat data spares the agent's `git status` a rehash. */
function reuseIndex(lower: string, dotGit: string): void {
  const wsGit = pathM.join(lower, '.git')
  const wsIndex = pathM.join(wsGit, 'index')
  if (!fs.lstatSync(wsIndex, { throwIfNoEntry: false })?.isFile()) return
  if (fs.readdirSync(wsGit).some(n => n.startsWith('sharedindex.'))) return
  fs.copyFileSync(wsIndex, pathM.join(dotGit, 'index'))
  const st = fs.statSync(wsIndex) // its time as the workspace's: entries newer than it stay "racy" (rehashed)
  fs.utimesSync(pathM.join(dotGit, 'index'), st.atime, st.mtime)
}
