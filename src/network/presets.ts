// The `allowed-domains` presets: one word for the hosts an ecosystem's ordinary
// client needs (its registry, index and download hosts, looked up in each
// client's docs). Expanded here, on the action's side, into plain entries: the
// proxy gets host names, and the names of the presets only to say which one a
// refused host belongs to. A wildcard never reaches past the ecosystem's own
// domains. docs/network.md lists them (a test keeps the two equal).
import { entryText, parseEntry } from './allowlist'

export const PRESETS: Readonly<Record<string, readonly string[]>> = {
  // git over HTTPS, the API, release and raw downloads, LFS
  github: [
    'github.com',
    'api.github.com',
    'codeload.github.com',
    'uploads.github.com',
    'lfs.github.com',
    'objects.githubusercontent.com',
    'raw.githubusercontent.com',
    'release-assets.githubusercontent.com',
    'github-cloud.githubusercontent.com'
  ],
  // npm, yarn (classic and berry) and pnpm read the npm registry
  npm: ['registry.npmjs.org', 'registry.yarnpkg.com', 'repo.yarnpkg.com'],
  // pip, uv, poetry: the index and the files it links to
  pypi: ['pypi.org', 'files.pythonhosted.org', 'pypi.python.org'],
  // the go command's defaults: GOPROXY, GOSUMDB (toolchains come from the proxy too)
  go: ['proxy.golang.org', 'sum.golang.org'],
  // cargo's sparse index, its downloads and API; rustup's toolchains
  crates: ['crates.io', 'index.crates.io', 'static.crates.io', 'static.rust-lang.org'],
  // gem and bundler (the compact index is on index.rubygems.org)
  rubygems: ['rubygems.org', 'index.rubygems.org'],
  // Maven Central as Maven, the Maven wrapper and Gradle's mavenCentral() read it
  maven: ['repo.maven.apache.org', 'repo1.maven.org'],
  // the Gradle wrapper's distributions and the plugin portal
  gradle: ['services.gradle.org', 'downloads.gradle.org', 'plugins.gradle.org', 'plugins-artifacts.gradle.org'],
  // apt on Debian
  debian: ['deb.debian.org', 'security.debian.org'],
  // apt on Ubuntu (GitHub's runners use azure.archive.ubuntu.com; country mirrors are <cc>.archive.ubuntu.com)
  ubuntu: ['archive.ubuntu.com', '*.archive.ubuntu.com', 'security.ubuntu.com', 'ports.ubuntu.com']
}

export const PRESET_NAMES = Object.keys(PRESETS)

/** A single word that is a host name in its own right, not taken for an unknown preset. */
const SINGLE_WORD_HOSTS = new Set(['localhost'])

/**
 * The input's entries (lines or comma-separated), normalised: host names, `*.` wildcards, IP
 * addresses and preset names. Throws an Error naming the first bad one; an unknown single word
 * is refused with the list of presets (a typo of a preset must not pass as a host).
 */
export function parseAllowedInput(text: string): string[] {
  const out: string[] = []
  for (const raw of text.split(/[\r\n,]+/)) {
    const s = raw.trim()
    if (s === '') continue
    const word = s.toLowerCase()
    if (Object.hasOwn(PRESETS, word)) {
      out.push(word)
      continue
    }
    const e = parseEntry(s)
    if (typeof e === 'string') throw new Error(`"${s}" ${e}`)
    if (e.kind === 'name' && !e.name.includes('.') && !SINGLE_WORD_HOSTS.has(e.name))
      throw new Error(`"${s}" is not a preset (the presets: ${PRESET_NAMES.join(', ')}) nor a host name with a dot`)
    out.push(entryText(e))
  }
  return [...new Set(out)]
}

/** The entries with each preset replaced by its hosts: what the proxy allows. */
export function expandPresets(entries: readonly string[]): string[] {
  return [...new Set(entries.flatMap(e => (Object.hasOwn(PRESETS, e) ? PRESETS[e] : [e])))]
}
