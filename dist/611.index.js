export const id = 611;
export const ids = [611];
export const modules = {

/***/ 7611:
/***/ ((__unused_webpack_module, __webpack_exports__, __webpack_require__) => {

__webpack_require__.r(__webpack_exports__);
/* harmony export */ __webpack_require__.d(__webpack_exports__, {
/* harmony export */   DEFAULT_WRITE_SPACING_MS: () => (/* binding */ DEFAULT_WRITE_SPACING_MS),
/* harmony export */   FAST_PROGRESS_UPDATES: () => (/* binding */ FAST_PROGRESS_UPDATES),
/* harmony export */   GITHUB_RETRIES: () => (/* binding */ GITHUB_RETRIES),
/* harmony export */   PROGRESS_INTERVAL_MS: () => (/* binding */ PROGRESS_INTERVAL_MS),
/* harmony export */   ReportComment: () => (/* binding */ ReportComment),
/* harmony export */   SLOW_PROGRESS_INTERVAL_MS: () => (/* binding */ SLOW_PROGRESS_INTERVAL_MS),
/* harmony export */   addEyes: () => (/* binding */ addEyes),
/* harmony export */   clampBody: () => (/* binding */ clampBody),
/* harmony export */   createOctokit: () => (/* binding */ createOctokit),
/* harmony export */   permissionOf: () => (/* binding */ permissionOf),
/* harmony export */   progressInterval: () => (/* binding */ progressInterval)
/* harmony export */ });
/* harmony import */ var _actions_github__WEBPACK_IMPORTED_MODULE_0__ = __webpack_require__(1758);
/* harmony import */ var _octokit_plugin_retry__WEBPACK_IMPORTED_MODULE_4__ = __webpack_require__(9735);
/* harmony import */ var _octokit_plugin_throttling__WEBPACK_IMPORTED_MODULE_5__ = __webpack_require__(6856);
/* harmony import */ var _render__WEBPACK_IMPORTED_MODULE_1__ = __webpack_require__(6340);
/* harmony import */ var _permission__WEBPACK_IMPORTED_MODULE_2__ = __webpack_require__(8539);
/* harmony import */ var _util__WEBPACK_IMPORTED_MODULE_6__ = __webpack_require__(4527);
/* harmony import */ var bottleneck_light_js__WEBPACK_IMPORTED_MODULE_3__ = __webpack_require__(3251);
/* harmony import */ var bottleneck_light_js__WEBPACK_IMPORTED_MODULE_3___default = /*#__PURE__*/__webpack_require__.n(bottleneck_light_js__WEBPACK_IMPORTED_MODULE_3__);
// GitHub at the edge: the eyes reaction, the one report comment (created at
// start, updated while the agent works, finished at the end) and permission
// look-ups. Every body passes through the redactor on its way out.
//
// All calls go through Octokit's retry plugin (5xx and network errors: 3
// retries after 1, 4 and 9 s) and throttling plugin (writes at least 1 s
// apart, comment creation 3 s apart, rate limits waited out twice). Progress
// updates are the exception: they are not retried (the next one carries newer
// news) and never wait out a rate limit, so the final report is never stuck
// behind one.







/**
 * Progress updates are at most this often. GitHub allows about 80
 * content-creating requests a minute and 500 an hour: after
 * FAST_PROGRESS_UPDATES updates (5 minutes at full pace) they slow to one every
 * SLOW_PROGRESS_INTERVAL_MS, which keeps a run of any length under both.
 */
const PROGRESS_INTERVAL_MS = 3000;
const SLOW_PROGRESS_INTERVAL_MS = 10_000;
const FAST_PROGRESS_UPDATES = 100;
/** The least time between two progress updates once `sent` were sent. */
function progressInterval(sent) {
    return sent < FAST_PROGRESS_UPDATES ? PROGRESS_INTERVAL_MS : SLOW_PROGRESS_INTERVAL_MS;
}
/** Retries of a request that matters (the final report); progress updates get none. */
const GITHUB_RETRIES = 3;
/** Per-request marker: a request that must not wait out a rate limit. */
const NO_WAIT = { retries: 0, noRateLimitWait: true };
/** GitHub's advice against secondary rate limits: at least a second between writes (the throttling plugin's default). */
const DEFAULT_WRITE_SPACING_MS = 1000;
/** Our own group, so the spacing is a setting; one group for the process, as the plugin's own. */
const writeGroups = new Map();
function writeGroup(minTime) {
    let g = writeGroups.get(minTime);
    if (!g)
        writeGroups.set(minTime, (g = new (bottleneck_light_js__WEBPACK_IMPORTED_MODULE_3___default().Group)({ id: `bash-agent-write-${minTime}`, maxConcurrent: 1, minTime })));
    return g;
}
function createOctokit(token, log, opts = {}) {
    const onLimit = (kind) => (after, o, _k, count) => {
        const what = `${o.method ?? ''} ${o.url ?? ''}`.trim();
        if (o.request?.noRateLimitWait) {
            log(`GitHub ${kind} hit (${what}); skipping this progress update`);
            return false;
        }
        log(`GitHub ${kind} hit (${what}); retrying in ${after} s`);
        return count < 2;
    };
    const options = {
        ...(opts.baseUrl ? { baseUrl: opts.baseUrl } : {}),
        log: { debug: () => { }, info: () => { }, warn: log, error: log },
        throttle: {
            onRateLimit: onLimit('rate limit'),
            onSecondaryRateLimit: onLimit('secondary rate limit'),
            write: writeGroup(opts.writeSpacingMs ?? DEFAULT_WRITE_SPACING_MS)
        },
        retry: { retries: GITHUB_RETRIES }
    };
    return _actions_github__WEBPACK_IMPORTED_MODULE_0__/* .getOctokit */ .Q(token, options, _octokit_plugin_retry__WEBPACK_IMPORTED_MODULE_4__/* .retry */ .L, _octokit_plugin_throttling__WEBPACK_IMPORTED_MODULE_5__/* .throttling */ .A);
}
async function permissionOf(octokit, repo, login) {
    const { data } = await octokit.rest.repos.getCollaboratorPermissionLevel({ ...repo, username: login });
    return (0,_permission__WEBPACK_IMPORTED_MODULE_2__/* .roleOf */ .kp)(data);
}
/** The eyes reaction: nice to have, so one retry at most; the caller logs a failure. */
async function addEyes(octokit, repo, target) {
    const content = 'eyes';
    const request = { retries: 1 };
    if (target.subject === 'issue_comment') {
        await octokit.rest.reactions.createForIssueComment({ ...repo, comment_id: target.id, content, request });
    }
    else if (target.subject === 'review_comment') {
        await octokit.rest.reactions.createForPullRequestReviewComment({ ...repo, comment_id: target.id, content, request });
    }
    else {
        await octokit.rest.reactions.createForIssue({ ...repo, issue_number: target.id, content, request });
    }
}
/** Cuts a body to GitHub's limit (a last guard: the renderers already keep within it). */
function clampBody(body, limit = _render__WEBPACK_IMPORTED_MODULE_1__/* .COMMENT_LIMIT */ .W$) {
    if (body.length <= limit)
        return body;
    const note = '\n\n*[… cut to fit GitHub’s comment limit]*';
    let cut = limit - note.length;
    // never split a surrogate pair
    const code = body.charCodeAt(cut - 1);
    if (code >= 0xd800 && code <= 0xdbff)
        cut--;
    return body.slice(0, cut) + note;
}
function statusOf(error) {
    const s = error?.status;
    return typeof s === 'number' ? s : undefined;
}
/**
 * The report comment: one comment per run, created once and then only
 * updated. Progress updates are throttled and go out one at a time, newest
 * body only; finish() waits for the one in flight, so the final body is
 * always the last one written.
 */
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
    sent = 0;
    finished = false;
    onCreate;
    constructor(octokit, repo, thread, redact, log, opts = {}) {
        this.octokit = octokit;
        this.repo = repo;
        this.thread = thread;
        this.redact = redact;
        this.log = log;
        this.ref = opts.existing;
        this.onCreate = opts.onCreate;
    }
    get comment() {
        return this.ref;
    }
    /** progress updates written so far (not counting creation and the final body) */
    get updates() {
        return this.sent;
    }
    /** Creates the comment; failures are logged, and the next progress update or finish() tries again. */
    start(body) {
        if (this.ref)
            return Promise.resolve(this.ref);
        if (this.creating)
            return this.creating;
        this.lastSent = Date.now();
        this.creating = this.create(body)
            .then(ref => ref, error => {
            this.log(`Could not create the progress comment: ${this.redact((0,_util__WEBPACK_IMPORTED_MODULE_6__/* .messageOf */ .bD)(error))}`);
            return undefined;
        })
            .then(ref => {
            this.creating = undefined;
            this.schedule();
            return ref;
        });
        return this.creating;
    }
    /** Shows progress, at most once every progressInterval(); only the newest body is sent. */
    progress(body) {
        if (this.finished)
            return;
        this.pending = body;
        this.schedule();
    }
    /** Drops any queued progress update (the final body is coming). */
    stop() {
        this.finished = true;
        clearTimeout(this.timer);
        this.timer = undefined;
        this.pending = undefined;
    }
    /** The final body; throws when it could not be written after retries. */
    async finish(body) {
        this.stop();
        await this.inflight;
        await this.creating;
        if (!this.ref)
            return this.create(body);
        try {
            await this.update(body, false);
        }
        catch (error) {
            // Someone deleted the progress comment: post the report as a new one.
            if ((statusOf(error) === 404 || statusOf(error) === 410) && this.thread) {
                this.log('The progress comment is gone; posting the report as a new comment.');
                this.ref = undefined;
                return this.create(body);
            }
            throw error;
        }
        return this.ref;
    }
    /** Sets the timer for the pending body, unless one is set, a request is out, or the comment is being created. */
    schedule() {
        if (this.timer || this.inflight || this.creating || this.finished || this.pending === undefined)
            return;
        const wait = Math.max(0, this.lastSent + progressInterval(this.sent) - Date.now());
        this.timer = setTimeout(() => this.flush(), wait);
        this.timer.unref?.();
    }
    flush() {
        this.timer = undefined;
        const body = this.pending;
        if (body === undefined || this.finished)
            return;
        this.pending = undefined;
        this.inflight = (async () => {
            if (!this.ref) {
                // creation failed earlier: try again, with this body
                if (this.thread)
                    await this.start(body);
                return;
            }
            await this.update(body, true);
            this.sent++;
        })()
            .catch(error => this.log(`Could not update the progress comment: ${this.redact((0,_util__WEBPACK_IMPORTED_MODULE_6__/* .messageOf */ .bD)(error))}`))
            .finally(() => {
            this.inflight = undefined;
            this.lastSent = Date.now();
            this.schedule();
        });
    }
    async create(body) {
        if (!this.thread)
            throw new Error('there is no issue or pull request to comment on');
        const text = clampBody(this.redact(body));
        let ref;
        if (this.thread.kind === 'issue') {
            const { data } = await this.octokit.rest.issues.createComment({ ...this.repo, issue_number: this.thread.number, body: text });
            ref = { kind: 'issue', id: data.id, url: data.html_url };
        }
        else {
            const { data } = await this.octokit.rest.pulls.createReplyForReviewComment({
                ...this.repo,
                pull_number: this.thread.pullNumber,
                comment_id: this.thread.commentId,
                body: text
            });
            ref = { kind: 'review', id: data.id, url: data.html_url };
        }
        this.ref = ref;
        this.lastSent = Date.now();
        try {
            this.onCreate?.(ref);
        }
        catch {
            // a callback must not undo the comment
        }
        return ref;
    }
    async update(body, isProgress) {
        const ref = this.ref;
        if (!ref)
            return;
        const text = clampBody(this.redact(body));
        const request = isProgress ? NO_WAIT : undefined;
        if (ref.kind === 'issue') {
            await this.octokit.rest.issues.updateComment({ ...this.repo, comment_id: ref.id, body: text, request });
        }
        else {
            await this.octokit.rest.pulls.updateReviewComment({ ...this.repo, comment_id: ref.id, body: text, request });
        }
    }
}


/***/ })

};
