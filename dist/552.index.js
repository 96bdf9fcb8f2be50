export const id = 552;
export const ids = [552];
export const modules = {

/***/ 7730:
/***/ ((__unused_webpack_module, __webpack_exports__, __webpack_require__) => {


// EXPORTS
__webpack_require__.d(__webpack_exports__, {
  vk: () => (/* binding */ addUsage),
  D5: () => (/* binding */ contextWindowOf),
  a3: () => (/* binding */ estimateCost),
  UK: () => (/* binding */ formatUsd)
});

// UNUSED EXPORTS: billedInputTokens, priceOf

;// CONCATENATED MODULE: ./src/agent/prices.ts
const M = 1_000_000;
const K200 = 200_000;
const PRICES = {
    // Fable / Mythos (Mythos is limited availability; same prices as the Fable of the same version)
    'claude-fable-5-1': { input: 10, output: 50, cacheWrite: 12.5, cacheRead: 0.25, contextWindow: M },
    'claude-mythos-5-1': { input: 10, output: 50, cacheWrite: 12.5, cacheRead: 0.25, contextWindow: M },
    'claude-fable-5': { input: 10, output: 50, cacheWrite: 12.5, cacheRead: 1, contextWindow: M },
    'claude-mythos-5': { input: 10, output: 50, cacheWrite: 12.5, cacheRead: 1, contextWindow: M },
    // Opus
    'claude-opus-5-5': { input: 4, output: 20, cacheWrite: 5, cacheRead: 0.2, contextWindow: M },
    'claude-opus-5': { input: 5, output: 25, cacheWrite: 6.25, cacheRead: 0.5, contextWindow: M },
    'claude-opus-4-8': { input: 5, output: 25, cacheWrite: 6.25, cacheRead: 0.5, contextWindow: M },
    'claude-opus-4-7': { input: 5, output: 25, cacheWrite: 6.25, cacheRead: 0.5, contextWindow: M },
    'claude-opus-4-6': { input: 5, output: 25, cacheWrite: 6.25, cacheRead: 0.5, contextWindow: M },
    'claude-opus-4-5': { input: 5, output: 25, cacheWrite: 6.25, cacheRead: 0.5, contextWindow: K200 },
    'claude-opus-4-1': { input: 15, output: 75, cacheWrite: 18.75, cacheRead: 1.5, contextWindow: K200 },
    'claude-opus-4': { input: 15, output: 75, cacheWrite: 18.75, cacheRead: 1.5, contextWindow: K200 },
    // Sonnet
    'claude-sonnet-5-5': { input: 2, output: 10, cacheWrite: 2.5, cacheRead: 0.1, contextWindow: M },
    'claude-sonnet-5': { input: 2, output: 10, cacheWrite: 2.5, cacheRead: 0.2, contextWindow: M },
    'claude-sonnet-4-6': { input: 3, output: 15, cacheWrite: 3.75, cacheRead: 0.3, contextWindow: M },
    'claude-sonnet-4-5': { input: 3, output: 15, cacheWrite: 3.75, cacheRead: 0.3, contextWindow: K200 },
    'claude-sonnet-4': { input: 3, output: 15, cacheWrite: 3.75, cacheRead: 0.3, contextWindow: K200 },
    // Haiku
    'claude-haiku-5-5': { input: 0.1, output: 0.5, cacheWrite: 0.125, cacheRead: 0.01, contextWindow: M },
    'claude-haiku-4-5': { input: 1, output: 5, cacheWrite: 1.25, cacheRead: 0.1, contextWindow: K200 },
    // Claude 3.x
    'claude-3-7-sonnet': { input: 3, output: 15, cacheWrite: 3.75, cacheRead: 0.3, contextWindow: K200 },
    'claude-3-5-sonnet': { input: 3, output: 15, cacheWrite: 3.75, cacheRead: 0.3, contextWindow: K200 },
    'claude-3-5-haiku': { input: 0.8, output: 4, cacheWrite: 1, cacheRead: 0.08, contextWindow: K200 },
    'claude-3-opus': { input: 15, output: 75, cacheWrite: 18.75, cacheRead: 1.5, contextWindow: K200 },
    'claude-3-haiku': { input: 0.25, output: 1.25, cacheWrite: 0.3, cacheRead: 0.03, contextWindow: K200 }
};

;// CONCATENATED MODULE: ./src/agent/cost.ts

const DEFAULT_CONTEXT_WINDOW = 200_000;
// Longest first, so `claude-opus-4-1` is tried before `claude-opus-4`.
const KEYS = Object.keys(PRICES).sort((a, b) => b.length - a.length);
const isIdChar = (c) => c !== undefined && /[a-z0-9]/.test(c);
/**
 * The price of a model, or undefined when it is not in the table. Matches the bare id
 * (`claude-sonnet-4-5`), dated ids (`claude-sonnet-4-5-20250929`), `-latest` aliases, Bedrock ids
 * (`anthropic.claude-sonnet-4-5-20250929-v1:0`, `us.anthropic...`, inference-profile ARNs),
 * Vertex ids (`claude-sonnet-4-5@20250929`) and `[1m]` suffixes. The longest key that occurs in
 * the id as a whole segment wins: `claude-opus-4-1-20250805` is Opus 4.1, not Opus 4, and
 * `claude-opus-4-20250514` is Opus 4.
 */
function priceOf(model) {
    // Lower case, and `4.5` written as `4-5` (some gateways spell versions with a dot).
    const id = model.trim().toLowerCase().replace(/(\d)\.(?=\d)/g, '$1-');
    if (!id)
        return undefined;
    for (const key of KEYS) {
        let at = id.indexOf(key);
        while (at !== -1) {
            if (!isIdChar(id[at - 1]) && !isIdChar(id[at + key.length]))
                return PRICES[key];
            at = id.indexOf(key, at + 1);
        }
    }
    return undefined;
}
/** Estimated dollars for `usage` on `model`; null when the model's prices are unknown. */
function estimateCost(model, usage) {
    const p = priceOf(model);
    if (!p)
        return null;
    return ((usage.inputTokens * p.input +
        usage.outputTokens * p.output +
        usage.cacheCreationTokens * p.cacheWrite +
        usage.cacheReadTokens * p.cacheRead) /
        1_000_000);
}
/** Dollars as a plain decimal with 4 places: `0.0421`, `0.0000` for 0. No currency sign. */
function formatUsd(n) {
    if (!Number.isFinite(n))
        return '0.0000';
    const s = n.toFixed(4);
    return s === '-0.0000' ? '0.0000' : s;
}
/** Adds an API response's usage (snake_case, fields may be null or missing) into `total`. */
function addUsage(total, u) {
    total.inputTokens += u.input_tokens ?? 0;
    total.outputTokens += u.output_tokens ?? 0;
    total.cacheReadTokens += u.cache_read_input_tokens ?? 0;
    total.cacheCreationTokens += u.cache_creation_input_tokens ?? 0;
}
/**
 * Input tokens weighted by what they are billed at relative to plain input, with Anthropic's
 * published prompt-caching multipliers: a 5-minute cache write costs 1.25x input, a cache read
 * 0.1x. The same multipliers for every model, so the benchmark compares runs, not price lists.
 */
function billedInputTokens(usage) {
    return usage.inputTokens + 1.25 * usage.cacheCreationTokens + 0.1 * usage.cacheReadTokens;
}
/** The model's context window in tokens; 200000 when the model is unknown. */
function contextWindowOf(model) {
    return priceOf(model)?.contextWindow ?? DEFAULT_CONTEXT_WINDOW;
}


/***/ }),

/***/ 7611:
/***/ ((__unused_webpack_module, __webpack_exports__, __webpack_require__) => {

/* harmony export */ __webpack_require__.d(__webpack_exports__, {
/* harmony export */   Fp: () => (/* binding */ permissionOf),
/* harmony export */   Qh: () => (/* binding */ ReportComment),
/* harmony export */   Qi: () => (/* binding */ createOctokit),
/* harmony export */   U_: () => (/* binding */ addEyes)
/* harmony export */ });
/* unused harmony export PROGRESS_INTERVAL_MS */
/* harmony import */ var _actions_github__WEBPACK_IMPORTED_MODULE_0__ = __webpack_require__(1758);
/* harmony import */ var _octokit_plugin_retry__WEBPACK_IMPORTED_MODULE_1__ = __webpack_require__(9735);
/* harmony import */ var _octokit_plugin_throttling__WEBPACK_IMPORTED_MODULE_2__ = __webpack_require__(6856);
// GitHub at the edge: the eyes reaction, the one report comment (created at
// start, updated while the agent works, finished at the end) and permission
// look-ups. Every body passes through the redactor on its way out.



/** Progress updates are at most this often; GitHub limits content-creating requests. */
const PROGRESS_INTERVAL_MS = 3000;
function createOctokit(token, log) {
    const options = {
        log: { debug: () => { }, info: () => { }, warn: log, error: log },
        throttle: {
            onRateLimit: (after, _o, _k, count) => {
                log(`GitHub rate limit hit; retrying in ${after} s`);
                return count < 2;
            },
            onSecondaryRateLimit: (after, _o, _k, count) => {
                log(`GitHub secondary rate limit hit; retrying in ${after} s`);
                return count < 2;
            }
        },
        retry: { retries: 3 }
    };
    return _actions_github__WEBPACK_IMPORTED_MODULE_0__/* .getOctokit */ .Q(token, options, _octokit_plugin_retry__WEBPACK_IMPORTED_MODULE_1__/* .retry */ .L, _octokit_plugin_throttling__WEBPACK_IMPORTED_MODULE_2__/* .throttling */ .A);
}
async function permissionOf(octokit, repo, login) {
    const { data } = await octokit.rest.repos.getCollaboratorPermissionLevel({ ...repo, username: login });
    // role_name tells maintain and triage apart; the legacy permission folds them into write and read.
    return data.role_name || data.permission;
}
async function addEyes(octokit, repo, target) {
    const content = 'eyes';
    if (target.subject === 'issue_comment') {
        await octokit.rest.reactions.createForIssueComment({ ...repo, comment_id: target.id, content });
    }
    else if (target.subject === 'review_comment') {
        await octokit.rest.reactions.createForPullRequestReviewComment({ ...repo, comment_id: target.id, content });
    }
    else {
        await octokit.rest.reactions.createForIssue({ ...repo, issue_number: target.id, content });
    }
}
/** The report comment: one comment per run, created once and then only updated. */
class ReportComment {
    octokit;
    repo;
    thread;
    redact;
    log;
    ref;
    creating;
    pending;
    timer;
    inflight;
    lastSent = 0;
    finished = false;
    constructor(octokit, repo, thread, redact, log, existing) {
        this.octokit = octokit;
        this.repo = repo;
        this.thread = thread;
        this.redact = redact;
        this.log = log;
        this.ref = existing;
    }
    get comment() {
        return this.ref;
    }
    /** Creates the comment; failures are logged, and finish() tries again. */
    start(body) {
        this.creating ??= this.create(body).catch(error => {
            this.log(`Could not create the progress comment: ${error.message}`);
            this.creating = undefined;
            return undefined;
        });
        return this.creating;
    }
    /** Shows progress, at most once every PROGRESS_INTERVAL_MS; only the newest body is sent. */
    progress(body) {
        if (this.finished)
            return;
        this.pending = body;
        if (this.timer || this.inflight)
            return;
        const wait = Math.max(0, this.lastSent + PROGRESS_INTERVAL_MS - Date.now());
        this.timer = setTimeout(() => this.flush(), wait);
    }
    /** The final body; throws when it could not be written after retries. */
    async finish(body) {
        this.finished = true;
        clearTimeout(this.timer);
        this.timer = undefined;
        this.pending = undefined;
        await this.inflight;
        await this.creating;
        if (!this.ref)
            return this.create(body);
        await this.update(body);
        return this.ref;
    }
    flush() {
        this.timer = undefined;
        const body = this.pending;
        if (body === undefined || this.finished)
            return;
        this.pending = undefined;
        this.inflight = (async () => {
            const ref = this.ref ?? (await this.creating);
            if (!ref || this.finished)
                return;
            await this.update(body);
        })()
            .catch(error => this.log(`Could not update the progress comment: ${error.message}`))
            .finally(() => {
            this.inflight = undefined;
            this.lastSent = Date.now();
            if (this.pending !== undefined && !this.finished)
                this.progress(this.pending);
        });
    }
    async create(body) {
        const text = this.redact(body);
        if (this.thread.kind === 'issue') {
            const { data } = await this.octokit.rest.issues.createComment({ ...this.repo, issue_number: this.thread.number, body: text });
            this.ref = { kind: 'issue', id: data.id, url: data.html_url };
        }
        else {
            const { data } = await this.octokit.rest.pulls.createReplyForReviewComment({
                ...this.repo,
                pull_number: this.thread.pullNumber,
                comment_id: this.thread.commentId,
                body: text
            });
            this.ref = { kind: 'review', id: data.id, url: data.html_url };
        }
        this.lastSent = Date.now();
        return this.ref;
    }
    async update(body) {
        const ref = this.ref;
        if (!ref)
            return;
        const text = this.redact(body);
        if (ref.kind === 'issue') {
            await this.octokit.rest.issues.updateComment({ ...this.repo, comment_id: ref.id, body: text });
        }
        else {
            await this.octokit.rest.pulls.updateReviewComment({ ...this.repo, comment_id: ref.id, body: text });
        }
    }
}


/***/ }),

/***/ 649:
/***/ ((__unused_webpack_module, __webpack_exports__, __webpack_require__) => {

/* harmony export */ __webpack_require__.d(__webpack_exports__, {
/* harmony export */   LK: () => (/* binding */ scrubEnv),
/* harmony export */   pO: () => (/* binding */ Redactor),
/* harmony export */   zr: () => (/* binding */ secretsFromEnv)
/* harmony export */ });
/* unused harmony exports REDACTED, MIN_SECRET_LENGTH, isSecretName */
// The one home of secret redaction. Every text that leaves the process (comments,
// step summary, outputs, transcripts, logs) passes through a Redactor, and every
// command the agent runs gets an environment cleaned by scrubEnv.
//
// For each known secret S the redactor searches for:
//   - S itself, also with any of its non-alphanumeric characters percent-encoded
//     (hex case-insensitive, `+` for space), JSON-escaped or HTML-escaped;
//   - the stable "core" of base64 / base64url of any text holding S, at each of
//     the 3 byte alignments, so S is caught inside `base64("x-access-token:" + S)`
//     (how actions/checkout stores the token in .git/config), `echo $S | base64`...;
//   - the exact base64 of `x-access-token:S`.
// Whatever their value, it also removes token-shaped strings: GitHub tokens
// (ghp_ gho_ ghu_ ghs_ ghr_ github_pat_), Anthropic keys (sk-ant-) and JWTs.
/** What every secret form is replaced by. */
const REDACTED = '***';
/** Secret values shorter than this (after trim) are ignored. */
const MIN_SECRET_LENGTH = 8;
/**
 * Token-shaped strings matched whatever their value. Each is a fixed prefix and
 * one greedy character class, so a start either succeeds by taking the whole run
 * or fails within a few characters: no catastrophic backtracking.
 */
const TOKEN_SOURCES = [
    'gh[pousr]_[A-Za-z0-9]{20,}',
    'github_pat_[A-Za-z0-9_]{20,}',
    'sk-ant-[A-Za-z0-9_-]{10,}'
];
/** Length floor reported by maxFormLength: GitHub tokens and Anthropic keys are shorter. */
const TOKEN_CONTEXT = 256;
/**
 * Dotted base64url words, starting only at the beginning of a run (the
 * lookbehind), so the scan is linear; JWTs are looked for inside each word.
 */
const DOTTED_WORD = /(?<![A-Za-z0-9_-])[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+){2,}/g;
const JWT_PART_MIN = 10;
const X_ACCESS_TOKEN = 'x-access-token:';
function escapeRegExp(s) {
    return s.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}
/** `%2F` → `%2[fF]`: percent-encoding with case-insensitive hex digits. */
function percentPattern(bytes) {
    let out = '';
    for (const b of bytes) {
        const hex = b.toString(16).toUpperCase().padStart(2, '0');
        out += '%';
        for (const d of hex)
            out += /[A-F]/.test(d) ? `[${d}${d.toLowerCase()}]` : d;
    }
    return out;
}
const HTML_ESCAPES = {
    '&': ['&amp;'],
    '<': ['&lt;'],
    '>': ['&gt;'],
    '"': ['&quot;', '&#34;'],
    "'": ['&#39;', '&#x27;']
};
/**
 * S as is, where each non-alphanumeric character may also appear
 * percent-encoded, JSON-escaped or HTML-escaped.
 */
function textForm(secret) {
    let source = '';
    let length = 0;
    for (const ch of secret) {
        if (/^[A-Za-z0-9]$/.test(ch)) {
            source += ch;
            length += 1;
            continue;
        }
        const bytes = Buffer.from(ch, 'utf8');
        const alternatives = [percentPattern(bytes)];
        let longest = bytes.length * 3;
        const json = JSON.stringify(ch).slice(1, -1);
        const escapes = [...(HTML_ESCAPES[ch] ?? [])];
        if (json !== ch)
            escapes.push(json);
        if (ch === '/')
            escapes.push('\\/');
        for (const e of escapes) {
            alternatives.push(escapeRegExp(e));
            longest = Math.max(longest, e.length);
        }
        if (ch === ' ')
            alternatives.push('\\+');
        alternatives.push(escapeRegExp(ch));
        source += `(?:${alternatives.join('|')})`;
        length += Math.max(longest, ch.length);
    }
    return { source, length };
}
function literal(text) {
    return { source: escapeRegExp(text), length: text.length };
}
function toBase64Url(b64) {
    return b64.replace(/\+/g, '-').replace(/\//g, '_');
}
/**
 * For each byte alignment k, the part of base64(k bytes + S) that depends on S
 * only: it appears in the base64 of any text holding S at that alignment.
 */
function base64Cores(secret) {
    const bytes = Buffer.from(secret, 'utf8');
    const cores = [];
    for (let k = 0; k < 3; k++) {
        const encoded = Buffer.concat([Buffer.alloc(k), bytes]).toString('base64');
        const start = k > 0 ? 4 : 0;
        const end = (k + bytes.length) % 3 !== 0 ? encoded.length - 4 : encoded.length;
        const core = encoded.slice(start, end);
        if (core.length >= 8)
            cores.push(core);
    }
    return cores;
}
function formsOf(secret) {
    const forms = [textForm(secret)];
    const exact = Buffer.from(X_ACCESS_TOKEN + secret, 'utf8').toString('base64');
    forms.push(literal(exact));
    for (const core of base64Cores(secret)) {
        forms.push(literal(core));
        const url = toBase64Url(core);
        if (url !== core)
            forms.push(literal(url));
    }
    return forms;
}
/** Replace JWT-looking runs (`eyJ….eyJ….…`, each part 10+ chars) inside dotted words. */
function redactJwts(text) {
    if (!text.includes('eyJ'))
        return text;
    return text.replace(DOTTED_WORD, word => {
        if (!word.includes('eyJ'))
            return word;
        const parts = word.split('.');
        const out = [];
        let i = 0;
        while (i < parts.length) {
            if (i + 2 < parts.length) {
                const first = parts[i];
                const at = first.indexOf('eyJ');
                if (at >= 0 &&
                    first.length - at >= JWT_PART_MIN &&
                    parts[i + 1].startsWith('eyJ') &&
                    parts[i + 1].length >= JWT_PART_MIN &&
                    parts[i + 2].length >= JWT_PART_MIN) {
                    out.push(first.slice(0, at) + REDACTED);
                    i += 3;
                    continue;
                }
            }
            out.push(parts[i]);
            i++;
        }
        return out.join('.');
    });
}
class Redactor {
    #secrets = new Set();
    #forms = new Map();
    #pattern = null;
    #maxFormLength = TOKEN_CONTEXT;
    constructor(secrets) {
        if (secrets)
            for (const s of secrets)
                this.add(s);
    }
    /**
     * Add a secret value. Values shorter than 8 characters (after trim) are
     * ignored: redacting "true" or "1" would wreck output. A multi-line value also
     * adds each of its lines (8+ chars), as output often shows it line by line.
     */
    add(secret) {
        if (typeof secret !== 'string')
            return;
        const value = secret.trim();
        if (value.length < MIN_SECRET_LENGTH || this.#secrets.has(value))
            return;
        this.#secrets.add(value);
        for (const form of formsOf(value)) {
            if (!this.#forms.has(form.source)) {
                this.#forms.set(form.source, form.length);
                this.#maxFormLength = Math.max(this.#maxFormLength, form.length);
                this.#pattern = null;
            }
        }
        if (/[\r\n]/.test(value))
            for (const line of value.split(/\r?\n|\r/))
                this.add(line);
    }
    /** Number of distinct secret values known. */
    get size() {
        return this.#secrets.size;
    }
    /**
     * The longest text any form can match (at least 256, which covers GitHub
     * tokens and Anthropic keys): keep this much context around a cut.
     */
    get maxFormLength() {
        return this.#maxFormLength;
    }
    #compiled() {
        if (this.#pattern === null) {
            const sources = [...this.#forms.entries()].sort((a, b) => b[1] - a[1]).map(([source]) => source);
            this.#pattern = new RegExp([...sources, ...TOKEN_SOURCES].join('|'), 'g');
        }
        return this.#pattern;
    }
    /** Replace every known form of every secret, and every token-shaped string, by `***`. Pure; never throws. */
    redact(text) {
        try {
            const s = typeof text === 'string' ? text : String(text);
            if (s.length === 0)
                return s;
            return redactJwts(s.replace(this.#compiled(), REDACTED));
        }
        catch {
            return `${REDACTED} (redaction failed)`;
        }
    }
    /** True when redact would change the text. */
    contains(text) {
        return this.redact(text) !== text;
    }
    /**
     * Redact every string inside a JSON-like value (deep copy, keys included),
     * for transcripts and outputs. Arrays, plain objects, Maps and Sets are
     * copied; Errors become Errors with redacted name, message and stack; other
     * non-plain objects are copied with their own enumerable properties. Never throws.
     */
    redactDeep(value) {
        try {
            return this.#deep(value, new Map());
        }
        catch {
            return (typeof value === 'string' ? this.redact(value) : REDACTED);
        }
    }
    #deep(value, seen) {
        if (typeof value === 'string')
            return this.redact(value);
        if (value === null || typeof value !== 'object')
            return value;
        const known = seen.get(value);
        if (known !== undefined)
            return known;
        if (Array.isArray(value)) {
            const out = [];
            seen.set(value, out);
            for (const item of value)
                out.push(this.#deep(item, seen));
            return out;
        }
        if (value instanceof Date)
            return new Date(value.getTime());
        if (value instanceof Map) {
            const out = new Map();
            seen.set(value, out);
            for (const [k, v] of value)
                out.set(this.#deep(k, seen), this.#deep(v, seen));
            return out;
        }
        if (value instanceof Set) {
            const out = new Set();
            seen.set(value, out);
            for (const v of value)
                out.add(this.#deep(v, seen));
            return out;
        }
        if (value instanceof Error) {
            const out = new Error(this.redact(value.message));
            seen.set(value, out);
            out.name = this.redact(value.name);
            out.stack = value.stack === undefined ? undefined : this.redact(value.stack);
            for (const [k, v] of Object.entries(value)) {
                if (k !== 'message' && k !== 'name' && k !== 'stack')
                    out[this.redact(k)] = this.#deep(v, seen);
            }
            return out;
        }
        if (ArrayBuffer.isView(value))
            return value;
        const out = Object.create(Object.getPrototypeOf(value));
        seen.set(value, out);
        for (const [k, v] of Object.entries(value))
            out[this.redact(k)] = this.#deep(v, seen);
        return out;
    }
}
const SECRET_NAMES = new Set([
    'ANTHROPIC_API_KEY',
    'ANTHROPIC_AUTH_TOKEN',
    'GITHUB_TOKEN',
    'GH_TOKEN',
    'ACTIONS_RUNTIME_TOKEN',
    'ACTIONS_ID_TOKEN_REQUEST_TOKEN',
    'INPUT_ANTHROPIC_API_KEY',
    'INPUT_GITHUB_TOKEN'
]);
/** AUTH, but not AUTHOR (GIT_AUTHOR_NAME); AUTHORIZATION still counts. */
const SECRET_NAME = /TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|PRIVATE_?KEY|CREDENTIAL|ACCESS_?KEY|AUTH(?!OR(?!I))/i;
function normalName(name) {
    return name.replace(/-/g, '_').toUpperCase();
}
/** Whether a variable name looks like it holds a secret (hyphens count as underscores). */
function isSecretName(name) {
    const n = normalName(name);
    return SECRET_NAMES.has(n) || SECRET_NAME.test(n);
}
/**
 * Secret values found in an environment: values (length >= 8 after trim) of
 * variables whose names look secret. Values are returned as found, without duplicates.
 */
function secretsFromEnv(env) {
    const out = [];
    const seen = new Set();
    for (const [name, value] of Object.entries(env)) {
        if (typeof value !== 'string' || !isSecretName(name))
            continue;
        if (value.trim().length < MIN_SECRET_LENGTH || seen.has(value))
            continue;
        seen.add(value);
        out.push(value);
    }
    return out;
}
/**
 * Runner file-command paths: a command writing to them would change the
 * environment, PATH, outputs or summary of later steps of the job.
 */
const FILE_COMMANDS = new Set(['GITHUB_ENV', 'GITHUB_PATH', 'GITHUB_OUTPUT', 'GITHUB_STATE', 'GITHUB_STEP_SUMMARY']);
/** Whether a variable must never reach a command the agent runs, whatever its value. */
function isForbiddenName(name) {
    const n = normalName(name);
    return (n.startsWith('INPUT_') ||
        n.startsWith('ANTHROPIC_') ||
        n.startsWith('ACTIONS_') ||
        FILE_COMMANDS.has(n) ||
        isSecretName(name));
}
/**
 * The environment for a command the agent runs: drops INPUT_*, ANTHROPIC_*,
 * ACTIONS_*, GITHUB_TOKEN, GH_TOKEN, runner file-command paths (GITHUB_ENV,
 * GITHUB_PATH, GITHUB_OUTPUT, GITHUB_STATE, GITHUB_STEP_SUMMARY), every
 * secret-looking name, every variable whose value holds a known secret or a
 * token-shaped string, and undefined values. Everything else is kept.
 */
function scrubEnv(env, redactor) {
    const out = {};
    for (const [name, value] of Object.entries(env)) {
        if (typeof value !== 'string' || isForbiddenName(name))
            continue;
        if (redactor.contains(value) || redactor.contains(name))
            continue;
        out[name] = value;
    }
    return out;
}


/***/ }),

/***/ 6340:
/***/ ((__unused_webpack_module, __webpack_exports__, __webpack_require__) => {

/* harmony export */ __webpack_require__.d(__webpack_exports__, {
/* harmony export */   Br: () => (/* binding */ renderSummary),
/* harmony export */   EY: () => (/* binding */ renderProgress),
/* harmony export */   Pl: () => (/* binding */ headline),
/* harmony export */   RR: () => (/* binding */ renderFinal)
/* harmony export */ });
/* unused harmony exports COMMENT_LIMIT, SUMMARY_LIMIT, footer, renderCommand, renderLog */
/* harmony import */ var _trigger__WEBPACK_IMPORTED_MODULE_2__ = __webpack_require__(2523);
/* harmony import */ var _untrusted__WEBPACK_IMPORTED_MODULE_0__ = __webpack_require__(873);
/* harmony import */ var _agent_cost__WEBPACK_IMPORTED_MODULE_1__ = __webpack_require__(7730);
// RunResult -> markdown for the comment (65,536 characters at most) and the
// job summary (1 MiB at most). Command output is data: it sits in a fence it
// cannot close, and mentions in it are neutralised.



const COMMENT_LIMIT = 65536;
const SUMMARY_LIMIT = 1024 * 1024 - 16 * 1024;
/** output shown per command in the comment; the summary shows it all */
const COMMENT_OUTPUT_CHARS = 2000;
/** One line saying how the run ended, when it did not simply finish. */
function headline(o, meta) {
    const done = `${o.commands.length} command${o.commands.length === 1 ? '' : 's'} ran in ${o.turns} turn${o.turns === 1 ? '' : 's'}; the log below shows what was done.`;
    const reasons = {
        max_turns: `⚠️ **Stopped at the turn limit** (max-turns: ${meta.limits.maxTurns}) before the agent finished. ${done}`,
        timeout: `⚠️ **Stopped at the time limit** (timeout-minutes: ${meta.limits.timeoutMinutes}) before the agent finished. ${done}`,
        budget: `⚠️ **Stopped at the cost limit**: the estimated cost $${(0,_agent_cost__WEBPACK_IMPORTED_MODULE_1__/* .formatUsd */ .UK)(o.costUsd ?? 0)} passed max-cost-usd (${meta.limits.maxCostUsd}). ${done}`,
        max_tokens: `⚠️ **The model's reply was cut short** at max-tokens (${meta.limits.maxTokens}); a command it was writing was not run. ${done}`,
        refusal: `⚠️ **The model declined to continue** (stop reason: refusal). ${done}`,
        model_context_window_exceeded: `⚠️ **The conversation outgrew the model's context window**, so the run ended. ${done}`,
        cancelled: `🛑 **Cancelled**: the job was cancelled while the agent was working. ${done}`,
        error: `❌ **The run failed**: ${o.error ?? 'unknown error'} ${done}`
    };
    return reasons[o.exitReason];
}
function footer(o, meta) {
    const parts = [
        `model ${meta.model}`,
        `${o.turns} turn${o.turns === 1 ? '' : 's'}`,
        `${o.commands.length} command${o.commands.length === 1 ? '' : 's'}`,
        tokens(o.usage),
        o.costUsd === null ? undefined : `~$${(0,_agent_cost__WEBPACK_IMPORTED_MODULE_1__/* .formatUsd */ .UK)(o.costUsd)}`,
        `${(meta.elapsedMs / 1000).toFixed(0)} s`,
        `sandbox: ${meta.sandbox}`,
        meta.runUrl ? `[run log](${meta.runUrl})` : undefined
    ].filter(Boolean);
    return `<sub>${parts.join(' · ')}</sub>`;
}
function tokens(u) {
    const n = (x) => x.toLocaleString('en-US');
    const cache = u.cacheReadTokens || u.cacheCreationTokens
        ? ` (cache: ${n(u.cacheReadTokens)} read, ${n(u.cacheCreationTokens)} written)`
        : '';
    return `${n(u.inputTokens)} in / ${n(u.outputTokens)} out tokens${cache}`;
}
/** One command as markdown: a header line and a fenced block with the command and its output. */
function renderCommand(rec, index, maxOutput) {
    const status = rec.blocked
        ? 'refused (blocked)'
        : rec.timedOut
            ? 'timed out'
            : rec.aborted
                ? 'stopped'
                : rec.exitCode === null
                    ? 'no exit code'
                    : `exit ${rec.exitCode}`;
    const icon = rec.exitCode === 0 && !rec.timedOut && !rec.blocked ? '✅' : '⚠️';
    let output = rec.output;
    if (output.length > maxOutput) {
        const half = Math.floor(maxOutput / 2);
        output = `${output.slice(0, half)}\n[... ${output.length - 2 * half} characters trimmed here; the job summary has the whole output ...]\n${output.slice(-half)}`;
    }
    const body = (0,_untrusted__WEBPACK_IMPORTED_MODULE_0__/* .neutraliseMentions */ .yY)(`$ ${rec.command}\n${output}`);
    const fence = (0,_untrusted__WEBPACK_IMPORTED_MODULE_0__/* .fenceFor */ .Lt)(body);
    return `${icon} **${index + 1}** · ${status} · ${(rec.durationMs / 1000).toFixed(1)} s${rec.truncated ? ' · output cut' : ''}\n\n${fence}console\n${body}\n${fence}\n`;
}
/**
 * The log of commands within `budget` characters: all of them when they fit,
 * else the first and the last ones with a line saying how many were left out.
 */
function renderLog(commands, budget, maxOutput, whereAll) {
    const blocks = commands.map((c, i) => renderCommand(c, i, maxOutput));
    const total = (bs) => bs.reduce((n, b) => n + b.length + 1, 0);
    if (total(blocks) <= budget)
        return blocks.join('\n');
    let head = 0;
    let tail = 0;
    let used = 200; // room for the omission line
    // Take from both ends alternately so the start and the end both show.
    for (let turn = 0; head + tail < blocks.length; turn++) {
        const takeHead = turn % 2 === 0;
        const b = takeHead ? blocks[head] : blocks[blocks.length - 1 - tail];
        if (used + b.length + 1 > budget)
            break;
        used += b.length + 1;
        if (takeHead)
            head++;
        else
            tail++;
    }
    const left = blocks.length - head - tail;
    const gap = `*… ${left} command${left === 1 ? '' : 's'} left out here to fit; ${whereAll} has them all.*\n`;
    return [...blocks.slice(0, head), gap, ...blocks.slice(blocks.length - tail)].join('\n');
}
function details(summary, inner) {
    return `<details><summary>${summary}</summary>\n\n${inner}\n</details>`;
}
/** The final comment: headline, the model's final text, the command log, the footer. */
function renderFinal(o, meta, limit = COMMENT_LIMIT) {
    return renderReport(o, meta, limit, COMMENT_OUTPUT_CHARS, 'the job summary');
}
/** The job summary: the same report with every command's whole output. */
function renderSummary(o, meta) {
    return renderReport(o, meta, SUMMARY_LIMIT, Number.MAX_SAFE_INTEGER, 'the transcript artifact');
}
function renderReport(o, meta, limit, maxOutput, whereAll) {
    const head = headline(o, meta);
    let text = (0,_untrusted__WEBPACK_IMPORTED_MODULE_0__/* .stripImages */ .Dy)((0,_untrusted__WEBPACK_IMPORTED_MODULE_0__/* .neutraliseMentions */ .yY)(o.finalText.trim()));
    if (!text && !head)
        text = '_The agent finished without a final message._';
    const foot = footer(o, meta);
    const logTitle = `Commands (${o.commands.length})`;
    const fixed = [_trigger__WEBPACK_IMPORTED_MODULE_2__/* .MARKER */ .tl, head ?? '', '', '', details(logTitle, ''), foot].join('\n\n').length + 64;
    // The log is trimmed first; the final text only when it alone does not fit.
    const maxText = Math.max(0, limit - fixed - 2000);
    if (text.length > maxText) {
        text = `${text.slice(0, maxText)}\n\n*[… ${text.length - maxText} characters of the final text cut to fit]*`;
    }
    const logBudget = limit - fixed - text.length;
    const log = o.commands.length
        ? details(logTitle, renderLog(o.commands, logBudget, maxOutput, whereAll))
        : '_No commands were run._';
    return [_trigger__WEBPACK_IMPORTED_MODULE_2__/* .MARKER */ .tl, head, text, log, foot].filter(s => s !== undefined && s !== '').join('\n\n');
}
/** The progress comment while the agent works. */
function renderProgress(o, meta, current) {
    const lines = o.commands.map(c => {
        const mark = c.exitCode === 0 && !c.timedOut && !c.blocked ? '✅' : '⚠️';
        const first = c.command.split('\n')[0];
        const cmd = first.length > 120 ? `${first.slice(0, 120)}…` : first;
        return `${mark} \`${(0,_untrusted__WEBPACK_IMPORTED_MODULE_0__/* .neutraliseMentions */ .yY)(cmd).replace(/`/g, "'")}\` · ${c.blocked ? 'refused' : c.timedOut ? 'timed out' : `exit ${c.exitCode ?? '-'}`} · ${(c.durationMs / 1000).toFixed(1)} s`;
    });
    if (current !== undefined) {
        const first = current.split('\n')[0];
        lines.push(`⏳ \`${(0,_untrusted__WEBPACK_IMPORTED_MODULE_0__/* .neutraliseMentions */ .yY)(first.length > 120 ? `${first.slice(0, 120)}…` : first).replace(/`/g, "'")}\``);
    }
    const status = `⏳ **Working on it** (turn ${o.turns}, ${(meta.elapsedMs / 1000).toFixed(0)} s)${meta.runUrl ? ` · [follow the run](${meta.runUrl})` : ''}`;
    let shown = lines;
    if (lines.join('\n').length > 50000) {
        const keep = lines.slice(-200);
        shown = [`*… ${lines.length - keep.length} earlier commands*`, ...keep];
    }
    const body = [_trigger__WEBPACK_IMPORTED_MODULE_2__/* .MARKER */ .tl, status, shown.length ? shown.join('\n') : '_Starting…_', footer(o, meta)].join('\n\n');
    return body.length <= COMMENT_LIMIT ? body : body.slice(0, COMMENT_LIMIT);
}


/***/ }),

/***/ 8750:
/***/ ((__unused_webpack_module, __webpack_exports__, __webpack_require__) => {

/* harmony export */ __webpack_require__.d(__webpack_exports__, {
/* harmony export */   GN: () => (/* binding */ SettingsError),
/* harmony export */   sb: () => (/* binding */ readSettings)
/* harmony export */ });
/* unused harmony exports DEFAULT_BLOCKED, DEFAULT_MODEL */
/* harmony import */ var _actions_core__WEBPACK_IMPORTED_MODULE_0__ = __webpack_require__(6257);
// Every input read and validated once. A bad value fails the step with one
// line naming the input, before any network call.

const DEFAULT_BLOCKED = ['rm -rf /', 'sudo', 'shutdown', 'reboot', '> /dev/'];
const DEFAULT_MODEL = 'claude-sonnet-4-6';
class SettingsError extends Error {
}
/** Reads INPUT_* like the runner passes them. `env` is the process environment (for fallbacks). */
function readSettings(env = process.env) {
    const input = (name) => _actions_core__WEBPACK_IMPORTED_MODULE_0__/* .getInput */ .V4(name);
    const explicit = (name) => env[`INPUT_${name.replace(/ /g, '_').toUpperCase()}`] !== undefined;
    const baseUrl = input('anthropic-base-url') || env.ANTHROPIC_BASE_URL || undefined;
    const apiKey = input('anthropic-api-key') || env.ANTHROPIC_API_KEY || '';
    const authToken = baseUrl ? undefined : env.ANTHROPIC_AUTH_TOKEN || undefined;
    if (!apiKey && !authToken) {
        throw new SettingsError('Input anthropic-api-key is required: set it (for example `anthropic-api-key: ${{ secrets.ANTHROPIC_API_KEY }}`) or provide ANTHROPIC_API_KEY in the environment.');
    }
    if (baseUrl !== undefined) {
        try {
            new URL(baseUrl);
        }
        catch {
            throw new SettingsError(`Input anthropic-base-url must be a URL, got "${baseUrl}".`);
        }
    }
    // An explicitly empty list allows every command; an absent input means the defaults.
    const blocked = explicit('blocked-commands') ? lines(input('blocked-commands')) : [...DEFAULT_BLOCKED];
    const sandbox = (input('sandbox') || 'user').trim().toLowerCase();
    if (sandbox !== 'user' && sandbox !== 'none') {
        throw new SettingsError(`Input sandbox must be "user" or "none", got "${sandbox}".`);
    }
    const issue = input('issue-number');
    return {
        task: input('task').trim(),
        triggerPhrase: input('trigger-phrase').trim() || '/agent',
        apiKey,
        baseUrl,
        authToken,
        model: input('model').trim() || env.MODEL_ID || DEFAULT_MODEL,
        githubToken: input('github-token') || env.GITHUB_TOKEN || '',
        issueNumber: issue ? positiveInt('issue-number', issue) : undefined,
        maxTurns: positiveInt('max-turns', input('max-turns'), 50),
        maxTokens: positiveInt('max-tokens', input('max-tokens'), 8000),
        commandTimeoutMs: positiveInt('command-timeout', input('command-timeout'), 120) * 1000,
        maxOutputChars: positiveInt('max-output-chars', input('max-output-chars'), 50000),
        blocked,
        allowedUsers: lines(input('allowed-users')).map(u => u.replace(/^@/, '')),
        appendSystemPrompt: input('append-system-prompt').trim(),
        sandbox,
        timeoutMinutes: positiveInt('timeout-minutes', input('timeout-minutes'), 30),
        maxCostUsd: positiveNumber('max-cost-usd', input('max-cost-usd'))
    };
}
function lines(text) {
    return text
        .split(/\r?\n/)
        .map(l => l.trim())
        .filter(l => l !== '');
}
function positiveInt(name, raw, fallback) {
    const text = raw.trim();
    if (text === '' && fallback !== undefined)
        return fallback;
    if (!/^\d+$/.test(text) || Number(text) < 1 || !Number.isSafeInteger(Number(text))) {
        throw new SettingsError(`Input ${name} must be a positive whole number, got "${raw}".`);
    }
    return Number(text);
}
function positiveNumber(name, raw) {
    const text = raw.trim().replace(/^\$/, '');
    if (text === '')
        return undefined;
    const n = Number(text);
    if (!/^\d*\.?\d+$/.test(text) || !(n > 0) || !Number.isFinite(n)) {
        throw new SettingsError(`Input ${name} must be a positive number of dollars (e.g. 2.50), got "${raw}".`);
    }
    return n;
}


/***/ }),

/***/ 9121:
/***/ ((__unused_webpack_module, __webpack_exports__, __webpack_require__) => {

/* harmony export */ __webpack_require__.d(__webpack_exports__, {
/* harmony export */   c: () => (/* binding */ writeTranscript),
/* harmony export */   l: () => (/* binding */ readTranscript)
/* harmony export */ });
/* harmony import */ var node_fs__WEBPACK_IMPORTED_MODULE_0__ = __webpack_require__(3024);
/* harmony import */ var node_fs__WEBPACK_IMPORTED_MODULE_0___default = /*#__PURE__*/__webpack_require__.n(node_fs__WEBPACK_IMPORTED_MODULE_0__);
/* harmony import */ var node_path__WEBPACK_IMPORTED_MODULE_1__ = __webpack_require__(6760);
/* harmony import */ var node_path__WEBPACK_IMPORTED_MODULE_1___default = /*#__PURE__*/__webpack_require__.n(node_path__WEBPACK_IMPORTED_MODULE_1__);
// The run saved as it goes: a JSON file under RUNNER_TEMP that the post step
// can finish a report from, and users can upload as an artifact.


function writeTranscript(path, t, redactDeep) {
    (0,node_fs__WEBPACK_IMPORTED_MODULE_0__.mkdirSync)((0,node_path__WEBPACK_IMPORTED_MODULE_1__.dirname)(path), { recursive: true });
    // Write then rename, so a reader (the post step) never sees half a file.
    const tmp = `${path}.tmp`;
    (0,node_fs__WEBPACK_IMPORTED_MODULE_0__.writeFileSync)(tmp, JSON.stringify(redactDeep(t), null, 1), { mode: 0o600 });
    (0,node_fs__WEBPACK_IMPORTED_MODULE_0__.renameSync)(tmp, path);
}
function readTranscript(path) {
    try {
        return JSON.parse((0,node_fs__WEBPACK_IMPORTED_MODULE_0__.readFileSync)(path, 'utf8'));
    }
    catch {
        return undefined;
    }
}


/***/ }),

/***/ 2523:
/***/ ((__unused_webpack_module, __webpack_exports__, __webpack_require__) => {

/* harmony export */ __webpack_require__.d(__webpack_exports__, {
/* harmony export */   LD: () => (/* binding */ decide),
/* harmony export */   tl: () => (/* binding */ MARKER)
/* harmony export */ });
/* unused harmony export taskAfterPhrase */
/** Hidden in every comment the action writes, so it never answers itself. */
const MARKER = '<!-- bash-agent-action -->';
/* eslint-disable @typescript-eslint/no-explicit-any */
function decide(eventName, payload, settings) {
    const skip = (reason) => ({ run: false, reason });
    const action = payload?.action;
    const comment = payload?.comment;
    const issue = payload?.issue;
    const pr = payload?.pull_request;
    const people = [];
    const addPerson = (u) => {
        if (u?.login && !people.some(p => p.login === u.login))
            people.push({ login: u.login, type: u.type ?? 'User' });
    };
    const isComment = eventName === 'issue_comment' || eventName === 'pull_request_review_comment';
    if (isComment) {
        if (action !== 'created')
            return skip(`the comment was ${action ?? 'changed'}, not created`);
        if (typeof comment?.body === 'string' && comment.body.includes(MARKER)) {
            return skip('the comment is one of this action\'s own reports');
        }
        addPerson(comment?.user);
    }
    if (eventName === 'issues') {
        if (action !== 'opened' && action !== 'labeled')
            return skip(`issue event "${action}" does not start a run`);
        if (action === 'opened')
            addPerson(issue?.user);
    }
    addPerson(payload?.sender);
    const context = {};
    const thread = threadOf(eventName, payload, settings);
    let reactTo;
    if (eventName === 'issue_comment' && comment?.id)
        reactTo = { subject: 'issue_comment', id: comment.id };
    else if (eventName === 'pull_request_review_comment' && comment?.id)
        reactTo = { subject: 'review_comment', id: comment.id };
    else if (eventName === 'issues' && issue?.number)
        reactTo = { subject: 'issue', id: issue.number };
    const subject = issue ?? pr;
    if (subject?.number) {
        context.issueNumber = subject.number;
        context.issueTitle = subject.title ?? '';
        context.issueBody = subject.body ?? '';
        context.isPullRequest = Boolean(pr || issue?.pull_request);
    }
    if (eventName === 'pull_request_review_comment') {
        context.reviewPath = comment?.path;
        context.reviewDiffHunk = comment?.diff_hunk;
    }
    const make = (prompt, source) => ({
        run: true,
        task: { prompt, thread, reactTo, people, context, source }
    });
    if (settings.task)
        return make(settings.task, 'the task input');
    const phrase = settings.triggerPhrase;
    if (isComment) {
        const prompt = taskAfterPhrase(comment?.body ?? '', phrase);
        if (prompt === undefined)
            return skip(`the comment does not contain ${phrase}`);
        return make(prompt, eventName === 'issue_comment' ? 'an issue comment' : 'a review comment');
    }
    if (eventName === 'issues') {
        const title = issue?.title ?? '';
        const body = issue?.body ?? '';
        if (action === 'labeled') {
            const label = payload?.label?.name ?? '';
            if (!sameLabel(label, phrase))
                return skip(`the label "${label}" is not ${phrase}`);
            return make(`${title}\n\n${body}`.trim(), 'a labelled issue');
        }
        const fromBody = taskAfterPhrase(body, phrase);
        if (fromBody !== undefined)
            return make(fromBody, 'an opened issue');
        const fromTitle = taskAfterPhrase(title, phrase);
        if (fromTitle !== undefined)
            return make(fromTitle === title ? `${title}\n\n${body}`.trim() : fromTitle, 'an opened issue');
        return skip(`the issue does not contain ${phrase}`);
    }
    return skip(`event ${eventName} carries no comment or issue with ${phrase}; set the task input to run on it`);
}
/** The text after the phrase; the whole text when nothing follows; undefined when the phrase is absent. */
function taskAfterPhrase(text, phrase) {
    const escaped = phrase.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    // The phrase must stand alone: "/agent" does not match "/agents" or "x/agent".
    const match = new RegExp(`(^|[\\s(])${escaped}(?=$|[\\s:,.!?)])`, 'i').exec(text);
    if (!match)
        return undefined;
    const after = text
        .slice(match.index + match[0].length)
        .replace(/^[:,]/, '')
        .trim();
    return after || text.trim();
}
function sameLabel(label, phrase) {
    const norm = (s) => s.trim().toLowerCase().replace(/^\//, '');
    return label !== '' && norm(label) === norm(phrase);
}
function threadOf(eventName, payload, settings) {
    if (eventName === 'pull_request_review_comment' && payload?.comment?.id && payload?.pull_request?.number) {
        // Replies to replies are not supported by the API: answer the thread's first comment.
        return {
            kind: 'review',
            pullNumber: payload.pull_request.number,
            commentId: payload.comment.in_reply_to_id ?? payload.comment.id
        };
    }
    const number = payload?.issue?.number ?? payload?.pull_request?.number ?? settings.issueNumber;
    return number ? { kind: 'issue', number } : undefined;
}


/***/ }),

/***/ 6141:
/***/ ((__unused_webpack_module, __webpack_exports__, __webpack_require__) => {

/* harmony export */ __webpack_require__.d(__webpack_exports__, {
/* harmony export */   l: () => (/* binding */ emptyUsage)
/* harmony export */ });
const emptyUsage = () => ({
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheCreationTokens: 0
});


/***/ }),

/***/ 873:
/***/ ((__unused_webpack_module, __webpack_exports__, __webpack_require__) => {

/* harmony export */ __webpack_require__.d(__webpack_exports__, {
/* harmony export */   Dy: () => (/* binding */ stripImages),
/* harmony export */   Lt: () => (/* binding */ fenceFor),
/* harmony export */   Pz: () => (/* binding */ stripHidden),
/* harmony export */   yY: () => (/* binding */ neutraliseMentions)
/* harmony export */ });
// Text from issues, comments and the model is data, not instructions: helpers to
// take out what a human reader would not see (so the model cannot be steered by
// hidden text), to keep shown text from pinging people or closing its code
// block, and to keep a crafted reply from making GitHub fetch an attacker's URL.
/**
 * Invisible characters: Unicode's Default_Ignorable_Code_Point covers zero-width
 * characters (U+200B-U+200F, U+2060-U+2064, U+FEFF, U+180E), the soft hyphen,
 * bidi controls (U+061C, U+202A-U+202E, U+2066-U+2069), tag characters
 * (U+E0000-U+E007F), variation selectors, Hangul fillers and other invisible
 * format characters.
 */
const INVISIBLE = /\p{Default_Ignorable_Code_Point}/gu;
const PICTOGRAPH = /^[\p{Extended_Pictographic}\p{Emoji_Modifier}\uFE0F]$/u;
const EXT_PICTOGRAPH = /^\p{Extended_Pictographic}$/u;
const DEFAULT_IGNORABLE = /^\p{Default_Ignorable_Code_Point}$/u;
/** Letters of scripts whose spelling uses ZWNJ/ZWJ (Persian, Hindi, Malayalam, Sinhala...). */
const JOINING_SCRIPT = /^(?=[\p{L}\p{M}])[\p{scx=Arabic}\p{scx=Syriac}\p{scx=Thaana}\p{scx=Nko}\p{scx=Mongolian}\p{scx=Devanagari}\p{scx=Bengali}\p{scx=Gurmukhi}\p{scx=Gujarati}\p{scx=Oriya}\p{scx=Tamil}\p{scx=Telugu}\p{scx=Kannada}\p{scx=Malayalam}\p{scx=Sinhala}]$/u;
/** HTML comments, including `<!-->`, `<!--->`, those closed by `--!>` and an unterminated one (to the end). */
const HTML_COMMENT = /<!--(?:-?>|[\s\S]*?--!?>|[\s\S]*$)/g;
/** Link reference definitions pointing nowhere, the markdown "comment" idiom: `[//]: # (hidden)`, `[x]: <> "hidden"`. */
const MARKDOWN_COMMENT = /^ {0,3}\[[^\]\n]+\]:[ \t]*(?:#|<>)(?:[ \t].*)?$/gm;
/** A line end followed by 3 or more blank lines. */
const BLANK_RUN = /(\r?\n)(?:[ \t]*\r?\n){3,}/g;
function codePointBefore(text, index) {
    if (index <= 0)
        return undefined;
    const low = text.charCodeAt(index - 1);
    if (low >= 0xdc00 && low <= 0xdfff && index >= 2) {
        const high = text.charCodeAt(index - 2);
        if (high >= 0xd800 && high <= 0xdbff)
            return text.codePointAt(index - 2);
    }
    return low;
}
function is(re, cp) {
    return cp !== undefined && re.test(String.fromCodePoint(cp));
}
/**
 * Keeps what emoji and some scripts need: a zero-width joiner between two
 * pictographs (👩‍💻), ZWNJ/ZWJ between two letters of a script whose spelling
 * uses them (Persian می‌خواهم), and a single text/emoji presentation selector
 * (U+FE0E/U+FE0F) right after a visible character. Everything else invisible
 * goes, including joiners inside Latin words and runs of variation selectors
 * (which can smuggle bytes after an emoji).
 */
function removeInvisible(text) {
    return text.replace(INVISIBLE, (ch, offset, whole) => {
        const before = codePointBefore(whole, offset);
        const after = whole.codePointAt(offset + ch.length);
        if (ch === '\u200c' || ch === '\u200d') {
            if (is(JOINING_SCRIPT, before) && is(JOINING_SCRIPT, after))
                return ch;
            if (ch === '\u200d' && is(PICTOGRAPH, before) && is(EXT_PICTOGRAPH, after))
                return ch;
            return '';
        }
        if (ch === '\ufe0f' || ch === '\ufe0e') {
            return before !== undefined && !is(DEFAULT_IGNORABLE, before) && !/\s/.test(String.fromCodePoint(before)) ? ch : '';
        }
        return '';
    });
}
/**
 * Strip hidden markdown from untrusted text: HTML comments (`<!-- ... -->`, also
 * unterminated at the end), `[//]: # (...)` comments, zero-width characters,
 * bidi controls, Unicode tag characters and other invisible format characters;
 * collapse runs of more than 2 blank lines. Visible text is kept unchanged
 * (HTML comments inside code blocks are removed too). Idempotent.
 */
function stripHidden(text) {
    let out = typeof text === 'string' ? text : String(text ?? '');
    // Removing one thing can make another (`<!<!-- -->-- x -->`): repeat until stable.
    for (let i = 0; i < 10; i++) {
        const next = removeInvisible(out).replace(HTML_COMMENT, '').replace(MARKDOWN_COMMENT, '');
        if (next === out)
            break;
        out = next;
    }
    return out.replace(BLANK_RUN, '$1$1$1');
}
/**
 * Make text safe to show inside GitHub markdown as data: a U+200B goes after
 * every `@` that starts a mention (`@octocat`, `@org/team`), so nobody is
 * pinged. An `@` right after a letter or digit (a@b.com) is left alone, as
 * GitHub does not read it as a mention.
 */
function neutraliseMentions(text) {
    return text.replace(/(?<![A-Za-z0-9])@(?=[A-Za-z0-9])/g, '@\u200b');
}
/** A fence of backticks longer than any run of backticks inside text (at least 3), so the text can never close its code block. */
function fenceFor(text) {
    let longest = 0;
    for (const run of text.match(/`+/g) ?? [])
        longest = Math.max(longest, run.length);
    return '`'.repeat(Math.max(3, longest + 1));
}
/** Tags that make GitHub fetch a URL (or that wrap such tags). */
const MEDIA_TAG_NAMES = 'img|image|picture|source|video|audio|track|embed|object|iframe|input|svg';
const MEDIA_TAG = new RegExp(`<\\/?(?:${MEDIA_TAG_NAMES})\\b(?:[^>"']|"[^"]*"|'[^']*')*>?`, 'gi');
const MEDIA_TAG_START = new RegExp(`<(?=\\/?(?:${MEDIA_TAG_NAMES})\\b)`, 'gi');
/**
 * `![alt](url "title")`: the alt text allows one level of nested brackets and
 * escapes; the destination is `<...>` or has balanced parentheses. Alternatives
 * start with distinct characters and whitespace runs are taken atomically
 * (`(?=(?<w>\s*))\k<w>`), so matching stays linear.
 */
const INLINE_IMAGE = new RegExp([
    String.raw `(?<slashes>\\*)!\[(?<alt>(?:[^[\]\\]|\\[\s\S]|\[(?:[^[\]\\]|\\[\s\S])*\])*)\]`,
    String.raw `\((?=(?<w1>\s*))\k<w1>`,
    String.raw `(?:<(?<angled>[^<>\n]*)>|(?<bare>(?:[^\s()\\]|\\[\s\S]|\((?:[^\s()\\]|\\[\s\S])*\))*))`,
    String.raw `(?=(?<w2>\s*))\k<w2>(?:(?:"[^"]*"|'[^']*'|\([^()]*\))(?=(?<w3>\s*))\k<w3>)?\)`
].join(''), 'g');
/**
 * Escape (`\!`) every unescaped `!` before `[` that could start an image: when
 * a `](` or `][` follows in the same paragraph (inline, full and collapsed
 * references), or, when the text has any `]:` (a possible reference
 * definition), every one (shortcut references). `vec![1, 2]` in prose without
 * links is left alone.
 */
function escapeImageBangs(text) {
    const anyDefinition = text.includes(']:');
    return text
        .split(/(\n[ \t\r]*\n)/)
        .map(block => {
        const last = Math.max(block.lastIndexOf(']('), block.lastIndexOf(']['));
        return block.replace(/(\\*)!(?=\[)/g, (match, slashes, offset) => {
            if (slashes.length % 2 === 1)
                return match;
            return anyDefinition || offset < last ? `${slashes}\\!` : match;
        });
    })
        .join('');
}
/**
 * Remove image embeds from model-written markdown so a crafted reply cannot
 * make GitHub fetch an attacker's URL: `![alt](url)` becomes `alt (url)`
 * (empty alt: `(url)`), `<img>` (and `<picture>`, `<source>`, `<video>`...)
 * tags are removed, and any other image syntax (reference-style
 * `![alt][ref]`, `![alt]`) gets its `!` escaped so it renders as a link.
 * Applies inside code blocks too (safe over pretty).
 */
function stripImages(markdown) {
    let out = markdown.replace(MEDIA_TAG, '');
    out = out.replace(INLINE_IMAGE, (...args) => {
        const g = args[args.length - 1];
        const slashes = g.slashes ?? '';
        // `\![a](u)` is a link; a nested image in it is caught by escapeImageBangs.
        if (slashes.length % 2 === 1)
            return args[0];
        const url = (g.angled ?? g.bare ?? '').trim();
        const label = (g.alt ?? '').trim();
        if (!url)
            return slashes + label;
        return slashes + (label ? `${label} (${url})` : `(${url})`);
    });
    out = escapeImageBangs(out);
    // Removal and rewriting can join pieces into a new tag: escape what is left.
    return out.replace(MEDIA_TAG_START, '&lt;');
}


/***/ })

};
