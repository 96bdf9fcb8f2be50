export const id = 661;
export const ids = [661,318,634];
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


/***/ }),

/***/ 79634:
/***/ ((__unused_webpack_module, __webpack_exports__, __webpack_require__) => {

// ESM COMPAT FLAG
__webpack_require__.r(__webpack_exports__);

// EXPORTS
__webpack_require__.d(__webpack_exports__, {
  DEFAULT_WRITE_SPACING_MS: () => (/* binding */ DEFAULT_WRITE_SPACING_MS),
  GITHUB_RETRIES: () => (/* binding */ GITHUB_RETRIES),
  createOctokit: () => (/* binding */ createOctokit)
});

// EXTERNAL MODULE: ./node_modules/@octokit/core/dist-src/index.js + 12 modules
var dist_src = __webpack_require__(14730);
// EXTERNAL MODULE: ./node_modules/@octokit/plugin-paginate-rest/dist-bundle/index.js
var dist_bundle = __webpack_require__(93779);
// EXTERNAL MODULE: ./node_modules/@octokit/plugin-rest-endpoint-methods/dist-src/index.js + 3 modules
var plugin_rest_endpoint_methods_dist_src = __webpack_require__(49210);
// EXTERNAL MODULE: ./node_modules/@octokit/plugin-retry/dist-bundle/index.js
var plugin_retry_dist_bundle = __webpack_require__(49735);
// EXTERNAL MODULE: ./node_modules/bottleneck/light.js
var light = __webpack_require__(63251);
var light_default = /*#__PURE__*/__webpack_require__.n(light);
;// CONCATENATED MODULE: ./node_modules/@octokit/plugin-throttling/dist-bundle/index.js
// pkg/dist-src/index.js


// pkg/dist-src/version.js
var VERSION = "0.0.0-development";

// pkg/dist-src/wrap-request.js
var noop = () => Promise.resolve();
function wrapRequest(state, request, options) {
  return state.retryLimiter.schedule(doRequest, state, request, options);
}
async function doRequest(state, request, options) {
  const { pathname } = new URL(options.url, "http://github.test");
  const isAuth = isAuthRequest(options.method, pathname);
  const isWrite = !isAuth && options.method !== "GET" && options.method !== "HEAD";
  const isSearch = options.method === "GET" && pathname.startsWith("/search/");
  const isGraphQL = pathname.startsWith("/graphql");
  const retryCount = ~~request.retryCount;
  const jobOptions = retryCount > 0 ? { priority: 0, weight: 0 } : {};
  if (state.clustering) {
    jobOptions.expiration = 1e3 * 60;
  }
  if (isWrite || isGraphQL) {
    await state.write.key(state.id).schedule(jobOptions, noop);
  }
  if (isWrite && state.triggersNotification(pathname)) {
    await state.notifications.key(state.id).schedule(jobOptions, noop);
  }
  if (isSearch) {
    await state.search.key(state.id).schedule(jobOptions, noop);
  }
  const req = (isAuth ? state.auth : state.global).key(state.id).schedule(jobOptions, request, options);
  if (isGraphQL) {
    const res = await req;
    if (res.data.errors != null && res.data.errors.some((error) => error.type === "RATE_LIMITED")) {
      const error = Object.assign(new Error("GraphQL Rate Limit Exceeded"), {
        response: res,
        data: res.data
      });
      throw error;
    }
  }
  return req;
}
function isAuthRequest(method, pathname) {
  return method === "PATCH" && // https://docs.github.com/en/rest/apps/apps?apiVersion=2022-11-28#create-a-scoped-access-token
  /^\/applications\/[^/]+\/token\/scoped$/.test(pathname) || method === "POST" && // https://docs.github.com/en/rest/apps/oauth-applications?apiVersion=2022-11-28#reset-a-token
  (/^\/applications\/[^/]+\/token$/.test(pathname) || // https://docs.github.com/en/rest/apps/apps?apiVersion=2022-11-28#create-an-installation-access-token-for-an-app
  /^\/app\/installations\/[^/]+\/access_tokens$/.test(pathname) || // https://docs.github.com/en/apps/oauth-apps/building-oauth-apps/authorizing-oauth-apps
  pathname === "/login/oauth/access_token");
}

// pkg/dist-src/generated/triggers-notification-paths.js
var triggers_notification_paths_default = [
  "/orgs/{org}/invitations",
  "/orgs/{org}/invitations/{invitation_id}",
  "/orgs/{org}/teams/{team_slug}/discussions",
  "/orgs/{org}/teams/{team_slug}/discussions/{discussion_number}/comments",
  "/repos/{owner}/{repo}/collaborators/{username}",
  "/repos/{owner}/{repo}/commits/{commit_sha}/comments",
  "/repos/{owner}/{repo}/issues",
  "/repos/{owner}/{repo}/issues/{issue_number}/comments",
  "/repos/{owner}/{repo}/issues/{issue_number}/sub_issue",
  "/repos/{owner}/{repo}/issues/{issue_number}/sub_issues/priority",
  "/repos/{owner}/{repo}/pulls",
  "/repos/{owner}/{repo}/pulls/{pull_number}/comments",
  "/repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies",
  "/repos/{owner}/{repo}/pulls/{pull_number}/merge",
  "/repos/{owner}/{repo}/pulls/{pull_number}/requested_reviewers",
  "/repos/{owner}/{repo}/pulls/{pull_number}/reviews",
  "/repos/{owner}/{repo}/releases",
  "/teams/{team_id}/discussions",
  "/teams/{team_id}/discussions/{discussion_number}/comments"
];

// pkg/dist-src/route-matcher.js
function routeMatcher(paths) {
  const regexes = paths.map(
    (path) => path.split("/").map((c) => c.startsWith("{") ? "(?:.+?)" : c).join("/")
  );
  const regex2 = `^(?:${regexes.map((r) => `(?:${r})`).join("|")})[^/]*$`;
  return new RegExp(regex2, "i");
}

// pkg/dist-src/index.js
var regex = routeMatcher(triggers_notification_paths_default);
var triggersNotification = regex.test.bind(regex);
var groups = {};
var createGroups = function(Bottleneck, common) {
  groups.global = new Bottleneck.Group({
    id: "octokit-global",
    maxConcurrent: 10,
    ...common
  });
  groups.auth = new Bottleneck.Group({
    id: "octokit-auth",
    maxConcurrent: 1,
    ...common
  });
  groups.search = new Bottleneck.Group({
    id: "octokit-search",
    maxConcurrent: 1,
    minTime: 2e3,
    ...common
  });
  groups.write = new Bottleneck.Group({
    id: "octokit-write",
    maxConcurrent: 1,
    minTime: 1e3,
    ...common
  });
  groups.notifications = new Bottleneck.Group({
    id: "octokit-notifications",
    maxConcurrent: 1,
    minTime: 3e3,
    ...common
  });
};
function throttling(octokit, octokitOptions) {
  const {
    enabled = true,
    Bottleneck = light,
    id = "no-id",
    timeout = 1e3 * 60 * 2,
    // Redis TTL: 2 minutes
    connection
  } = octokitOptions.throttle || {};
  if (!enabled) {
    return {};
  }
  const common = { timeout };
  if (typeof connection !== "undefined") {
    common.connection = connection;
  }
  const state = Object.assign(
    {
      clustering: connection != null,
      triggersNotification,
      fallbackSecondaryRateRetryAfter: 60,
      retryAfterBaseValue: 1e3,
      id
    },
    octokitOptions.throttle
  );
  if (typeof state.onSecondaryRateLimit !== "function" || typeof state.onRateLimit !== "function") {
    throw new Error(`octokit/plugin-throttling error:
        You must pass the onSecondaryRateLimit and onRateLimit error handlers.
        See https://octokit.github.io/rest.js/#throttling

        const octokit = new Octokit({
          throttle: {
            onSecondaryRateLimit: (retryAfter, options) => {/* ... */},
            onRateLimit: (retryAfter, options) => {/* ... */}
          }
        })
    `);
  }
  let initialized = false;
  const initializeBottleneck = () => {
    if (initialized) {
      return;
    }
    initialized = true;
    if (groups.global == null) {
      createGroups(Bottleneck, common);
    }
    state.global = state.global ?? groups.global;
    state.auth = state.auth ?? groups.auth;
    state.search = state.search ?? groups.search;
    state.write = state.write ?? groups.write;
    state.notifications = state.notifications ?? groups.notifications;
    state.retryLimiter = state.retryLimiter ?? new Bottleneck();
    const events = {};
    const emitter = new Bottleneck.Events(events);
    events.on("secondary-limit", state.onSecondaryRateLimit);
    events.on("rate-limit", state.onRateLimit);
    events.on(
      "error",
      (e) => octokit.log.warn("Error in throttling-plugin limit handler", e)
    );
    state.retryLimiter.on("failed", async function(error, info) {
      const [state2, request, options] = info.args;
      const { pathname } = new URL(options.url, "http://github.test");
      const shouldRetryGraphQL = pathname.startsWith("/graphql") && error.status !== 401;
      if (!(shouldRetryGraphQL || error.status === 403 || error.status === 429)) {
        return;
      }
      const retryCount = ~~request.retryCount;
      request.retryCount = retryCount;
      options.request.retryCount = retryCount;
      const { wantRetry, retryAfter = 0 } = await (async function() {
        if (/\bsecondary rate\b/i.test(error.message)) {
          const retryAfter2 = Number(error.response.headers["retry-after"]) || state2.fallbackSecondaryRateRetryAfter;
          const wantRetry2 = await emitter.trigger(
            "secondary-limit",
            retryAfter2,
            options,
            octokit,
            retryCount
          );
          return { wantRetry: wantRetry2, retryAfter: retryAfter2 };
        }
        if (error.response.headers != null && error.response.headers["x-ratelimit-remaining"] === "0" || (error.response.data?.errors ?? []).some(
          (error2) => error2.type === "RATE_LIMITED"
        )) {
          const rateLimitReset = new Date(
            ~~error.response.headers["x-ratelimit-reset"] * 1e3
          ).getTime();
          const retryAfter2 = Math.max(
            // Add one second so we retry _after_ the reset time
            // https://docs.github.com/en/rest/overview/resources-in-the-rest-api?apiVersion=2022-11-28#exceeding-the-rate-limit
            Math.ceil((rateLimitReset - Date.now()) / 1e3) + 1,
            0
          );
          const wantRetry2 = await emitter.trigger(
            "rate-limit",
            retryAfter2,
            options,
            octokit,
            retryCount
          );
          return { wantRetry: wantRetry2, retryAfter: retryAfter2 };
        }
        return {};
      })();
      if (wantRetry) {
        request.retryCount++;
        return retryAfter * state2.retryAfterBaseValue;
      }
    });
  };
  octokit.hook.wrap("request", (request, options) => {
    initializeBottleneck();
    return wrapRequest(state, request, options);
  });
  return {};
}
throttling.VERSION = VERSION;
throttling.triggersNotification = triggersNotification;


// EXTERNAL MODULE: ./src/github/rest.ts
var rest = __webpack_require__(66417);
;// CONCATENATED MODULE: ./src/github/octokit.ts
// The one GitHub client: Octokit with its retry plugin (5xx and network
// errors: 3 retries after 1, 4 and 9 s) and throttling plugin (writes at least
// 1 s apart, what notifies people, comments and pull requests, 3 s apart, rate
// limits waited out twice; the spacings and the retries' waits all follow
// github-write-interval-ms: those figures are its default, 1000). It is
// imported lazily, once the first model request is on its way; the reads
// before it go through ./rest.ts.
//
// Without a proxy it is the Octokit @actions/github builds (the same core and
// plugins, its token and user agent) on Node's fetch: @actions/github always
// loads the copy of undici it bundles for proxies (~1 MB of code and a second
// WebAssembly HTTP parser, ~60 ms of CPU per run), which only a proxy needs.
// With one set, @actions/github's own client honours it.







/** What @actions/github's client is: the REST methods and pagination (the retry and throttling plugins add no methods we call). */
const GitHub = dist_src/* Octokit */.E.plugin(plugin_rest_endpoint_methods_dist_src/* restEndpointMethods */._, dist_bundle/* paginateRest */.ud);
/** Retries of a request that matters (the final report); progress updates get none. */
const GITHUB_RETRIES = 3;
/** GitHub's advice against secondary rate limits: at least a second between writes (the throttling plugin's default). */
const DEFAULT_WRITE_SPACING_MS = 1000;
/**
 * The retries wait 1, 4 and 9 times this: the retry plugin's own 1 s at the default spacing. A GitHub
 * without write spacing (0) still gets a moment between the attempts, not three at once.
 */
const MIN_RETRY_BASE_MS = 100;
/** Writes that notify people (a comment, a pull request): the plugin's 3 s, three times the write spacing. */
const NOTIFICATION_SPACING_PER_WRITE_SPACING = 3;
/** Our own groups, so the spacing is a setting; one group per kind and spacing for the process, as the plugin's own. */
const octokit_groups = new Map();
function group(kind, minTime) {
    const id = `bash-agent-${kind}-${minTime}`;
    let g = octokit_groups.get(id);
    if (!g)
        octokit_groups.set(id, (g = new (light_default()).Group({ id, maxConcurrent: 1, minTime })));
    return g;
}
async function createOctokit(token, log, opts = {}) {
    const onLimit = (kind) => (after, o, _k, count) => {
        const what = `${o.method ?? ''} ${o.url ?? ''}`.trim();
        if (o.request?.noRateLimitWait) {
            log(`GitHub ${kind} hit (${what}); skipping this progress update`);
            return false;
        }
        log(`GitHub ${kind} hit (${what}); retrying in ${after} s`);
        return count < 2;
    };
    const spacingMs = opts.writeSpacingMs ?? DEFAULT_WRITE_SPACING_MS;
    const options = {
        ...(opts.baseUrl ? { baseUrl: opts.baseUrl } : {}),
        log: { debug: () => { }, info: () => { }, warn: log, error: log },
        throttle: {
            onRateLimit: onLimit('rate limit'),
            onSecondaryRateLimit: onLimit('secondary rate limit'),
            write: group('write', spacingMs),
            notifications: group('notifications', spacingMs * NOTIFICATION_SPACING_PER_WRITE_SPACING)
        },
        retry: { retries: GITHUB_RETRIES, retryAfterBaseValue: Math.max(spacingMs, MIN_RETRY_BASE_MS) }
    };
    if ((0,rest/* proxyConfigured */.$o)(process.env)) {
        const github = await Promise.all(/* import() */[__webpack_require__.e(119), __webpack_require__.e(351)]).then(__webpack_require__.bind(__webpack_require__, 61351));
        return github.getOctokit(token, options, plugin_retry_dist_bundle/* retry */.L, throttling);
    }
    const WithPlugins = GitHub.plugin(plugin_retry_dist_bundle/* retry */.L, throttling);
    const direct = { ...options, auth: `token ${token}`, baseUrl: opts.baseUrl ?? (0,rest/* apiBase */.av)(), userAgent: userAgent() };
    return new WithPlugins(direct);
}
/** @actions/github's user agent: Octokit's own, tagged with the job's orchestration id when the runner gives one. */
function userAgent() {
    const id = process.env.ACTIONS_ORCHESTRATION_ID?.trim();
    return id ? `actions_orchestration_id/${id.replace(/[^a-z0-9_.-]/gi, '_')}` : undefined;
}


/***/ }),

/***/ 86661:
/***/ ((__unused_webpack_module, __webpack_exports__, __webpack_require__) => {

__webpack_require__.r(__webpack_exports__);
/* harmony export */ __webpack_require__.d(__webpack_exports__, {
/* harmony export */   post: () => (/* binding */ post)
/* harmony export */ });
/* harmony import */ var _actions_core__WEBPACK_IMPORTED_MODULE_0__ = __webpack_require__(1938);
/* harmony import */ var _settings__WEBPACK_IMPORTED_MODULE_1__ = __webpack_require__(25672);
/* harmony import */ var _report_log__WEBPACK_IMPORTED_MODULE_2__ = __webpack_require__(46472);
/* harmony import */ var _github_comment__WEBPACK_IMPORTED_MODULE_3__ = __webpack_require__(47318);
/* harmony import */ var _github_octokit__WEBPACK_IMPORTED_MODULE_4__ = __webpack_require__(79634);
/* harmony import */ var _transcript__WEBPACK_IMPORTED_MODULE_5__ = __webpack_require__(39121);
/* harmony import */ var _report_render__WEBPACK_IMPORTED_MODULE_6__ = __webpack_require__(98738);
/* harmony import */ var _report_publish__WEBPACK_IMPORTED_MODULE_7__ = __webpack_require__(4617);
/* harmony import */ var _sandbox__WEBPACK_IMPORTED_MODULE_8__ = __webpack_require__(50892);
/* harmony import */ var _types__WEBPACK_IMPORTED_MODULE_10__ = __webpack_require__(38522);
/* harmony import */ var _util__WEBPACK_IMPORTED_MODULE_11__ = __webpack_require__(54527);
/* harmony import */ var _run_state__WEBPACK_IMPORTED_MODULE_9__ = __webpack_require__(94352);
// The post step: a safety net that finishes the report when the main step
// could not (killed after a cancel, crashed, or GitHub refused the final
// comment). It works from what the main step saved: the comment, the thread,
// the transcript it kept writing as it went, and the sandbox's state (what
// must be undone: the run folder, the namespace), saved before each change.












/** What the post step needs of the settings; a bad setting (the main step said so) still leaves the token. */
function postSettings(out) {
    try {
        const s = (0,_settings__WEBPACK_IMPORTED_MODULE_1__/* .readSettings */ .sb)(process.env);
        for (const secret of (0,_settings__WEBPACK_IMPORTED_MODULE_1__/* .secretsOf */ .Fj)(s))
            out.addSecret(secret);
        const limits = { maxTurns: s.maxTurns, timeoutMinutes: s.timeoutMinutes, maxCostUsd: s.maxCostUsd, maxTokens: s.maxTokens };
        return { token: s.githubToken, model: s.model, writeSpacingMs: s.githubWriteIntervalMs, limits };
    }
    catch {
        const token = _actions_core__WEBPACK_IMPORTED_MODULE_0__.getInput('github-token') || process.env.GITHUB_TOKEN || '';
        out.addSecret(token);
        return { token, model: '', limits: { maxTurns: 0, timeoutMinutes: 0, maxTokens: 0 } };
    }
}
/** What the sandbox left behind when the main step could not put it back (a run folder, a namespace). */
async function putBack(saved, out) {
    if (saved && (await (0,_sandbox__WEBPACK_IMPORTED_MODULE_8__/* .recoverSandbox */ .S9)(saved, out.log)))
        out.log('Put back what the sandbox had changed.');
}
/** The report of a run the main step did not finish, from what it saved. */
/**
 * How the main step ended, from what it saved: a crash it caught, a cancel it received, or neither (the
 * kernel or the runner killed it outright, e.g. out of memory): never called a cancel when it was not one.
 */
function unfinishedOutcome(t, crashed, signalled) {
    const commands = [...(t?.commands ?? [])];
    if (t?.running) {
        const since = Date.parse(t.running.startedAt);
        commands.push((0,_types__WEBPACK_IMPORTED_MODULE_10__/* .stoppedRecord */ .XW)(t.running.command, Number.isFinite(since) ? Date.now() - since : 0, 'stopped: the step ended while this command ran'));
    }
    const killed = !crashed && !signalled;
    const note = crashed
        ? '_The main step crashed before it could finish this report; the post step wrote it from the saved transcript._'
        : killed
            ? '_The main step was killed without a cancel (by the system, for example when the machine ran out of memory) before it could finish this report; the post step wrote it from the saved transcript._'
            : '_The main step was stopped before it could finish this report; the post step wrote it from the saved transcript._';
    return {
        finalText: [note, t?.finalText ?? ''].filter(Boolean).join('\n\n'),
        exitReason: crashed || killed ? 'error' : 'cancelled',
        turns: t?.turns ?? 0,
        commands,
        usage: t?.usage ?? (0,_types__WEBPACK_IMPORTED_MODULE_10__/* .emptyUsage */ .ly)(),
        costUsd: t?.costUsd ?? null,
        error: crashed || (killed ? 'the main step was killed (not cancelled): out of memory, or stopped by the system' : undefined),
        messages: t?.messages
    };
}
async function post() {
    const out = (0,_report_log__WEBPACK_IMPORTED_MODULE_2__/* .createLog */ .h)();
    const settings = postSettings(out);
    // Recovery never depends on the main step having finished its own.
    await putBack(_run_state__WEBPACK_IMPORTED_MODULE_9__/* .getSandbox */ .E4(), out);
    if (_run_state__WEBPACK_IMPORTED_MODULE_9__/* .isDone */ .$L())
        return;
    const saved = _run_state__WEBPACK_IMPORTED_MODULE_9__/* .getComment */ .OK();
    const thread = _run_state__WEBPACK_IMPORTED_MODULE_9__/* .getThread */ .fG();
    const transcriptPath = _run_state__WEBPACK_IMPORTED_MODULE_9__/* .getTranscriptPath */ .kw();
    if (!saved && !transcriptPath)
        return;
    const t = transcriptPath ? (0,_transcript__WEBPACK_IMPORTED_MODULE_5__/* .readTranscript */ .l)(transcriptPath) : undefined;
    let outcome;
    if (t?.finished) {
        // The main step finished the run but could not write the comment: try again.
        out.log('The main step could not write its report comment; the post step tries again.');
        outcome = t;
    }
    else {
        outcome = unfinishedOutcome(t, _run_state__WEBPACK_IMPORTED_MODULE_9__/* .getCrash */ .o(), _run_state__WEBPACK_IMPORTED_MODULE_9__/* .getSignalled */ .GO());
        out.warn(`The main step ended before finishing its report (${outcome.exitReason}); the post step finishes it.`);
    }
    const meta = {
        model: t?.model || settings.model,
        sandbox: t?.sandbox ?? 'unknown',
        limits: settings.limits,
        elapsedMs: t ? Date.now() - Date.parse(t.startedAt) : 0,
        runUrl: (0,_report_render__WEBPACK_IMPORTED_MODULE_6__/* .runUrlOf */ .Qm)()
    };
    const repo = (0,_util__WEBPACK_IMPORTED_MODULE_11__/* .repoOf */ .A5)(process.env.GITHUB_REPOSITORY);
    let comment;
    if (settings.token && repo && (saved || thread)) {
        const octokit = await (0,_github_octokit__WEBPACK_IMPORTED_MODULE_4__.createOctokit)(settings.token, out.warn, { writeSpacingMs: settings.writeSpacingMs });
        comment = new _github_comment__WEBPACK_IMPORTED_MODULE_3__.ReportComment(octokit, repo, thread, out.redact, out.warn, { existing: saved });
    }
    const published = await (0,_report_publish__WEBPACK_IMPORTED_MODULE_7__/* .publish */ .mk)(outcome, meta, comment, out.redact, out.warn);
    if (published.commentUrl)
        out.log(`Report finished: ${published.commentUrl}`);
    if (published.commentError) {
        _actions_core__WEBPACK_IMPORTED_MODULE_0__.setFailed(out.redact(`Could not finish the report comment (${published.commentError}); the job summary holds the report.`));
    }
}


/***/ })

};
