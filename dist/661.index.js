export const id = 661;
export const ids = [661];
export const modules = {

/***/ 6661:
/***/ ((__unused_webpack_module, __webpack_exports__, __webpack_require__) => {

__webpack_require__.r(__webpack_exports__);
/* harmony export */ __webpack_require__.d(__webpack_exports__, {
/* harmony export */   post: () => (/* binding */ post)
/* harmony export */ });
/* harmony import */ var _actions_core__WEBPACK_IMPORTED_MODULE_0__ = __webpack_require__(6257);
/* harmony import */ var _settings__WEBPACK_IMPORTED_MODULE_1__ = __webpack_require__(8750);
/* harmony import */ var _report_redact__WEBPACK_IMPORTED_MODULE_2__ = __webpack_require__(649);
/* harmony import */ var _report_github__WEBPACK_IMPORTED_MODULE_3__ = __webpack_require__(7611);
/* harmony import */ var _transcript__WEBPACK_IMPORTED_MODULE_4__ = __webpack_require__(9121);
/* harmony import */ var _report_render__WEBPACK_IMPORTED_MODULE_5__ = __webpack_require__(6340);
/* harmony import */ var _types__WEBPACK_IMPORTED_MODULE_6__ = __webpack_require__(6141);
// The post step: a safety net that finishes the report when the main step
// could not (killed after a cancel, or crashed before writing it).







async function post() {
    if (_actions_core__WEBPACK_IMPORTED_MODULE_0__/* .getState */ .Gu('done') === 'true')
        return;
    const saved = _actions_core__WEBPACK_IMPORTED_MODULE_0__/* .getState */ .Gu('comment');
    const transcriptPath = _actions_core__WEBPACK_IMPORTED_MODULE_0__/* .getState */ .Gu('transcript');
    if (!saved && !transcriptPath)
        return;
    const redactor = new _report_redact__WEBPACK_IMPORTED_MODULE_2__/* .Redactor */ .pO((0,_report_redact__WEBPACK_IMPORTED_MODULE_2__/* .secretsFromEnv */ .zr)(process.env));
    const warn = (m) => _actions_core__WEBPACK_IMPORTED_MODULE_0__/* .warning */ .$e(redactor.redact(m));
    let token = '';
    let model = '';
    let limits = { maxTurns: 0, timeoutMinutes: 0, maxTokens: 0 };
    try {
        const s = (0,_settings__WEBPACK_IMPORTED_MODULE_1__/* .readSettings */ .sb)(process.env);
        token = s.githubToken;
        model = s.model;
        limits = { maxTurns: s.maxTurns, timeoutMinutes: s.timeoutMinutes, maxCostUsd: s.maxCostUsd, maxTokens: s.maxTokens };
        for (const secret of [s.apiKey, s.authToken, s.githubToken])
            if (secret)
                redactor.add(secret);
    }
    catch {
        token = _actions_core__WEBPACK_IMPORTED_MODULE_0__/* .getInput */ .V4('github-token') || process.env.GITHUB_TOKEN || '';
        if (token)
            redactor.add(token);
    }
    const t = transcriptPath ? (0,_transcript__WEBPACK_IMPORTED_MODULE_4__/* .readTranscript */ .l)(transcriptPath) : undefined;
    const outcome = {
        finalText: t?.finalText ?? '',
        exitReason: t?.finished ? t.exitReason : 'cancelled',
        turns: t?.turns ?? 0,
        commands: t?.commands ?? [],
        usage: t?.usage ?? (0,_types__WEBPACK_IMPORTED_MODULE_6__/* .emptyUsage */ .l)(),
        costUsd: t?.costUsd ?? null,
        error: t?.error
    };
    const repoName = process.env.GITHUB_REPOSITORY ?? '';
    const meta = {
        model: t?.model || model,
        sandbox: t?.sandbox ?? 'unknown',
        limits,
        elapsedMs: t ? Date.now() - Date.parse(t.startedAt) : 0,
        runUrl: process.env.GITHUB_RUN_ID
            ? `${process.env.GITHUB_SERVER_URL ?? 'https://github.com'}/${repoName}/actions/runs/${process.env.GITHUB_RUN_ID}`
            : undefined
    };
    _actions_core__WEBPACK_IMPORTED_MODULE_0__/* .warning */ .$e(`The main step ended before finishing its report (${outcome.exitReason}); the post step finishes it.`);
    if (!saved || !token || !repoName.includes('/'))
        return;
    const ref = JSON.parse(saved);
    const [owner, repo] = repoName.split('/');
    const octokit = (0,_report_github__WEBPACK_IMPORTED_MODULE_3__/* .createOctokit */ .Qi)(token, warn);
    const thread = { kind: 'issue', number: 0 }; // unused: the comment exists, so it is only updated
    const comment = new _report_github__WEBPACK_IMPORTED_MODULE_3__/* .ReportComment */ .Qh(octokit, { owner, repo }, thread, s => redactor.redact(s), warn, ref);
    try {
        await comment.finish((0,_report_render__WEBPACK_IMPORTED_MODULE_5__/* .renderFinal */ .RR)(outcome, meta));
        _actions_core__WEBPACK_IMPORTED_MODULE_0__/* .info */ .pq(`Report finished: ${ref.url}`);
    }
    catch (error) {
        _actions_core__WEBPACK_IMPORTED_MODULE_0__/* .setFailed */ .C1(`Could not finish the report comment: ${redactor.redact(error.message)}`);
    }
}


/***/ })

};
