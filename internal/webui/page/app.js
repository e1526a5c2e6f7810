// The web page of trtbuild serve. Plain JavaScript, no framework, no build step.
//
// Two views, chosen by the location's hash: "#/" (a form that submits a build, and the list of
// builds) and "#/builds/<id>" (one build: its live phase tree from the event stream, a Stop
// button, and how it ended). Every text that comes from the server (model and phase names, log
// messages, errors) is set with textContent, never parsed as HTML.
'use strict';

(function () {
  const token = (document.querySelector('meta[name="trtbuild-token"]') || {}).content || '';
  const $ = (id) => document.getElementById(id);

  // The result event's status → the build's state, as the API's Snapshot names it.
  const STATUS_STATE = { built: 'succeeded', failed: 'failed', cancelled: 'cancelled', timed_out: 'timed_out' };
  const LIVE_STATES = new Set(['queued', 'running']);
  const LIST_REFRESH_MS = 2000;
  const QUEUE_REFRESH_MS = 2000;
  const MAX_LOG_LINES = 500;
  // KEEP_DONE is how many finished children of a phase keep their nodes; beyond twice as many,
  // the oldest go, and a line counts them, as trtbuild's own tree folds them: TensorRT 10
  // reports hundreds of "Measuring tactic time" under one "Evaluating tactic times", which no
  // one reads one by one.
  const KEEP_DONE = 16;
  const RECONNECT_MS = 3000;

  // ApiError is a problem to show: one line saying what is wrong and, when known, what to do.
  class ApiError extends Error {
    constructor(problem, hint, status) {
      super(problem);
      this.hint = hint || '';
      this.status = status || 0;
    }
  }

  // api sends one request to the server's API and returns the decoded JSON answer, or throws
  // an ApiError with the server's {"error", "hint"}. POSTs carry the page token.
  async function api(method, path, body) {
    const init = { method, headers: { Accept: 'application/json' }, credentials: 'same-origin', cache: 'no-store' };
    if (method === 'POST') {
      init.headers['Content-Type'] = 'application/json';
      init.headers['X-Trtbuild-Token'] = token;
      init.body = JSON.stringify(body === undefined ? {} : body);
    }
    let res;
    try {
      res = await fetch(path, init);
    } catch (err) {
      throw new ApiError(`${method} ${path}: the server did not answer (${err.message})`,
        'check that trtbuild serve is still running, then try again');
    }
    const text = await res.text();
    let data = null;
    if (text !== '') {
      try { data = JSON.parse(text); } catch (_) { data = null; }
    }
    if (!res.ok) {
      const problem = data && typeof data.error === 'string' ? data.error : `${method} ${path}: HTTP ${res.status}`;
      const hint = data && typeof data.hint === 'string' ? data.hint : '';
      throw new ApiError(problem, hint, res.status);
    }
    return data;
  }

  function el(tag, className, text) {
    const e = document.createElement(tag);
    if (className) e.className = className;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function showError(box, err) {
    box.replaceChildren(el('p', 'problem', err.message));
    if (err.hint) box.append(el('p', 'hint', err.hint));
    box.hidden = false;
  }

  function hideError(box) {
    box.hidden = true;
    box.replaceChildren();
  }

  // setField shows a labelled field of the summary, or hides it when text is empty.
  function setField(id, text) {
    const dd = $(id);
    dd.textContent = text || '';
    dd.hidden = !text;
    $(id + '-label').hidden = !text;
  }

  const buildPath = (id) => '/v1/builds/' + encodeURIComponent(id);
  const has = (obj, key) => Object.prototype.hasOwnProperty.call(obj, key);

  // ---- The form ----

  const usage = (problem, hint) => new ApiError(problem, hint);
  const OPTIONS_HINT = 'write one JSON object of build flags, such as {"shapes": "images:1x3x224x224"}, or leave the field empty';

  // collectOptions reads the options text and merges the fp16 box and the backend select into
  // it. A control that contradicts the text is an error, not a silent override.
  function collectOptions() {
    const text = $('options').value.trim();
    let opts = {};
    if (text !== '') {
      try {
        opts = JSON.parse(text);
      } catch (err) {
        throw usage(`the options are not valid JSON: ${err.message}`, OPTIONS_HINT);
      }
      if (opts === null || typeof opts !== 'object' || Array.isArray(opts)) {
        throw usage('the options are not a JSON object', OPTIONS_HINT);
      }
    }
    if ($('fp16').checked) {
      if (has(opts, 'fp16') && opts.fp16 !== true) {
        throw usage(`the options say "fp16": ${JSON.stringify(opts.fp16)} but the fp16 box is ticked`,
          'untick the box or take "fp16" out of the options');
      }
      opts.fp16 = true;
    }
    const backend = $('backend').value;
    if (backend !== 'auto') {
      if (has(opts, 'backend') && opts.backend !== backend) {
        throw usage(`the options say "backend": ${JSON.stringify(opts.backend)} but the backend select says ${backend}`,
          'choose the same backend in both, or set the select to auto');
      }
      opts.backend = backend;
    }
    return opts;
  }

  async function submitBuild(ev) {
    ev.preventDefault();
    const box = $('error');
    hideError(box);
    const model = $('model').value.trim();
    let options;
    try {
      if (model === '') {
        throw usage('the model is empty', "enter the ONNX model's path, relative to the server's model folder");
      }
      options = collectOptions();
    } catch (err) {
      showError(box, err);
      return;
    }
    const button = $('submit');
    button.disabled = true;
    try {
      const snap = await api('POST', '/v1/builds', { model, options });
      location.hash = '#/builds/' + encodeURIComponent(snap.id);
    } catch (err) {
      showError(box, err);
    } finally {
      button.disabled = false;
    }
  }

  // ---- The list of builds ----

  let listBusy = false;

  async function refreshList() {
    if (listBusy) return;
    listBusy = true;
    try {
      const data = await api('GET', '/v1/builds?limit=100');
      drawList((data && data.builds) || []);
      hideError($('builds-error'));
    } catch (err) {
      showError($('builds-error'), err);
    } finally {
      listBusy = false;
    }
  }

  function drawList(builds) {
    const items = builds.map((b) => {
      const a = el('a');
      a.href = '#/builds/' + encodeURIComponent(b.id);
      const state = el('span', 'state state-' + b.state, b.state);
      a.append(el('span', 'id mono', b.id), el('span', 'model mono', b.model), state);
      if (b.state === 'queued' && b.position) a.append(el('span', 'aside', `#${b.position} in the queue`));
      const li = el('li');
      li.append(a);
      return li;
    });
    if (items.length === 0) items.push(el('li', 'empty', 'No builds yet.'));
    $('builds').replaceChildren(...items);
  }

  // ---- One build ----

  // current is the build on screen: its event stream, its phase nodes by phase id, and the
  // highest event sequence number applied (so that a replayed event is applied once). ended:
  // its final state is shown; closed: its stream is done (the result came, or it cannot).
  let current = null;

  function openBuild(id) {
    closeBuild();
    const b = {
      id, es: null, nodes: new Map(), roots: new Map(), seen: 0,
      started: false, ended: false, closed: false, stopping: false, queueTimer: 0, checking: false,
      quietErrors: 0,
    };
    current = b;
    document.title = `trtbuild · build ${id}`;
    $('build-id').textContent = id;
    $('build-model').textContent = '';
    $('build-info').textContent = '';
    setState('', '');
    $('note').textContent = '';
    setField('where', '');
    setField('node', '');
    setField('message', '');
    setField('hint', '');
    $('links').hidden = true;
    const stop = $('stop');
    stop.textContent = 'Stop';
    stop.title = 'Cancel the build at its next step';
    stop.disabled = false;
    hideError($('build-error'));
    $('tree').replaceChildren();
    $('log').replaceChildren();
    $('log-section').hidden = true;
    loadSnapshot(b).then((found) => {
      if (found && current === b) connect(b);
    });
  }

  function closeBuild() {
    if (!current) return;
    closeStream(current);
    current = null;
  }

  function setState(state, position) {
    const s = $('state');
    s.textContent = state;
    s.className = 'state' + (state ? ' state-' + state : '');
    $('position').textContent = position ? `#${position} in the queue` : '';
  }

  // loadSnapshot reads the build's snapshot and shows what it says; false if there is no such
  // build (or the server cannot be asked).
  async function loadSnapshot(b) {
    let snap;
    try {
      snap = await api('GET', buildPath(b.id));
    } catch (err) {
      if (current === b) {
        showError($('build-error'), err);
        if (err.status === 404) endWithoutStream(b);
      }
      return false;
    }
    if (current !== b) return false;
    applySnapshot(b, snap);
    return true;
  }

  function applySnapshot(b, snap) {
    $('build-model').textContent = snap.model || '';
    if (b.ended) {
      // The result event came first; the snapshot adds what only it knows.
      if (!LIVE_STATES.has(snap.state)) {
        setState(snap.state, 0);
        $('engine-link').hidden = !snap.engine_available;
      }
      return;
    }
    if (!LIVE_STATES.has(snap.state)) {
      // Ended: show it now; the stream still replays the tree, then its result.
      end(b, snap.state, snap.where, snap.hint, snap.error, snap.engine_available);
      return;
    }
    if (!b.started) setState(snap.state, snap.state === 'queued' ? snap.position : 0);
    clearInterval(b.queueTimer);
    b.queueTimer = 0;
    if (snap.state === 'queued' && !b.started) {
      b.queueTimer = setInterval(() => {
        if (!document.hidden && current === b && !b.started && !b.ended) loadSnapshot(b);
      }, QUEUE_REFRESH_MS);
    }
  }

  // connect opens the build's event stream (after the last event applied, when opened again).
  // EventSource reconnects by itself after a dropped connection and sends Last-Event-ID, so the
  // server resumes after the last event seen; an event that comes again anyway is skipped by its
  // sequence number, and a phase_start for a phase already drawn updates that node.
  function connect(b) {
    const es = new EventSource(buildPath(b.id) + '/events' + (b.seen > 0 ? '?after=' + b.seen : ''));
    b.es = es;
    const on = (type, apply) => es.addEventListener(type, (ev) => {
      if (current !== b || b.closed) return;
      const seq = Number(ev.lastEventId);
      if (seq > 0 && seq <= b.seen) return;
      let data;
      try { data = JSON.parse(ev.data); } catch (_) { return; }
      if (seq > 0) b.seen = seq;
      b.quietErrors = 0;
      if (!b.started) markStarted(b);
      apply(b, data);
    });
    on('build', onBuild);
    on('phase_start', onPhaseStart);
    on('step', onStep);
    on('phase_finish', onPhaseFinish);
    on('log', onLog);
    on('result', onResult);
    es.addEventListener('open', () => {
      if (current === b && !b.ended) $('note').textContent = b.stopping ? 'stopping…' : '';
    });
    es.addEventListener('error', () => {
      if (current !== b || b.closed) return;
      b.quietErrors++;
      if (!b.ended) {
        $('note').textContent = es.readyState === EventSource.CLOSED ? 'the event stream failed' : 'reconnecting…';
      }
      checkEnded(b);
    });
  }

  function markStarted(b) {
    b.started = true;
    clearInterval(b.queueTimer);
    b.queueTimer = 0;
    if (!b.ended) setState('running', 0);
  }

  function closeStream(b) {
    b.closed = true;
    if (b.es) b.es.close();
    clearInterval(b.queueTimer);
    b.queueTimer = 0;
  }

  // checkEnded asks for the snapshot when the stream fails. A build that ended while the page
  // could not hear it is shown as the server records it; its stream is given up when it fails
  // twice without an event in between (a log that has no result would loop forever). A stream
  // the browser gave up on (an answer that is not an event stream) is opened again while the
  // build runs.
  async function checkEnded(b) {
    if (b.checking) return;
    b.checking = true;
    try {
      const snap = await api('GET', buildPath(b.id));
      if (current !== b || b.closed) return;
      if (!LIVE_STATES.has(snap.state)) {
        applySnapshot(b, snap);
        if (b.quietErrors >= 2 || b.es.readyState === EventSource.CLOSED) closeStream(b);
      } else if (b.es.readyState === EventSource.CLOSED) {
        setTimeout(() => { if (current === b && !b.closed) connect(b); }, RECONNECT_MS);
      }
    } catch (err) {
      if (current === b && err.status === 404) {
        showError($('build-error'), err);
        endWithoutStream(b);
      }
    } finally {
      b.checking = false;
    }
  }

  function endWithoutStream(b) {
    b.ended = true;
    closeStream(b);
    $('stop').disabled = true;
    $('note').textContent = '';
  }

  function onBuild(b, d) {
    const parts = [];
    if (d.backend) parts.push(`backend ${d.backend}`);
    if (d.precision) parts.push(d.precision);
    if (d.layers) parts.push(`${d.layers} layers`);
    if (d.gpu) parts.push(d.gpu);
    $('build-info').textContent = parts.join(' · ');
  }

  function onPhaseStart(b, d) {
    let n = b.nodes.get(d.id);
    if (!n) {
      const li = el('li', 'phase');
      li.dataset.phaseId = String(d.id);
      const row = el('div', 'row');
      const name = el('span', 'name');
      const bar = el('progress');
      const count = el('span', 'count');
      row.append(name, bar, count);
      const kids = el('ul', 'children');
      li.append(row, kids);
      row.addEventListener('click', () => li.classList.toggle('open'));
      const parent = d.parent ? b.nodes.get(d.parent) : null;
      (parent ? parent.kids : $('tree')).append(li);
      n = { li, name, bar, count, kids, parent, steps: 1, done: 0, doneKids: 0, folded: 0, label: '' };
      b.nodes.set(d.id, n);
      if (!parent) {
        // TensorRT builds the whole engine again for each backend strategy at optimization
        // level 5: a later root phase of one name is the next engine generation.
        const name = String(d.name === undefined ? '' : d.name);
        const generation = (b.roots.get(name) || 0) + 1;
        b.roots.set(name, generation);
        if (generation > 1) n.label = ` (generation ${generation})`;
      }
    }
    n.name.textContent = String(d.name === undefined ? '' : d.name) + n.label;
    n.name.title = n.name.textContent;
    n.steps = Math.max(1, Number(d.steps) || 1);
    n.done = Math.min(n.done, n.steps);
    drawCount(n);
  }

  function drawCount(n) {
    n.bar.max = n.steps;
    n.bar.value = n.done;
    n.count.textContent = `${n.done}/${n.steps}`;
  }

  function onStep(b, d) {
    const n = b.nodes.get(d.id);
    if (!n) return;
    // step is the index of the completed step: step + 1 are done. Steps never go backwards.
    const done = Math.min(n.steps, (Number(d.step) || 0) + 1);
    if (done > n.done) {
      n.done = done;
      drawCount(n);
    }
  }

  function onPhaseFinish(b, d) {
    const n = b.nodes.get(d.id);
    if (!n || n.li.classList.contains('done')) return;
    n.li.classList.add('done');
    if (d.early) n.li.classList.add('early');
    if (n.parent && ++n.parent.doneKids > 2 * KEEP_DONE) fold(b, n.parent);
  }

  // fold removes the oldest finished children of p but KEEP_DONE, with their subtrees, and
  // counts them on a line above the rest.
  function fold(b, p) {
    const done = Array.from(p.kids.children).filter((li) => li.classList.contains('done'));
    for (const li of done.slice(0, done.length - KEEP_DONE)) {
      for (const sub of [li, ...li.querySelectorAll('[data-phase-id]')]) b.nodes.delete(Number(sub.dataset.phaseId));
      li.remove();
      p.folded++;
    }
    p.doneKids = KEEP_DONE;
    let line = p.kids.firstElementChild;
    if (!line || !line.classList.contains('folded')) {
      line = el('li', 'folded');
      p.kids.prepend(line);
    }
    line.textContent = `… ${p.folded} earlier phases`;
  }

  function onLog(b, d) {
    const log = $('log');
    const li = el('li', 'sev-' + (d.severity || 'info'));
    li.append(el('span', 'sev', d.severity || ''), el('span', 'msg', d.message || ''));
    log.append(li);
    while (log.childElementCount > MAX_LOG_LINES) log.firstElementChild.remove();
    $('log-section').hidden = false;
  }

  function onResult(b, d) {
    const state = STATUS_STATE[d.status] || String(d.status || 'failed');
    closeStream(b);
    end(b, state, d.where, d.hint, d.error, d.status === 'built');
    // The snapshot knows what the event does not (an engine the server keeps, say).
    loadSnapshot(b);
  }

  // end shows how the build ended.
  function end(b, state, where, hint, error, engine) {
    b.ended = true;
    clearInterval(b.queueTimer);
    b.queueTimer = 0;
    setState(state, 0);
    $('note').textContent = '';
    const path = where && Array.isArray(where.path) ? where.path.map(String) : [];
    setField('where', path.join(' › '));
    // The node TensorRT's error names, as it wrote it; never guessed from a phase name.
    setField('node', where && typeof where.node === 'string' ? where.node : '');
    setField('message', error || '');
    setField('hint', hint || '');
    if (where && b.nodes.has(where.id)) {
      // Open the phases down to where it ended, and mark that one.
      const n = b.nodes.get(where.id);
      n.li.classList.add('where');
      for (let p = n.li; p && p.id !== 'tree'; p = p.parentElement) {
        if (p.classList.contains('phase')) p.classList.add('open');
      }
    }
    const stop = $('stop');
    stop.disabled = true;
    stop.textContent = 'Stop';
    const base = buildPath(b.id);
    $('engine-link').href = base + '/engine';
    $('engine-link').hidden = !engine;
    $('report-link').href = base + '/report';
    $('trace-link').href = base + '/trace';
    $('links').hidden = false;
  }

  // stopBuild cancels the build at its next step; a second press cancels it at once (hard).
  async function stopBuild() {
    const b = current;
    if (!b || b.ended) return;
    const hard = b.stopping;
    const stop = $('stop');
    stop.disabled = true;
    hideError($('build-error'));
    try {
      await api('POST', buildPath(b.id) + '/cancel' + (hard ? '?hard=true' : ''), {});
      b.stopping = true;
      if (current === b && !b.ended) {
        $('note').textContent = 'stopping…';
        stop.textContent = 'Stop now';
        stop.title = 'Stop the build at once, without waiting for its next step';
        stop.disabled = hard;
      }
    } catch (err) {
      if (current === b && !b.ended) {
        showError($('build-error'), err);
        stop.disabled = false;
      }
    }
  }

  // ---- Routing ----

  function route() {
    const m = /^#\/builds\/(.+)$/.exec(location.hash);
    if (m) {
      let id = m[1];
      try { id = decodeURIComponent(id); } catch (_) { /* shown as written */ }
      $('home-view').hidden = true;
      $('build-view').hidden = false;
      if (!current || current.id !== id) openBuild(id);
      return;
    }
    closeBuild();
    document.title = 'trtbuild';
    $('build-view').hidden = true;
    $('home-view').hidden = false;
    refreshList();
  }

  $('build-form').addEventListener('submit', submitBuild);
  $('stop').addEventListener('click', stopBuild);
  window.addEventListener('hashchange', route);
  setInterval(() => {
    if (!document.hidden && !$('home-view').hidden) refreshList();
  }, LIST_REFRESH_MS);
  document.addEventListener('visibilitychange', () => {
    if (!document.hidden && !$('home-view').hidden) refreshList();
  });
  route();
})();
