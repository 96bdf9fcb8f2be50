export const id = 318;
export const ids = [318];
export const modules = {

/***/ 47318:
/***/ ((__unused_webpack_module, __webpack_exports__, __webpack_require__) => {

__webpack_require__.r(__webpack_exports__);
/* harmony export */ __webpack_require__.d(__webpack_exports__, {
/* harmony export */   FAST_PROGRESS_UPDATES: () => (/* binding */ FAST_PROGRESS_UPDATES),
/* harmony export */   PROGRESS_INTERVAL_MS: () => (/* binding */ PROGRESS_INTERVAL_MS),
/* harmony export */   ReportComment: () => (/* binding */ ReportComment),
/* harmony export */   SLOW_PROGRESS_INTERVAL_MS: () => (/* binding */ SLOW_PROGRESS_INTERVAL_MS),
/* harmony export */   addEyes: () => (/* binding */ addEyes),
/* harmony export */   clampBody: () => (/* binding */ clampBody),
/* harmony export */   progressInterval: () => (/* binding */ progressInterval)
/* harmony export */ });
/* harmony import */ var _report_render__WEBPACK_IMPORTED_MODULE_0__ = __webpack_require__(98738);
/* harmony import */ var _review_reply__WEBPACK_IMPORTED_MODULE_2__ = __webpack_require__(42046);
/* harmony import */ var _util__WEBPACK_IMPORTED_MODULE_1__ = __webpack_require__(54527);



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
/** Per-request marker: a request that must not wait out a rate limit. */
const NO_WAIT = { retries: 0, noRateLimitWait: true };
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
function clampBody(body, limit = _report_render__WEBPACK_IMPORTED_MODULE_0__/* .COMMENT_LIMIT */ .W$) {
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
    /** the newest body, rendered only when it is sent (events come far more often than updates) */
    pending;
    timer;
    inflight;
    lastSent = 0;
    sent = 0;
    finished = false;
    onCreate;
    interval;
    constructor(octokit, repo, thread, redact, log, opts = {}) {
        this.octokit = octokit;
        this.repo = repo;
        this.thread = thread;
        this.redact = redact;
        this.log = log;
        this.ref = opts.existing;
        this.onCreate = opts.onCreate;
        this.interval = opts.interval ?? progressInterval;
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
            this.log(`Could not create the progress comment: ${this.redact((0,_util__WEBPACK_IMPORTED_MODULE_1__/* .messageOf */ .bD)(error))}`);
            return undefined;
        })
            .then(ref => {
            this.creating = undefined;
            this.schedule();
            return ref;
        });
        return this.creating;
    }
    /** Shows progress, at most once every interval; only the newest body is rendered and sent. */
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
            if (((0,_util__WEBPACK_IMPORTED_MODULE_1__/* .statusOf */ .c2)(error) === 404 || (0,_util__WEBPACK_IMPORTED_MODULE_1__/* .statusOf */ .c2)(error) === 410) && this.thread) {
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
        const wait = Math.max(0, this.lastSent + this.interval(this.sent) - Date.now());
        this.timer = setTimeout(() => this.flush(), wait);
        this.timer.unref?.();
    }
    flush() {
        this.timer = undefined;
        const render = this.pending;
        if (render === undefined || this.finished)
            return;
        this.pending = undefined;
        const body = render();
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
            .catch(error => this.log(`Could not update the progress comment: ${this.redact((0,_util__WEBPACK_IMPORTED_MODULE_1__/* .messageOf */ .bD)(error))}`))
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
            const data = await (0,_review_reply__WEBPACK_IMPORTED_MODULE_2__/* .replyInReviewThread */ .o)(this.octokit, this.repo, this.thread, text);
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
