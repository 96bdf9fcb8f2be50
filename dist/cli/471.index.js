export const id = 471;
export const ids = [471];
export const modules = {

/***/ 8471:
/***/ ((__unused_webpack_module, __webpack_exports__, __webpack_require__) => {


// EXPORTS
__webpack_require__.d(__webpack_exports__, {
  compileSchema: () => (/* binding */ compileSchema)
});

// UNUSED EXPORTS: draftOf

// EXTERNAL MODULE: ./node_modules/ajv/dist/2020.js
var _2020 = __webpack_require__(2210);
var _2020_default = /*#__PURE__*/__webpack_require__.n(_2020);
// EXTERNAL MODULE: ./node_modules/ajv/dist/ajv.js
var dist_ajv = __webpack_require__(2463);
var ajv_default = /*#__PURE__*/__webpack_require__.n(dist_ajv);
// EXTERNAL MODULE: ./node_modules/ajv-formats/dist/index.js
var dist = __webpack_require__(2815);
var dist_default = /*#__PURE__*/__webpack_require__.n(dist);
;// CONCATENATED MODULE: ./src/structured/errors.ts
/** At most this many errors are listed; the rest are counted. */
const MAX_ERRORS = 20;
const MAX_VALUE_CHARS = 200;
/** One line per error: the instance path (a JSON pointer, `(the top)` for the whole value), what is wrong, and what was there. */
function describeErrors(errors, value, max = MAX_ERRORS) {
    const lines = errors.slice(0, max).map(e => `${e.instancePath || '(the top)'}: ${whatIsWrong(e, valueAt(value, e.instancePath))}`);
    if (errors.length > max)
        lines.push(`… and ${errors.length - max} more`);
    return lines;
}
function whatIsWrong(e, found) {
    const p = e.params;
    const got = `, got ${show(found)}`;
    switch (e.keyword) {
        case 'enum':
            return `must be one of the allowed values ${p.allowedValues.map(show).join(', ')}${got}`;
        case 'const':
            return `must be ${show(p.allowedValue)}${got}`;
        case 'type':
            return `must be of type ${String(p.type)}, got ${typeName(found)}`;
        case 'required':
            return `must have the property ${show(p.missingProperty)}`;
        case 'additionalProperties':
            return `must not have the property ${show(p.additionalProperty)} (additionalProperties is false)`;
        default:
            return `${e.message ?? 'is not valid'}${isScalar(found) ? got : ''}`;
    }
}
const isScalar = (v) => v === null || ['string', 'number', 'boolean'].includes(typeof v);
const typeName = (v) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
/** JSON text of `v`, cut to a readable length. */
function show(v) {
    const s = JSON.stringify(v) ?? String(v);
    return s.length > MAX_VALUE_CHARS ? `${s.slice(0, MAX_VALUE_CHARS)}…` : s;
}
/** The value a JSON pointer (`/a/0/b`, `~1` for `/`, `~0` for `~`) points at in `root`. */
function valueAt(root, pointer) {
    let v = root;
    for (const raw of pointer.split('/').slice(1)) {
        const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
        if (v === null || typeof v !== 'object' || !Object.hasOwn(v, key))
            return undefined;
        v = v[key];
    }
    return v;
}

;// CONCATENATED MODULE: ./src/structured/validator.ts
// The JSON Schema validator: Ajv 8, draft 2020-12 (the default) or draft-07, chosen by the
// schema's `$schema`, with the formats of ajv-formats. This file is loaded on demand (a chunk of
// its own in dist/): a run without output-schema never reads Ajv.




const DRAFT_2020 = /^https?:\/\/json-schema\.org\/draft\/2020-12\/schema#?$/;
const DRAFT_07 = /^https?:\/\/json-schema\.org\/draft-07\/schema#?$/;
const OPTIONS = {
    allErrors: true,
    // Unknown keywords (a typo such as `requried`, which would quietly allow anything) and
    // unknown formats are errors at start; the type and tuple hints Ajv would print are not.
    strictSchema: true,
    strictNumbers: true,
    strictTypes: false,
    strictTuples: false,
    strictRequired: false,
    logger: false
};
/** The draft a `$schema` names, or a sentence saying it is not one this action reads. */
function draftOf(schema) {
    const named = schema.$schema;
    if (named === undefined)
        return '2020-12';
    if (typeof named === 'string' && DRAFT_2020.test(named))
        return '2020-12';
    if (typeof named === 'string' && DRAFT_07.test(named))
        return '07';
    return `its $schema must name draft 2020-12 (https://json-schema.org/draft/2020-12/schema) or draft-07 (http://json-schema.org/draft-07/schema), or be left out (2020-12), got ${JSON.stringify(named)}`;
}
/**
 * The schema compiled, or an Error whose message says why it is no JSON Schema (as the
 * meta-schema or Ajv's strict mode found it).
 */
function compileSchema(schema) {
    const draft = draftOf(schema);
    if (draft !== '2020-12' && draft !== '07')
        throw new Error(draft);
    const ajv = draft === '07' ? new (ajv_default())(OPTIONS) : new (_2020_default())(OPTIONS);
    dist_default()(ajv);
    if (!ajv.validateSchema(schema))
        throw new Error(`it is not a valid JSON Schema (draft ${draft}): ${describeErrors(ajv.errors ?? [], schema, 3).join('; ')}`);
    let validate;
    try {
        validate = ajv.compile(schema);
    }
    catch (error) {
        throw new Error(`it is not a valid JSON Schema (draft ${draft}): ${error.message}`);
    }
    return value => (validate(value) ? [] : describeErrors(validate.errors ?? [], value));
}


/***/ })

};
