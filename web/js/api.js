// The HTTP JSON API (api/openapi.yaml). Every call answers
// {ok, status, data, problem, ms}; network failures become status 0.

export const timings = { last: {} };

async function call(method, path, body, contentType, signal) {
  const t0 = performance.now();
  const init = { method, headers: {}, signal };
  if (body !== undefined) {
    init.headers['Content-Type'] = contentType || 'application/json';
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch (err) {
    if (err.name === 'AbortError') throw err;
    // the browser's own words ("TypeError: Failed to fetch") tell a user nothing
    return { ok: false, status: 0, problem: { title: 'The server does not answer (it stopped, or the network is down)' } };
  }
  const type = res.headers.get('Content-Type') || '';
  let data = null;
  if (type.includes('json')) data = await res.json();
  else data = await res.text();
  const ms = performance.now() - t0;
  timings.last[path] = ms;
  const problem = type.includes('problem+json') ? data : null;
  return { ok: res.ok, status: res.status, data: problem ? null : data, problem, ms };
}

export const api = {
  presets: () => call('GET', '/api/v1/presets'),
  preset: (name) => call('GET', `/api/v1/presets/${encodeURIComponent(name)}`),
  importJson: (text) => call('POST', '/api/v1/models/import', text, 'application/json'),
  importYaml: (text) => call('POST', '/api/v1/models/import', text, 'application/yaml'),
  layout: (req, signal) => call('POST', '/api/v1/layout', req, 'application/json', signal),
  validate: (req, signal) => call('POST', '/api/v1/validate', req, 'application/json', signal),
  expand: (req, signal) => call('POST', '/api/v1/expand', req, 'application/json', signal),
  estimate: (req, signal) => call('POST', '/api/v1/estimate', req, 'application/json', signal),
  plan: (req) => call('POST', '/api/v1/plan', req, 'application/json'),
  size: (req) => call('POST', '/api/v1/size', req, 'application/json'),
  exportConfig: (req) => call('POST', '/api/v1/export', req, 'application/json'),
  migrate: (req) => call('POST', '/api/v1/migrate', req, 'application/json'),
  calibrate: (req) => call('POST', '/api/v1/calibrate', req, 'application/json'),
};

// POST /api/v1/ledger through XMLHttpRequest, whose upload reports its
// progress (onProgress(sent, total)); answers as call() does.
export function postLedger(body, onProgress) {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const xhr = new XMLHttpRequest();
    xhr.open('POST', '/api/v1/ledger');
    xhr.setRequestHeader('Content-Type', 'application/json');
    xhr.upload.onprogress = (e) => { if (onProgress) onProgress(e.loaded, e.total); };
    xhr.onerror = () => resolve({ ok: false, status: 0, problem: { title: 'The server does not answer (it stopped, or the network is down)' }, ms: performance.now() - t0 });
    xhr.onload = () => {
      const type = xhr.getResponseHeader('Content-Type') || '';
      let data = xhr.responseText;
      if (type.includes('json')) {
        try { data = JSON.parse(data); } catch (err) { data = { title: `the answer is not JSON: ${err.message}` }; }
      }
      const problem = type.includes('problem+json') || xhr.status >= 400
        ? (typeof data === 'object' ? data : { title: `HTTP ${xhr.status}`, detail: String(data).slice(0, 300) }) : null;
      const ms = performance.now() - t0;
      timings.last['/api/v1/ledger'] = ms;
      resolve({ ok: xhr.status >= 200 && xhr.status < 300, status: xhr.status, data: problem ? null : data, problem, ms });
    };
    xhr.send(body);
  });
}

// How the page gives what a `model-needed` finding asks for: the core says
// what is missing, the control is the page's to name (by code and path).
export function howToGive(d) {
  if (!d || d.code !== 'model-needed') return null;
  return d.path === 'parallel.world_size' ? 'set Devices (in Parallelism and batch)'
    : 'pick a preset or upload a model file';
}

// The text of a problem answer. The line and column are the request
// body's: they mean something only when the body is the user's own file
// (opts.fileBody); for the page's own requests a malformed body is the
// page's fault, said so.
export function problemText(r, opts = {}) {
  const p = r.problem || {};
  if (!opts.fileBody && /malformed-json|invalid-request/.test(p.type || '')) {
    return 'the server could not read the page\'s request (a fault of the page, not of your file): reload the page';
  }
  let t = String(p.detail || p.title || `HTTP ${r.status}`);
  if (opts.fileBody && p.line) t += ` (line ${p.line}, column ${p.column || 1})`;
  // the problem's own hint is for a request's author; the page names its control
  const how = /:model-needed$/.test(p.type || '') ? howToGive({ code: 'model-needed', path: p.path }) : null;
  return how ? `${t}: ${how}` : t;
}
