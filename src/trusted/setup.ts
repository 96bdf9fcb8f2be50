// The command server's set-up in `user` mode: the sandbox user, and the agent's
// own copy of the workspace. Runs as root inside the server's namespaces.
import fs from 'node:fs'
import pathM from 'node:path'
import type { ServerConfig } from './protocol'
import { firstLine, must, quietEnv, run } from './exec'
import { runMemory } from './memory'
/** glibc's heap slack for a `git add` of many objects (see src/sandbox/git-add.ts) */
const GIT_MALLOC_ENV = { GLIBC_TUNABLES: 'glibc.malloc.top_pad=1048576' }
import { snapshotUpper } from './upper'

export interface CopyInfo {
  workdir: string
  home: string
  tmp: string
  startTree: string
  /** where the start tree's objects are (root's store, then the workspace's shared read-only), as GIT_ALTERNATE_OBJECT_DIRECTORIES */
  startObjects: string
  /** how the copy was made: `overlay` (nothing copied; what the agent changes is written beside the workspace) or `copy` */
  kind: 'overlay' | 'copy'
  copyProblem?: string
  /** the overlay's upper layer (what the agent writes), with how set-up left it (upper.ts) */
  upper?: string
  upperSnapshot?: Set<string>
  /** how the files were handed over, when it was the slow way */
  copyNote?: string
}

/** The sandbox user, created (when missing, unless it must be new); refused when it could reach root. */
export async function ensureUser(cfg: ServerConfig): Promise<{ uid: number; gid: number }> {
  const b = cfg.bins
  const name = cfg.user as string
  if (!/^[a-z_][a-z0-9_-]{0,30}$/.test(name)) throw new Error(`invalid user name "${name}"`)
  const lookup = (): { uid: number; gid: number } | undefined => {
    for (const line of fs.readFileSync('/etc/passwd', 'utf8').split('\n')) {
      const f = line.split(':')
      if (f[0] === name && f.length >= 7) return { uid: Number(f[2]), gid: Number(f[3]) }
    }
    return undefined
  }
  let account = lookup()
  // a run's own user must be new: one that exists belongs to someone else
  if (account && cfg.newUser) throw new Error(`the user ${name} already exists`)
  const args = [
    '--no-create-home',
    '--home-dir',
    '/nonexistent',
    '--shell',
    '/bin/bash',
    '--user-group',
    '--comment',
    'bash-agent action sandbox'
  ]
  for (let attempt = 0; !account && attempt < 6; attempt++) {
    // another run may be creating it, or holding the passwd lock
    const r = await run(b.useradd, [...args, name])
    if (r.code === 9 && cfg.newUser) throw new Error(`the user ${name} already exists`)
    account = lookup()
    if (!account) await new Promise(r => setTimeout(r, 200 + attempt * 300))
  }
  if (!account) throw new Error(`could not create the user ${name}`)
  if (account.uid === 0 || account.gid === 0) throw new Error(`the user ${name} has root's uid or gid`)
  const gid = account.gid
  const groups = fs
    .readFileSync('/etc/group', 'utf8')
    .split('\n')
    .map(l => l.split(':'))
    .filter(f => f.length >= 4 && (Number(f[2]) === gid || f[3].split(',').includes(name)))
    .map(f => f[0])
  const powerful = groups.filter(g => (cfg.powerfulGroups ?? []).includes(g))
  if (powerful.length) throw new Error(`the user ${name} is in the group ${powerful.join(', ')}`)
  if (b.sudo) {
    const l = await run(b.sudo, ['-n', '-l', '-U', name])
    if (/may run the following commands/i.test(l.stdout.toString())) throw new Error(`the user ${name} may use sudo`)
  }
  return account
}

/**
 * The agent's copy, built where only root can reach it and handed over when
 * complete: the workspace without its .git, plus a fresh .git that shares the
 * workspace's objects read-only, and no credential at any depth.
 */
export async function buildCopy(cfg: ServerConfig, account: { uid: number; gid: number }): Promise<CopyInfo> {
  const b = cfg.bins
  const runDir = cfg.runDir as string
  fs.mkdirSync(pathM.dirname(runDir), { recursive: true, mode: 0o711 })
  const parent = fs.lstatSync(pathM.dirname(runDir))
  if (!parent.isDirectory() || parent.uid !== 0 || (parent.mode & 0o022) !== 0)
    throw new Error(`${pathM.dirname(runDir)} is not a folder only root can write`)
  fs.chmodSync(pathM.dirname(runDir), 0o711)
  fs.mkdirSync(runDir, { mode: 0o700 }) // fails if it exists: never reuse a folder
  const workdir = pathM.join(runDir, pathM.basename(cfg.workspace) || 'repo')
  const home = pathM.join(runDir, 'home')
  const tmp = pathM.join(runDir, 'tmp')
  for (const d of [home, tmp]) fs.mkdirSync(d, { mode: 0o700 })
  if (cfg.namespaced) await runMemory(cfg)
  const idmap: { note?: string } = {}
  const why = await overlayCopy(cfg, runDir, workdir, account, idmap)
  const kind = why === undefined ? 'overlay' : 'copy'
  let copyProblem = kind === 'copy' ? await plainCopy(cfg, workdir) : undefined
  if (kind === 'copy') for (const rel of withheld(cfg, workdir)) fs.rmSync(pathM.join(workdir, rel), { force: true })
  replace(cfg, workdir, account)
  const { startTree, startObjects } = await freshGit(cfg, runDir, workdir, kind === 'overlay' && !!b.find).catch((e: Error) => {
    // the agent can still work; its changes cannot come back (said in the report)
    copyProblem = `the copy's starting state could not be recorded, so the agent's changes cannot be handed back (${e.message})`
    return { startTree: '', startObjects: '' }
  })
  // no-follow, descriptor-relative (GNU chown -R -P), while nobody but root can reach the folder; on an overlay a
  // path something else removes from the workspace meanwhile is no failure
  // with the workspace idmapped to the sandbox user, only what set-up wrote in the upper layer is handed over
  const list = ['-P', pathM.join(runDir, 'layers', 'upper'), '-mindepth', '1', '!', '-type', 'c', '-printf', '%P\\0']
  const fresh = kind === 'overlay' && !idmap.note ? (await must('hand the copy over', b.find, list)).toString().split('\0') : undefined
  const to = [workdir, home, tmp, ...(fresh ?? []).filter(Boolean).map(p => pathM.join(workdir, p))]
  const own = await run(b.chown, [...(fresh ? ['-h'] : ['-R', '-P']), `${account.uid}:${account.gid}`, '--', ...to])
  const failed = own.stderr.split('\n').filter(l => l.trim() && !(kind === 'overlay' && /No such file or directory/.test(l)))
  if (own.code !== 0 && (failed.length || kind !== 'overlay')) throw new Error(`hand the copy over: ${failed[0] ?? `exit ${own.code}`}`)
  fs.chmodSync(runDir, 0o711)
  // the hand-back compares only what the agent wrote: the upper layer's entries that set-up did not leave so
  const upper = kind === 'overlay' && b.find ? pathM.join(runDir, 'layers', 'upper') : undefined
  const upperSnapshot = upper ? await snapshotUpper(b.find, upper).catch(() => undefined) : undefined
  const copyNote = kind === 'overlay' ? idmap.note : undefined
  return { workdir, home, tmp, startTree, startObjects, kind, copyProblem, copyNote, ...(upperSnapshot ? { upper, upperSnapshot } : {}) }
}

/**
 * The copy as an overlay (in the server's own mount namespace, gone with it):
 * the workspace is the read-only lower layer; the upper layer, where the
 * agent's changes land, is on the run's tmpfs, which only root can reach directly. With
 * metacopy, handing the files over (chown) copies up their metadata only,
 * never their data; on tmpfs that costs a fraction of what it costs on disk
 * (about 2 KB of memory a file), and what the agent writes (in memory, swapped
 * like any tmpfs) vanishes with the namespace. Returns why not, when it cannot
 * be (then the files are copied).
 */
export async function overlayCopy(
  cfg: ServerConfig,
  runDir: string,
  workdir: string,
  account: { uid: number; gid: number },
  idmap: { note?: string }
): Promise<string | undefined> {
  const b = cfg.bins
  if (!cfg.namespaced || !b.mknod) return 'no mount namespace'
  const lower = fs.realpathSync(cfg.workspace)
  // the mount options are a comma-separated list: such a path cannot be said there
  if (/[,:\\\s]/.test(lower)) return 'the workspace path cannot be a layer'
  const layers = pathM.join(runDir, 'layers')
  const upper = pathM.join(layers, 'upper')
  const work = pathM.join(layers, 'work')
  // the lower layer by a neutral name: the overlay's options (in mountinfo) never name the workspace
  const neutral = pathM.join(runDir, 'lower')
  // the layers are folders of the run's one tmpfs (runMemory), mounted at `layers`
  for (const d of [workdir, neutral]) fs.mkdirSync(d, { mode: 0o700 })
  const steps: Array<() => Promise<{ code: number | null; stderr: string }>> = [
    async () => {
      // the workspace shown as the sandbox user's (an idmapped bind: its owner's ids read as the user's), so no file
      // is handed over one by one; else a plain bind, and every file is chowned (slower, as safe)
      const ws = fs.statSync(lower)
      const ids = [ws.uid, account.uid, ws.gid, account.gid].map(String)
      const r = b.perl && b.find ? await run(b.perl, ['-e', IDMAP, lower, neutral, ...ids]) : { code: 1, stderr: 'no perl or find' }
      if (r.code === 0) return r
      idmap.note = `the workspace could not be idmapped (${firstLine(r)}): its files were handed over one by one`
      return run(b.mount, ['--bind', lower, neutral])
    },
    () => upperLayer(cfg, lower, neutral, upper, work),
    () =>
      run(b.mount, [
        '-t',
        'overlay',
        '-o',
        `nosuid,nodev,lowerdir=${neutral},upperdir=${upper},workdir=${work},${idmap.note ? 'metacopy=on' : 'metacopy=off,redirect_dir=off'}`,
        'overlay',
        workdir
      ]),
    // the overlay keeps its own clone of the layer: the bind goes
    () => run(b.umount, ['-l', neutral])
  ]
  for (const step of steps) {
    const r = await step()
    if (r.code === 0) continue
    if (b.umount) for (const d of [workdir, neutral]) await run(b.umount, [d]) // not mounted: nothing to do
    try {
      for (const d of [upper, work]) fs.rmSync(d, { recursive: true, force: true })
      fs.rmdirSync(workdir)
      fs.rmdirSync(neutral)
    } catch (e) {
      throw new Error(`the overlay could not be made, nor its remains removed: ${(e as Error).message}`)
    }
    return (r.stderr.trim() || `exit ${r.code}`).split('\n')[0]
  }
  return undefined
}

/** The upper layer, owned as the copy's root, with whiteouts for the workspace's .git and the files withheld. */
async function upperLayer(
  cfg: ServerConfig,
  lower: string,
  neutral: string,
  upper: string,
  work: string
): Promise<{ code: number | null; stderr: string }> {
  const b = cfg.bins
  for (const d of [upper, work]) fs.mkdirSync(d, { mode: 0o700 })
  const top = fs.statSync(neutral) // the copy's root as the workspace's (as the sandbox user's when idmapped)
  fs.chownSync(upper, top.uid, top.gid)
  // the workspace's .git is not part of the copy, nor the files withheld (they hold a secret): whiteouts hide them
  for (const rel of withheld(cfg, lower)) {
    const parts = rel.split('/')
    for (let i = 1; i < parts.length; i++) {
      // the parent folders as in the workspace (an upper folder's owner and mode are the merged one's)
      const d = parts.slice(0, i).join('/')
      const st = fs.statSync(pathM.join(neutral, d))
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

/**
 * The files to withhold (cfg.withhold, workspace-relative) that are in `root`, each reached through real
 * folders only (lstat, no symlink followed: a link among the parents could point anywhere); one that cannot
 * be checked is an error (the run stops rather than hand over a secret).
 */
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

/** The copy as files: GNU cp never follows symlinks in the source (-a implies -P); blocks shared where the file system can. */
export async function plainCopy(cfg: ServerConfig, workdir: string): Promise<string | undefined> {
  fs.mkdirSync(workdir, { mode: 0o700 })
  // nothing of another file system (as the overlay's bind, and the action's walk that cleans nested configs): -x
  const dev = fs.statSync(cfg.workspace).dev
  const entries = fs
    .readdirSync(cfg.workspace)
    .filter(n => n !== '.git' && fs.lstatSync(pathM.join(cfg.workspace, n), { throwIfNoEntry: false })?.dev === dev)
  if (!entries.length) return undefined
  if (cfg.namespaced) {
    // a device node or setuid file copied from the workspace is of no use to the agent: nodev, nosuid
    await must('the copy without devices', cfg.bins.mount, ['--bind', workdir, workdir])
    await must('the copy without devices', cfg.bins.mount, ['-o', 'remount,bind,nosuid,nodev', workdir])
  }
  const c = await run(cfg.bins.cp, ['-a', '-x', '--reflink=auto', '--', ...entries.map(n => pathM.join(cfg.workspace, n)), workdir + '/'])
  // files that vanished or changed while copied (a step still writing) are said, not fatal
  return c.code === 0 ? undefined : `the copy may be incomplete: ${(c.stderr.trim() || `cp exit ${c.code}`).split('\n')[0]}`
}

/**
 * The copy's own .git: the workspace's objects shared read-only, its commit checked out; returns the copy's tree at
 * start, but for an overlay (`viaUpper`): its hand-back reads the upper layer, so no store of the whole copy is made.
 */
export async function freshGit(
  cfg: ServerConfig,
  runDir: string,
  workdir: string,
  viaUpper = false
): Promise<{ startTree: string; startObjects: string }> {
  const b = cfg.bins
  const SAFE_GIT = ['-c', 'safe.directory=*', '-c', 'core.fsmonitor=false', '-c', 'core.hooksPath=/dev/null']
  const git = (args: string[], env: Record<string, string> = {}) =>
    must(`git ${args[0]}`, b.git, [...SAFE_GIT, ...args], {
      cwd: workdir,
      env: { ...quietEnv, ...env }
    })
  await git(['init', '-q', '--template=', workdir])
  const dotGit = pathM.join(workdir, '.git')
  const shared = pathM.join(runDir, 'objects')
  const hasShared = !!(cfg.objects && cfg.baseSha && cfg.namespaced)
  await objectsOf(cfg, runDir, dotGit, hasShared)
  for (const [k, v] of cfg.remotes ?? []) await git(['config', '--local', k, v])
  if (cfg.baseSha) {
    fs.writeFileSync(pathM.join(dotGit, 'HEAD'), `${cfg.baseSha}\n`)
    // an overlay shows the workspace's own files: its index (unless split) keeps their stat data, so `git status` need
    // not rehash them; `read-tree -m` keeps it for the entries the commit has. The ownership the copy shows differs
    // from the workspace's (and a chown changes ctime): only size and mtime are checked.
    if (viaUpper) reuseIndex(cfg, dotGit)
    await git(['config', '--local', 'core.checkStat', 'minimal'])
    await git(['config', '--local', 'core.trustctime', 'false'])
    const base = cfg.baseSha
    await git(['read-tree', '-m', base]).catch(() => git(['read-tree', base]))
  }
  if (viaUpper) return { startTree: '', startObjects: '' }
  // The state the agent starts from, to compute its changes against: its objects in a store of root's (readable,
  // not writable, by the agent), never the copy's .git, where the agent could forge the start under its name.
  const startIndex = pathM.join(runDir, 'start-index')
  const startObjects = pathM.join(runDir, 'start-objects')
  fs.mkdirSync(startObjects, { mode: 0o755 })
  const stores = { GIT_OBJECT_DIRECTORY: startObjects, ...(hasShared ? { GIT_ALTERNATE_OBJECT_DIRECTORIES: shared } : {}) }
  try {
    // the copy may be an overlay on the live workspace: a path something else changes while it is read is left
    // out (exit 1); one that vanishes between git's listing and its reading fails that attempt (128), not five
    const addAll = () =>
      run(b.git, [...SAFE_GIT, 'add', '-A', '--ignore-errors'], {
        cwd: workdir,
        env: { ...quietEnv, ...GIT_MALLOC_ENV, ...stores, GIT_INDEX_FILE: startIndex }
      })
    let added = await addAll()
    for (let i = 0; added.code !== 0 && added.code !== 1 && i < 4; i++) added = await addAll()
    if (added.code !== 0 && added.code !== 1) throw new Error(`git add: ${added.stderr.trim().split('\n')[0]}`)
    const startTree = (await git(['write-tree'], { ...stores, GIT_INDEX_FILE: startIndex })).toString().trim()
    return { startTree, startObjects: [startObjects, ...(hasShared ? [shared] : [])].join(':') }
  } finally {
    fs.rmSync(startIndex, { force: true })
  }
}

/** The copy's objects: the workspace's shared read-only (namespaced), else copied; none without a base commit. */
async function objectsOf(cfg: ServerConfig, runDir: string, dotGit: string, hasShared: boolean): Promise<void> {
  const b = cfg.bins
  const shared = pathM.join(runDir, 'objects')
  if (hasShared) {
    // the workspace's objects, read-only, visible only inside this namespace
    fs.mkdirSync(shared, { mode: 0o755 })
    // through a read-only overlay on a neutral bind, lazily unmounted: the mount table never names the workspace
    const held = pathM.join(runDir, 'objects-lower')
    const empty = pathM.join(runDir, 'objects-empty')
    for (const d of [held, empty]) fs.mkdirSync(d, { mode: 0o700 })
    await must('share the objects', b.mount, ['--bind', cfg.objects as string, held])
    const ov = await run(b.mount, ['-t', 'overlay', '-o', `ro,nosuid,nodev,lowerdir=${held}:${empty}`, 'overlay', shared])
    if (ov.code === 0) await must('share the objects', b.umount, ['-l', held])
    else {
      await must('share the objects', b.mount, ['--bind', cfg.objects as string, shared])
      await must('share the objects read-only', b.mount, ['-o', 'remount,bind,ro', shared])
      await run(b.umount, [held])
    }
    fs.mkdirSync(pathM.join(dotGit, 'objects', 'info'), { recursive: true })
    fs.writeFileSync(pathM.join(dotGit, 'objects', 'info', 'alternates'), `${shared}\n`)
  } else if (cfg.objects && cfg.baseSha) {
    await must('copy the objects', b.cp, ['-a', '--reflink=auto', '--', cfg.objects + '/.', pathM.join(dotGit, 'objects') + '/'])
  }
}

/** The workspace's index in the copy (unless split): its stat data spares the agent's `git status` a rehash. */
function reuseIndex(cfg: ServerConfig, dotGit: string): void {
  const wsGit = pathM.join(cfg.workspace, '.git')
  const wsIndex = pathM.join(wsGit, 'index')
  if (!fs.lstatSync(wsIndex, { throwIfNoEntry: false })?.isFile()) return
  if (fs.readdirSync(wsGit).some(n => n.startsWith('sharedindex.'))) return
  fs.copyFileSync(wsIndex, pathM.join(dotGit, 'index'))
  const st = fs.statSync(wsIndex) // its time as the workspace's: entries newer than it stay "racy" (rehashed)
  fs.utimesSync(pathM.join(dotGit, 'index'), st.atime, st.mtime)
}
