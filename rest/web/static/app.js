// Weir dashboard: reads the JobManager's REST API (/v1/...) and fills
// tables and Chart.js charts. No framework, no build step. Every value
// shown comes from one REST reply; cells carry the raw number in
// data-value so tests (and users copying) get it exactly.
'use strict';
(function () {
  const PAGE = 50; // rows per page of any per-subtask table
  const SLOWEST = 20; // subtasks in the checkpoint timeline chart
  const NO_WATERMARK = '-9223372036854775808';
  const TABS = ['graph', 'checkpoints', 'watermarks', 'lag', 'analyze', 'tail', 'exceptions'];
  const TAIL_ROWS = 100; // rows the tail panel keeps
  // A Kafka source's per-partition lag among a vertex's metrics:
  // <subtask>.<operator>.KafkaSourceReader.topic.<topic>.partition.<p>.records-lag.
  const LAG = /^(\d+)\..*\.KafkaSourceReader\.topic\.(.+)\.partition\.(\d+)\.records-lag$/;
  const st = {
    token: sessionStorage.getItem('weir.token') || '',
    refresh: 3000,
    timer: null,
    route: null,
    charts: {},
    pages: {},
    vertex: null, // selected vertex id on the graph tab
    ckpt: null, // selected checkpoint id on the checkpoints tab (null: latest)
    timelines: {}, // finished checkpoints' phases and slowest subtasks by "job/id"
    ckAll: null, // "job/id" of the checkpoint whose every subtask is shown
    op: null, // the running stop/savepoint operation's message
    hotBy: 'busy', // ranking of the hottest subtasks table
    tail: null, // the open tail: { source: EventSource, vid }
  };

  // ---------------------------------------------------------- DOM helpers

  // el builds an element; attrs are set as attributes (on* are listeners),
  // children are nodes or text (never parsed as HTML).
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? '' : String(v));
    }
    for (const c of children.flat()) {
      if (c !== undefined && c !== null) e.append(c instanceof Node ? c : String(c));
    }
    return e;
  }
  const $ = (sel) => document.querySelector(sel);
  function fill(sel, ...children) {
    const e = $(sel);
    if (e) e.replaceChildren(...children.flat().filter((c) => c !== undefined && c !== null));
    return e;
  }

  const fmtInt = (n) => (n === undefined || n === null || n < 0 ? '—' : Number(n).toLocaleString('en-US'));
  function fmtBytes(n) {
    if (n === undefined || n === null || n < 0) return '—';
    const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let i = 0;
    let v = n;
    while (v >= 1024 && i < u.length - 1) { v /= 1024; i++; }
    return (i === 0 ? v : v.toFixed(1)) + ' ' + u[i];
  }
  // Long.MIN_VALUE and MAX_VALUE arrive as the nearest doubles; a watermark
  // Date cannot show (beyond ±8.64e15 ms) is printed as a number.
  const fmtWatermark = (w) => (w <= -9.2e18 ? 'none' : w >= 9.2e18 ? 'end of input' :
    Math.abs(w) > 8.64e15 ? String(w) : fmtTime(w));
  const fmtMs = (n) => (n === undefined || n === null || n < 0 ? '—' : Number(n).toLocaleString('en-US') + ' ms');
  const fmtTime = (ms) => (!ms || ms <= 0 ? '—' : new Date(ms).toISOString().replace('T', ' ').replace('Z', ' UTC'));
  function fmtDuration(ms) {
    if (ms === undefined || ms < 0) return '—';
    const s = Math.floor(ms / 1000);
    const h = Math.floor(s / 3600);
    const m = Math.floor((s % 3600) / 60);
    return (h ? h + 'h ' : '') + (h || m ? m + 'm ' : '') + (s % 60) + 's';
  }
  const num = (n, text) => el('td', { class: 'num', 'data-value': n }, text === undefined ? fmtInt(n) : text);

  // table builds a table from a header row and rows of cells.
  function table(attrs, head, rows) {
    return el('table', attrs,
      el('thead', {}, el('tr', {}, head.map((h) => el('th', {}, h)))),
      el('tbody', {}, rows));
  }

  // paged returns the rows of page key (PAGE per page) and a pager.
  function paged(key, items, render, size) {
    const n = size || PAGE;
    const pages = Math.max(1, Math.ceil(items.length / n));
    const p = Math.min(st.pages[key] || 0, pages - 1);
    st.pages[key] = p;
    const rows = items.slice(p * n, (p + 1) * n).map(render);
    const go = (d) => () => { st.pages[key] = p + d; refresh(); };
    const pager = pages === 1 ? null : el('div', { class: 'pager', 'data-pager': key },
      el('button', { onclick: go(-1), disabled: p === 0 }, '‹ previous'),
      el('span', {}, `page ${p + 1} of ${pages} (${items.length} rows)`),
      el('button', { onclick: go(1), disabled: p === pages - 1 }, 'next ›'));
    return { rows, pager };
  }

  // serverPager is the pager of a list the server pages (?offset=&limit=):
  // page p of total rows.
  function serverPager(key, p, total) {
    const pages = Math.max(1, Math.ceil(total / PAGE));
    const go = (d) => () => { st.pages[key] = p + d; refresh(); };
    return pages === 1 ? null : el('div', { class: 'pager', 'data-pager': key },
      el('button', { onclick: go(-1), disabled: p === 0 }, '‹ previous'),
      el('span', {}, `page ${p + 1} of ${pages} (${total} rows)`),
      el('button', { onclick: go(1), disabled: p >= pages - 1 }, 'next ›'));
  }

  // chart creates the Chart.js chart on canvas id, or updates its data in
  // place (no flicker, no new canvas on every refresh).
  // height, in px, overrides the box's CSS height (a bar chart grows with
  // its bars).
  function chart(box, id, config, height) {
    const old = st.charts[id];
    if (old && old.canvas.isConnected) {
      if (height) old.canvas.parentNode.style.height = height + 'px';
      old.data = config.data;
      old.options = Object.assign({ animation: false, responsive: true, maintainAspectRatio: false }, config.options);
      old.update('none');
      return old.canvas.parentNode;
    }
    const canvas = el('canvas', { id });
    const wrap = el('div', { class: 'chart-box' + (box ? ' ' + box : '') }, canvas);
    if (height) wrap.style.height = height + 'px';
    config.options = Object.assign({ animation: false, responsive: true, maintainAspectRatio: false }, config.options);
    st.charts[id] = new Chart(canvas, config);
    return wrap;
  }
  // keep puts a chart's box in place: the same node on every refresh.
  function keep(sel, node) {
    const parent = $(sel);
    if (parent && node.parentNode !== parent) parent.replaceChildren(node);
  }

  // ---------------------------------------------------------- REST

  async function call(method, path, body) {
    const headers = { Accept: 'application/json' };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    if (method !== 'GET' && st.token) headers.Authorization = 'Bearer ' + st.token;
    const r = await fetch('/v1' + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const data = await r.json().catch(() => null);
    if (!r.ok) {
      let msg = `${r.status}: ` + (data && data.errors ? data.errors.join('; ') : r.statusText);
      if (r.status === 401) msg += ' — enter the token (weir.rest.auth-token) in the Token field at the top right';
      throw new Error(msg);
    }
    return data;
  }
  const get = (path) => call('GET', path);

  // ---------------------------------------------------------- routing

  // Routes: #/ (jobs), #/job/ID/TAB with TAB one of TABS.
  function parseRoute() {
    const parts = location.hash.replace(/^#\/?/, '').split('/');
    if (parts[0] === 'job' && /^[0-9a-f]{32}$/.test(parts[1] || '')) {
      const tab = TABS.includes(parts[2]) ? parts[2] : 'graph';
      return { view: 'job', id: parts[1], tab };
    }
    return { view: 'jobs' };
  }

  function route() {
    const r = parseRoute();
    const prev = st.route;
    st.route = r;
    stopTail();
    if (!prev || prev.view !== r.view || prev.id !== r.id) {
      st.vertex = null;
      st.ckpt = null;
      st.op = null;
      st.pages = {};
      if (r.view === 'job') skeletonJob(r.id);
      else fill('#main', el('h1', {}, 'Jobs'), el('div', { id: 'cards', class: 'cards' }), el('div', { id: 'jobs' }));
    }
    if (r.view === 'job') skeletonTab(r);
    refresh();
  }

  async function refresh() {
    clearTimeout(st.timer);
    const r = st.route;
    try {
      fill('#cluster', await clusterLine());
      if (r.view === 'jobs') await renderJobs();
      else await renderJob(r);
      fill('#load-error');
    } catch (e) {
      fill('#load-error', el('p', { class: 'error' }, String(e.message || e)));
    }
    st.timer = setTimeout(refresh, st.refresh);
  }

  async function clusterLine() {
    const o = await get('/overview');
    return `${o['flink-version']} · slots ${o['slots-available']}/${o['slots-total']} free · ` +
      `jobs: ${o['jobs-running']} running, ${o['jobs-finished']} finished, ${o['jobs-cancelled']} cancelled, ${o['jobs-failed']} failed`;
  }

  // ---------------------------------------------------------- jobs overview

  async function renderJobs() {
    const jobs = (await get('/jobs/overview')).jobs;
    jobs.sort((a, b) => b['start-time'] - a['start-time']);
    const running = jobs.filter((j) => !['FINISHED', 'CANCELED', 'FAILED'].includes(j.state)).length;
    fill('#cards', card('jobs', jobs.length), card('running', running), card('ended', jobs.length - running));
    const { rows, pager } = paged('jobs', jobs, (j) => el('tr', { 'data-job': j.jid },
      el('td', {}, el('a', { href: `#/job/${j.jid}/graph` }, j.name)),
      el('td', {}, el('span', { class: 'state ' + j.state }, j.state)),
      el('td', {}, fmtTime(j['start-time'])),
      el('td', {}, fmtDuration(j.duration)),
      num(j.tasks.running, `${j.tasks.running} / ${j.tasks.total || 0}`),
      el('td', { class: 'muted' }, j.jid)));
    fill('#jobs', jobs.length === 0 ? el('p', { class: 'muted' }, 'No jobs yet: submit one with weir submit FILE.sql.') :
      [table({ id: 'jobs-table' }, ['Name', 'State', 'Started', 'Duration', 'Subtasks running', 'Job id'], rows), pager]);
  }
  const card = (label, value) => el('div', { class: 'card' }, el('b', {}, value), label);

  // ---------------------------------------------------------- job page

  function skeletonJob(id) {
    fill('#main',
      el('p', {}, el('a', { href: '#/' }, '← all jobs')),
      el('div', { id: 'job-head' }),
      el('div', { class: 'actions' },
        el('input', { id: 'savepoint-dir', type: 'text', placeholder: 'savepoint directory (absolute path; empty: state.savepoints.dir)' }),
        el('label', {}, el('input', { id: 'drain', type: 'checkbox' }), ' drain'),
        el('button', { id: 'stop', onclick: () => stopJob(id) }, 'Stop with savepoint'),
        el('button', { id: 'cancel', class: 'danger', onclick: () => cancelJob(id) }, 'Cancel job'),
        el('span', { id: 'op-status' })),
      el('nav', { class: 'tabs', id: 'tabs' }),
      el('div', { id: 'load-error' }),
      el('div', { id: 'tab' }));
  }

  function skeletonTab(r) {
    fill('#tabs', TABS.map((t) =>
      el('a', { href: `#/job/${r.id}/${t}`, class: t === r.tab ? 'active' : '', 'data-tab': t },
        { graph: 'Job graph', checkpoints: 'Checkpoints', watermarks: 'Watermarks', lag: 'Kafka lag', analyze: 'Explain analyze',
          tail: 'Tail', exceptions: 'Exceptions' }[t])));
    const sections = {
      graph: ['graph-legend', 'graph', 'subtasks'],
      checkpoints: ['ck-cards', 'ck-chart', 'ck-history', 'ck-detail', 'ck-timeline-chart', 'ck-slowest', 'ck-phases', 'ck-all'],
      watermarks: ['watermarks'],
      lag: ['lag-chart', 'lag'],
      analyze: ['ea-table', 'hot', 'ea-plan'],
      tail: ['tail-controls', 'tail-stats', 'tail-rows'],
      exceptions: ['exceptions'],
    }[r.tab];
    fill('#tab', sections.map((s) => el('div', { id: s })));
  }

  async function renderJob(r) {
    const job = await get(`/jobs/${r.id}`);
    renderHead(job);
    if (r.tab === 'graph') await renderGraph(job);
    else if (r.tab === 'checkpoints') await renderCheckpoints(job);
    else if (r.tab === 'watermarks') await renderWatermarks(job);
    else if (r.tab === 'lag') await renderLag(job);
    else if (r.tab === 'analyze') await renderAnalyze(job);
    else if (r.tab === 'tail') renderTailControls(job);
    else await renderExceptions(job);
  }

  function renderHead(job) {
    const ended = ['FINISHED', 'CANCELED', 'FAILED'].includes(job.state);
    fill('#job-head',
      el('h1', {}, job.name, ' ', el('span', { id: 'job-state', class: 'state ' + job.state }, job.state)),
      el('p', { class: 'muted' }, `id ${job.jid} · started ${fmtTime(job['start-time'])} · ` +
        (ended ? `ran for ${fmtDuration(job.duration)} · ended ${fmtTime(job['end-time'])}` : `running for ${fmtDuration(job.duration)}`)));
    for (const b of ['#stop', '#cancel']) $(b).disabled = ended;
  }

  function setOp(text, cls, location) {
    st.op = { text, cls, location };
    fill('#op-status', el('span', { class: cls || 'muted', 'data-location': location }, text));
  }

  async function stopJob(id) {
    const dir = $('#savepoint-dir').value.trim();
    const body = { drain: $('#drain').checked };
    if (dir) body.targetDirectory = dir;
    setOp('Stopping with a savepoint…');
    try {
      const t = await call('POST', `/jobs/${id}/stop`, body);
      await waitSavepoint(id, t['request-id']);
    } catch (e) {
      setOp(e.message, 'error');
    }
  }

  async function waitSavepoint(id, trigger) {
    for (;;) {
      const s = await get(`/jobs/${id}/savepoints/${trigger}`);
      if (s.status.id === 'COMPLETED') {
        const op = s.operation || {};
        if (op.location) setOp('Savepoint completed: ' + op.location, 'ok', op.location);
        else setOp('Savepoint failed: ' + (op['failure-cause'] ? op['failure-cause']['stack-trace'] : 'no reason given'), 'error');
        refresh();
        return;
      }
      await new Promise((done) => setTimeout(done, 300));
    }
  }

  async function cancelJob(id) {
    setOp('Cancelling…');
    try {
      await call('PATCH', `/jobs/${id}?mode=cancel`);
      setOp('Cancel requested.', 'ok');
      refresh();
    } catch (e) {
      setOp(e.message, 'error');
    }
  }

  // ---------------------------------------------------------- job graph

  // columns orders the plan's vertices by depth: sources first.
  function columns(job) {
    const nodes = new Map(job.plan.nodes.map((n) => [n.id, n]));
    const depth = new Map();
    const d = (id, seen) => {
      if (depth.has(id)) return depth.get(id);
      const n = nodes.get(id);
      let v = 0;
      if (n && !seen.has(id)) {
        seen.add(id);
        for (const i of n.inputs || []) v = Math.max(v, d(i.id, seen) + 1);
      }
      depth.set(id, v);
      return v;
    };
    const cols = [];
    for (const v of job.vertices) (cols[d(v.id, new Set())] ||= []).push(v);
    return { cols: cols.filter(Boolean), nodes };
  }

  // pressure reads a vertex's back-pressure sample: the highest busy and
  // back-pressured ratio of its subtasks, or null when not measured.
  async function pressure(job, v) {
    try {
      const bp = await get(`/jobs/${job.jid}/vertices/${v.id}/backpressure`);
      if (bp.status !== 'ok' || !bp.subtasks || bp.subtasks.length === 0) return null;
      let busy = 0;
      let back = 0;
      for (const s of bp.subtasks) { busy = Math.max(busy, s.busyRatio); back = Math.max(back, s.ratio); }
      return { busy, back, level: bp['backpressure-level'] };
    } catch (e) {
      return null;
    }
  }

  // colour: back-pressured (more than busy) shades to dark grey; else
  // from light blue (idle) to red (busy); white without a sample.
  function colour(p) {
    if (!p) return { bg: '#ffffff', fg: '#1d2329' };
    if (p.back > p.busy) {
      const l = Math.round(92 - 62 * p.back);
      return { bg: `hsl(0, 0%, ${l}%)`, fg: l < 55 ? '#fff' : '#1d2329' };
    }
    const mix = (a, b) => Math.round(a + (b - a) * p.busy);
    return { bg: `rgb(${mix(219, 229)}, ${mix(234, 57)}, ${mix(254, 53)})`, fg: p.busy > 0.6 ? '#fff' : '#1d2329' };
  }
  const ratio = (p, k) => (p ? (100 * p[k]).toFixed(0) + ' %' : 'n/a');

  async function renderGraph(job) {
    const { cols, nodes } = columns(job);
    const ps = await Promise.all(job.vertices.map((v) => pressure(job, v)));
    const pOf = new Map(job.vertices.map((v, i) => [v.id, ps[i]]));
    const names = new Map(job.vertices.map((v) => [v.id, v.name]));
    fill('#graph-legend', el('p', { class: 'legend muted' }, 'Colour: ',
      el('span', { class: 'lg-idle' }, 'idle'), '→', el('span', { class: 'lg-busy' }, 'busy'),
      el('span', { class: 'lg-back' }, 'back-pressured'), el('span', { class: 'lg-none' }, 'not measured'), ' ',
      'Click a vertex for its subtasks.'));
    const parts = [];
    cols.forEach((col, i) => {
      if (i > 0) parts.push(el('div', { class: 'arrow' }, '→'));
      parts.push(el('div', { class: 'column' }, col.map((v) => vertexCard(v, pOf.get(v.id), nodes.get(v.id), names))));
    });
    fill('#graph', parts);
    for (const v of job.vertices) {
      const c = colour(pOf.get(v.id));
      const card = document.querySelector(`.vertex[data-vertex="${v.id}"]`);
      card.style.background = c.bg;
      card.style.color = c.fg;
    }
    await renderSubtasks(job);
  }

  function vertexCard(v, p, node, names) {
    const m = v.metrics;
    const bytes = (n, complete) => (complete ? fmtBytes(n) : 'n/a');
    const inputs = ((node && node.inputs) || []).map((i) => `${names.get(i.id) || i.id} (${i.ship_strategy})`);
    return el('div', {
      class: 'vertex' + (st.vertex === v.id ? ' selected' : ''), 'data-vertex': v.id,
      onclick: () => { st.vertex = v.id; st.pages.subtasks = 0; refresh(); },
    },
    el('div', { class: 'name' }, v.name),
    el('div', { class: 'muted' }, `${v.status} · parallelism ${v.parallelism}`),
    el('dl', {},
      el('dt', {}, 'records in'), el('dd', { class: 'rec-in', 'data-value': m['read-records'] }, fmtInt(m['read-records'])),
      el('dt', {}, 'records out'), el('dd', { class: 'rec-out', 'data-value': m['write-records'] }, fmtInt(m['write-records'])),
      el('dt', {}, 'bytes in'), el('dd', { class: 'bytes-in' }, bytes(m['read-bytes'], m['read-bytes-complete'])),
      el('dt', {}, 'bytes out'), el('dd', { class: 'bytes-out' }, bytes(m['write-bytes'], m['write-bytes-complete'])),
      el('dt', {}, 'busy'), el('dd', { class: 'busy' }, ratio(p, 'busy')),
      el('dt', {}, 'back-pressured'), el('dd', { class: 'backpressured' }, ratio(p, 'back'))),
    inputs.length ? el('div', { class: 'inputs' }, 'from ' + inputs.join(', ')) : null);
  }

  // renderSubtasks lists the selected vertex's subtasks a page at a time:
  // it asks the server for one page (?offset=&limit=) and for the extremes
  // over all subtasks (/subtasks/metrics?agg=min,max), never for every
  // subtask — at 5,000 that was megabytes a refresh (FLINK-35902).
  async function renderSubtasks(job) {
    const v = job.vertices.find((x) => x.id === st.vertex);
    if (!v) { fill('#subtasks'); return; }
    const base = `/jobs/${job.jid}/vertices/${v.id}`;
    const p = st.pages.subtasks || 0;
    const [vd, agg] = await Promise.all([get(`${base}?offset=${p * PAGE}&limit=${PAGE}`),
      get(`${base}/subtasks/metrics?get=numRecordsIn,numRecordsOut&agg=min,max`)]);
    const total = vd['subtasks-total'];
    const pages = Math.max(1, Math.ceil(total / PAGE));
    if (p >= pages) { st.pages.subtasks = pages - 1; refresh(); return; }
    const ext = (id, k) => { const m = agg.find((a) => a.id === id); return m && m[k] != null ? m[k] : 0; };
    const rows = vd.subtasks.map((s) => el('tr', { 'data-subtask': s.subtask },
      num(s.subtask, String(s.subtask)), el('td', {}, s.status), num(s.attempt, String(s.attempt)),
      num(s.metrics['read-records']), num(s.metrics['write-records']), el('td', {}, fmtDuration(s.duration)),
      el('td', {}, s.endpoint || '—')));
    const pager = serverPager('subtasks', p, total);
    fill('#subtasks', el('h2', {}, `${v.name}: ${total} subtasks`),
      el('p', { class: 'muted' }, `records in: min ${fmtInt(ext('numRecordsIn', 'min'))}, max ${fmtInt(ext('numRecordsIn', 'max'))} · ` +
        `records out: min ${fmtInt(ext('numRecordsOut', 'min'))}, max ${fmtInt(ext('numRecordsOut', 'max'))}`),
      table({ id: 'subtasks-table' }, ['Subtask', 'Status', 'Attempt', 'Records in', 'Records out', 'Duration', 'Endpoint'], rows), pager);
  }

  // ---------------------------------------------------------- checkpoints

  async function renderCheckpoints(job) {
    const cs = await get(`/jobs/${job.jid}/checkpoints`);
    const c = cs.counts;
    const s = cs.summary;
    const latest = cs.latest.completed;
    fill('#ck-cards', el('div', { class: 'cards' },
      card('completed', c.completed), card('failed', c.failed), card('in progress', c.in_progress), card('restored', c.restored),
      card('latest completed', latest ? '#' + latest.id : '—'),
      card('end-to-end min / avg / max', `${fmtMs(s.end_to_end_duration.min)} / ${fmtMs(s.end_to_end_duration.avg)} / ${fmtMs(s.end_to_end_duration.max)}`),
      card('checkpointed size avg', fmtBytes(s.checkpointed_size.avg)),
      cs.latest.restored ? card('restored from', `#${cs.latest.restored.id} ${cs.latest.restored.external_path}`) : null,
      cs.latest.savepoint ? card('latest savepoint', cs.latest.savepoint.external_path || '#' + cs.latest.savepoint.id) : null));
    const hist = [...cs.history].sort((a, b) => a.id - b.id);
    keep('#ck-chart', chart('', 'history-chart', {
      type: 'bar',
      data: {
        labels: hist.map((h) => '#' + h.id),
        datasets: [
          { label: 'end-to-end duration (ms)', data: hist.map((h) => h.end_to_end_duration), yAxisID: 'ms',
            backgroundColor: hist.map((h) => (h.status === 'FAILED' ? '#c62828' : h.is_savepoint ? '#7b1fa2' : '#1f6feb')) },
          { label: 'checkpointed size (bytes)', data: hist.map((h) => h.checkpointed_size), yAxisID: 'bytes', type: 'line',
            borderColor: '#2e7d32', backgroundColor: '#2e7d32' },
        ],
      },
      options: { scales: { ms: { position: 'left', beginAtZero: true, title: { display: true, text: 'ms' } },
        bytes: { position: 'right', beginAtZero: true, grid: { drawOnChartArea: false }, title: { display: true, text: 'bytes' } } },
      plugins: { title: { display: true, text: 'Checkpoint history (red: failed, purple: savepoint)' } } },
    }));
    const newest = [...cs.history].sort((a, b) => b.id - a.id);
    const sel = st.ckpt !== null ? st.ckpt : (latest ? latest.id : (newest[0] || {}).id);
    const { rows, pager } = paged('history', newest, (h) => el('tr', {
      class: 'clickable' + (h.id === sel ? ' selected' : ''), 'data-checkpoint': h.id,
      onclick: () => { st.ckpt = h.id; refresh(); },
    },
    num(h.id, '#' + h.id), el('td', { class: 'state ' + h.status }, h.status), el('td', {}, h.checkpoint_type),
    el('td', {}, fmtTime(h.trigger_timestamp)), num(h.end_to_end_duration, fmtMs(h.end_to_end_duration)),
    num(h.checkpointed_size, fmtBytes(h.checkpointed_size)), num(h.state_size, fmtBytes(h.state_size)),
    el('td', { class: 'num' }, `${h.num_acknowledged_subtasks} / ${h.num_subtasks}`),
    el('td', { class: 'error' }, h.failure_message || '')), 15);
    fill('#ck-history', el('h2', {}, 'History (click a checkpoint for its timeline)'),
      table({ id: 'history-table' }, ['Id', 'Status', 'Type', 'Triggered', 'End to end', 'Checkpointed', 'State', 'Acknowledged', 'Failure'], rows), pager);
    if (sel === undefined) {
      fill('#ck-detail', el('p', { class: 'muted' }, 'No checkpoint yet.'));
      return;
    }
    await renderCheckpointDetail(job, cs.history.find((h) => h.id === sel), sel);
  }

  // timelineOf fetches a checkpoint's per-vertex phase summary and its
  // slowest subtasks — never the whole timeline, which at 5,000 subtasks
  // is a megabyte; those of a finished checkpoint never change and are
  // kept.
  async function timelineOf(job, id) {
    const key = job.jid + '/' + id;
    if (st.timelines[key]) return st.timelines[key];
    const [phases, slow] = await Promise.all([get(`/jobs/${job.jid}/checkpoints/details/${id}/phases`),
      get(`/jobs/${job.jid}/checkpoints/details/${id}/slowest?n=${SLOWEST}`)]);
    const t = { phases, slow };
    if (phases.status !== 'IN_PROGRESS') st.timelines[key] = t;
    return t;
  }

  async function renderCheckpointDetail(job, h, id) {
    let t;
    try {
      t = await timelineOf(job, id);
    } catch (e) {
      fill('#ck-detail', el('h2', {}, `Checkpoint #${id}`), el('p', { class: 'error' }, e.message));
      return;
    }
    const ph = t.phases;
    fill('#ck-detail', el('h2', { id: 'ck-selected', 'data-checkpoint': id }, `Checkpoint #${id} — ${ph.status}`),
      el('p', { class: 'muted' }, `triggered ${fmtTime(ph.trigger_timestamp)} · end to end ${fmtMs(ph.end_to_end_duration)}` +
        ` · ${ph.num_acknowledged_subtasks} of ${ph.num_subtasks} subtasks acknowledged`),
      h && h.failure_message ? el('p', { class: 'error', id: 'ck-failure' }, 'Failed: ' + h.failure_message) : null,
      ph.num_acknowledged_subtasks < ph.num_subtasks ? failureTable(ph.vertices) : null);
    const slow = t.slow.subtasks;
    const seg = (s, a, b) => (s[a] >= 0 && s[b] >= 0 ? s[b] - s[a] : 0);
    const bar = (label, colourOf, f) => ({ label, data: slow.map(f), backgroundColor: colourOf, stack: 'phases' });
    keep('#ck-timeline-chart', chart('', 'timeline-chart', {
      type: 'bar',
      data: {
        labels: slow.map((s) => `${s.vertex_name} #${s.subtask}` + (s.phase === 'acknowledged' ? '' : ` (${s.phase})`)),
        datasets: [
          bar('trigger → barrier received', '#b0bec5', (s) => (s.barrier_received >= 0 ? s.barrier_received - s.trigger : 0)),
          bar('alignment', '#ffb300', (s) => seg(s, 'barrier_received', 'aligned')),
          bar('sync snapshot', '#e53935', (s) => seg(s, 'aligned', 'sync_done')),
          bar('async upload', '#1e88e5', (s) => seg(s, 'sync_done', 'async_done')),
          bar('acknowledged → completed', '#43a047', (s) => seg(s, 'acknowledged', 'completed')),
        ],
      },
      options: { indexAxis: 'y', scales: { x: { stacked: true, title: { display: true, text: 'ms after the trigger' } }, y: { stacked: true } },
        plugins: { title: { display: true, text: `Checkpoint #${id}: the ${slow.length} slowest subtasks (slowest first)` } } },
    }, 110 + 34 * slow.length));
    const cell = (v) => num(v, fmtMs(v));
    fill('#ck-slowest', el('h2', {}, `Slowest subtasks of #${id}`), table({ id: 'slowest-table', 'data-checkpoint': id },
      ['Vertex', 'Subtask', 'Phase', 'Barrier received', 'Aligned', 'Sync done', 'Async done', 'Acknowledged', 'Completed', 'State size'],
      slow.map((s) => el('tr', { 'data-vertex': s.vertex_id, 'data-subtask': s.subtask },
        el('td', {}, s.vertex_name), num(s.subtask, String(s.subtask)), el('td', {}, s.phase),
        cell(s.barrier_received), cell(s.aligned), cell(s.sync_done), cell(s.async_done), cell(s.acknowledged), cell(s.completed),
        num(s.state_size, fmtBytes(s.state_size))))));
    fill('#ck-phases', el('h2', {}, 'Per vertex, over all subtasks'), phaseSummary(ph.vertices));
    await renderAllSubtasks(job, id);
  }

  // renderAllSubtasks shows, on demand, every subtask's timeline of
  // checkpoint id a page at a time (?offset=&limit=).
  async function renderAllSubtasks(job, id) {
    const key = 'ck-all';
    if (st.ckAll !== job.jid + '/' + id) {
      fill('#ck-all', el('button', { id: 'ck-all-show', onclick: () => { st.ckAll = job.jid + '/' + id; st.pages[key] = 0; refresh(); } },
        'Show every subtask (paged)'));
      return;
    }
    const p = st.pages[key] || 0;
    const tl = await get(`/jobs/${job.jid}/checkpoints/details/${id}/timeline?offset=${p * PAGE}&limit=${PAGE}`);
    const cell = (v) => num(v, fmtMs(v));
    fill('#ck-all', el('h2', {}, `Every subtask of #${id}`), table({ id: 'ck-all-table', 'data-checkpoint': id },
      ['Vertex', 'Subtask', 'Phase', 'Barrier received', 'Aligned', 'Sync done', 'Async done', 'Acknowledged', 'State size'],
      tl.subtasks.map((s) => el('tr', { 'data-vertex': s.vertex_id, 'data-subtask': s.subtask },
        el('td', {}, s.vertex_name), num(s.subtask, String(s.subtask)), el('td', {}, s.phase), cell(s.barrier_received), cell(s.aligned),
        cell(s.sync_done), cell(s.async_done), cell(s.acknowledged), num(s.state_size, fmtBytes(s.state_size))))),
    serverPager(key, p, tl['subtasks-total']));
  }

  // failureTable names, per vertex and phase, the subtasks that had not
  // acknowledged (GET …/phases counts them and lists the first 20): where
  // the checkpoint was stuck or failed.
  function failureTable(vertices) {
    const rows = [];
    for (const v of vertices) {
      for (const p of v.pending) {
        const shown = p.subtasks.join(', ') + (p.count > p.subtasks.length ? `, … (${p.count} in all)` : '');
        rows.push(el('tr', { 'data-vertex': v.vertex_id }, el('td', {}, v.vertex_name), el('td', {}, p.phase), num(p.count),
          el('td', {}, shown)));
      }
    }
    return el('div', {}, el('h2', {}, 'Subtasks that did not acknowledge'),
      table({ id: 'pending-table' }, ['Vertex', 'Phase reached', 'Subtasks', 'Which'], rows));
  }

  // phaseSummary shows GET …/phases: per vertex, the average and the
  // slowest subtask's time in each phase, so 5,000 subtasks make a
  // handful of rows.
  function phaseSummary(vertices) {
    const ms = (m) => num(m.max, `${fmtMs(m.avg)} / ${fmtMs(m.max)}`);
    return table({ id: 'phases-table' }, ['Vertex', 'Acknowledged', 'Barrier delay avg / max', 'Alignment avg / max',
      'Sync avg / max', 'Async avg / max', 'End to end avg / max', 'State size'],
    vertices.map((v) => el('tr', { 'data-vertex': v.vertex_id }, el('td', {}, v.vertex_name),
      el('td', { class: 'num' }, `${v.num_acknowledged_subtasks} / ${v.num_subtasks}`),
      ms(v.start_delay), ms(v.alignment), ms(v.sync), ms(v.async), ms(v.end_to_end_duration), num(v.state_size, fmtBytes(v.state_size)))));
  }

  // ---------------------------------------------------------- watermarks

  // renderWatermarks shows, per vertex, GET …/watermarks/summary (how
  // many subtasks have none, lowest, highest, average and the subtasks
  // holding the vertex back) and one page of every subtask's watermark —
  // never the whole list, which at 5,000 subtasks is 300 KB a vertex.
  async function renderWatermarks(job) {
    const all = await Promise.all(job.vertices.map((v) => {
      const base = `/jobs/${job.jid}/vertices/${v.id}/watermarks`;
      const p = st.pages['wm-' + v.id] || 0;
      return Promise.all([get(`${base}/summary?n=10`), get(`${base}?offset=${p * PAGE}&limit=${PAGE}`)]);
    }));
    const parts = [el('p', { class: 'muted' }, 'Each subtask\'s current input watermark (a source\'s: the watermark it emits). ' +
      '— means none yet.')];
    const wmRow = (hi) => (m) => {
      const raw = m.value;
      const none = raw === NO_WATERMARK;
      return el('tr', { 'data-subtask': parseInt(m.id, 10) }, num(parseInt(m.id, 10), String(parseInt(m.id, 10))),
        el('td', { class: 'num', 'data-value': raw }, none ? '—' : raw), el('td', {}, fmtWatermark(Number(raw))),
        el('td', { class: 'num' }, none || hi === null ? '—' : fmtMs(hi - Number(raw))));
    };
    job.vertices.forEach((v, i) => {
      const [sum, page] = all[i];
      const set = sum['subtasks-total'] - sum['no-watermark'];
      const hi = set > 0 ? sum.max : null;
      const head = ['Subtask', 'Watermark (ms)', 'As time', 'Behind the highest'];
      parts.push(el('section', { class: 'wm-vertex', 'data-vertex': v.id },
        el('h2', {}, v.name),
        el('p', { class: 'muted wm-summary', 'data-min': sum.min, 'data-max': sum.max, 'data-none': sum['no-watermark'] },
          `${sum['subtasks-total']} subtasks · ${sum['no-watermark']} without a watermark` +
          (set > 0 ? ` · lowest ${fmtWatermark(sum.min)} · highest ${fmtWatermark(sum.max)} · average ${fmtWatermark(Math.round(sum.avg))}` +
            ` · spread ${fmtMs(sum.max - sum.min)}` : '')),
        // With one page of subtasks the page shows them all: no need for the lowest.
        sum['subtasks-total'] > PAGE ? [el('h3', {}, `The ${sum.lowest.length} lowest (holding the vertex back)`),
          table({ class: 'wm-lowest' }, head, sum.lowest.map(wmRow(hi)))] : null,
        el('h3', {}, 'Every subtask'),
        table({ class: 'wm-table' }, head, page.map(wmRow(hi))),
        serverPager('wm-' + v.id, st.pages['wm-' + v.id] || 0, sum['subtasks-total'])));
    });
    fill('#watermarks', parts);
  }

  // ---------------------------------------------------------- Kafka lag

  // lagOf reads a vertex's Kafka partitions and their records-lag (none for
  // a vertex without a Kafka source): the metric ids first, then the values
  // of the lag ones.
  async function lagOf(job, v) {
    // The metric names over all subtasks first (a few dozen): every
    // subtask's ids are about 40 each, 7 MB at 5,000 subtasks.
    const names = await get(`/jobs/${job.jid}/vertices/${v.id}/subtasks/metrics`);
    if (!names.some((m) => LAG.test('0.' + m.id))) return [];
    const ids = (await get(`/jobs/${job.jid}/vertices/${v.id}/metrics`)).map((m) => m.id).filter((id) => LAG.test(id));
    if (ids.length === 0) return [];
    const vals = await get(`/jobs/${job.jid}/vertices/${v.id}/metrics?get=${encodeURIComponent(ids.join(','))}`);
    return vals.map((m) => {
      const g = LAG.exec(m.id);
      return { vertex: v.name, vid: v.id, subtask: Number(g[1]), topic: g[2], partition: Number(g[3]), lag: m.value };
    });
  }

  async function renderLag(job) {
    const rows = (await Promise.all(job.vertices.map((v) => lagOf(job, v)))).flat();
    rows.sort((a, b) => Number(b.lag) - Number(a.lag) || a.topic.localeCompare(b.topic) || a.partition - b.partition);
    if (rows.length === 0) {
      fill('#lag', el('p', { class: 'muted', id: 'no-lag' }, 'No Kafka source reports a lag.'));
      return;
    }
    const top = rows.slice(0, PAGE);
    keep('#lag-chart', chart('', 'lag-chart', {
      type: 'bar',
      data: { labels: top.map((r) => `${r.topic}/${r.partition}`),
        datasets: [{ label: 'records behind the high watermark', data: top.map((r) => Number(r.lag)), backgroundColor: '#1f6feb' }] },
      options: { plugins: { title: { display: true, text: `Kafka lag: the ${top.length} partitions furthest behind` } },
        scales: { y: { beginAtZero: true } } },
    }));
    // A lag of -1 is unknown: the source has not learnt the partition's end yet.
    const total = rows.reduce((n, r) => n + Math.max(0, Number(r.lag)), 0);
    const { rows: trs, pager } = paged('lag', rows, (r) => el('tr', { 'data-topic': r.topic, 'data-partition': r.partition },
      el('td', {}, r.topic), num(r.partition, String(r.partition)), el('td', {}, r.vertex), num(r.subtask, String(r.subtask)),
      el('td', { class: 'num', 'data-value': r.lag }, Number(r.lag) < 0 ? 'unknown' : fmtInt(Number(r.lag)))));
    fill('#lag', el('p', { class: 'muted' }, `${rows.length} partitions · ${fmtInt(total)} records behind in all`),
      table({ id: 'lag-table' }, ['Topic', 'Partition', 'Source', 'Subtask', 'Records lag'], trs), pager);
  }

  // ---------------------------------------------------------- explain analyze

  const pct = (r) => el('td', { class: 'num', 'data-value': r }, (100 * r).toFixed(0) + ' %');

  // renderAnalyze shows GET /explain-analyze: a row per vertex, its
  // operators under it, the plan as text; and the hottest subtasks.
  async function renderAnalyze(job) {
    const [ea, hot] = await Promise.all([get(`/jobs/${job.jid}/explain-analyze`),
      get(`/jobs/${job.jid}/hot-subtasks?by=${st.hotBy}&n=10`)]);
    const rows = [];
    ea.vertices.forEach((v, i) => {
      rows.push(el('tr', { 'data-vertex': v.id, class: 'ea-vertex' },
        el('td', {}, `[${i}] ${v.name}`), num(v.parallelism, String(v.parallelism)),
        num(v['read-records']), num(v['write-records']),
        num(v['read-records-per-second'], v['read-records-per-second'].toFixed(1)),
        num(v['write-records-per-second'], v['write-records-per-second'].toFixed(1)),
        pct(v.busyRatio), pct(v.maxBackPressuredRatio), num(v['state-size'], fmtBytes(v['state-size'])),
        num(v['live-state-size'], fmtBytes(v['live-state-size'])),
        el('td', { 'data-value': v.watermark }, fmtWatermark(v.watermark)), num(v['source-lag'])));
      for (const o of v.operators) {
        rows.push(el('tr', { class: 'ea-operator muted', 'data-operator': o.uid },
          el('td', {}, '  · ' + o.name), el('td', {}), num(o['read-records']), num(o['write-records']),
          el('td', {}), el('td', {}), el('td', {}), el('td', {}), el('td', {}),
          num(o['live-state-size'], fmtBytes(o['live-state-size'])),
          el('td', { 'data-value': o.currentOutputWatermark }, fmtWatermark(o.currentOutputWatermark)), el('td', {})));
      }
    });
    fill('#ea-table', el('h2', {}, 'EXPLAIN ANALYZE'),
      el('p', { class: 'muted' }, 'Rates and time ratios over the last 5 s; state: bytes written for the last completed checkpoint; ' +
        'live state: the state backends\' estimate now (heap: entries encoded; Pebble: SSTs and memtables).'),
      table({ id: 'ea-table-rows' }, ['Operator chain', 'Parallelism', 'Rows in', 'Rows out', 'In/s', 'Out/s', 'Busy',
        'Back-pressured (max)', 'State (checkpoint)', 'Live state', 'Watermark (lowest)', 'Source lag'], rows));
    const by = el('select', { id: 'hot-by', onchange: (e) => { st.hotBy = e.target.value; refresh(); } },
      ['busy', 'backpressure', 'lag'].map((b) => el('option', { value: b, selected: b === st.hotBy }, b)));
    fill('#hot', el('h2', {}, 'Hottest subtasks'), el('p', {}, 'ranked by ', by),
      table({ id: 'hot-table' }, ['Vertex', 'Subtask', 'Busy', 'Back-pressured', 'Idle', 'Source lag', 'In/s', 'Out/s'],
        hot.subtasks.map((h) => el('tr', { 'data-vertex': h['vertex-id'], 'data-subtask': h.subtask },
          el('td', {}, h['vertex-name']), num(h.subtask, String(h.subtask)), pct(h.busyRatio), pct(h.backPressuredRatio),
          pct(h.idleRatio), num(h['source-lag']), num(h['read-records-per-second'], h['read-records-per-second'].toFixed(1)),
          num(h['write-records-per-second'], h['write-records-per-second'].toFixed(1))))));
    fill('#ea-plan', el('h2', {}, 'Plan'), el('pre', { id: 'ea-plan-text' }, ea.plan));
  }

  // ---------------------------------------------------------- tail

  // renderTailControls keeps the vertex list of the tail panel current;
  // the rows come from the open EventSource, not from refresh.
  function renderTailControls(job) {
    if ($('#tail-vertex')) return;
    fill('#tail-controls', el('div', { class: 'actions' },
      el('label', {}, 'Vertex ', el('select', { id: 'tail-vertex' },
        job.vertices.map((v, i) => el('option', { value: v.id, selected: i === job.vertices.length - 1 }, `[${i}] ${v.name}`)))),
      el('label', {}, 'rows/s ', el('input', { id: 'tail-rate', type: 'number', min: 1, max: 1000, value: 10 })),
      el('button', { id: 'tail-start', onclick: () => startTail(job.jid) }, 'Start tail'),
      el('button', { id: 'tail-stop', onclick: stopTail }, 'Stop')),
    el('p', { class: 'muted' }, 'Rows the vertex emits (a sink: receives), sampled; the job is never slowed: ' +
      'rows beyond the rate are skipped, those the page is too slow for dropped and counted.'));
  }

  function startTail(jid) {
    stopTail();
    const vid = $('#tail-vertex').value;
    const rate = Math.max(1, Math.min(1000, Number($('#tail-rate').value) || 10));
    const source = new EventSource(`/v1/jobs/${jid}/vertices/${vid}/tail?rate=${rate}`);
    st.tail = { source, vid };
    fill('#tail-rows', table({ id: 'tail-table' }, ['Subtask', 'Kind', 'Row', 'Event time'], []));
    fill('#tail-stats', el('span', { class: 'muted' }, 'Tailing…'));
    source.onmessage = (m) => {
      const e = JSON.parse(m.data);
      if (e.row) addTailRow(e.row);
      if (e.stats) {
        const s = e.stats;
        fill('#tail-stats', el('span', { id: 'tail-counts', 'data-seen': s.seen, 'data-sampled': s.sampled, 'data-dropped': s.dropped },
          `${fmtInt(s.seen)} rows seen · ${fmtInt(s.sampled)} shown · ${fmtInt(s.dropped)} dropped` + (s.ended ? ` · ended: ${s.ended}` : '')));
        if (s.ended) stopTail();
      }
    };
    source.onerror = () => { if (st.tail && st.tail.source === source) stopTail(); };
  }

  function addTailRow(r) {
    const body = $('#tail-table tbody');
    if (!body) return;
    body.prepend(el('tr', { class: 'tail-row', 'data-kind': r.kind },
      num(r.subtask, String(r.subtask)), el('td', { class: 'kind' }, r.kind), el('td', {}, r.fields.join(', ')),
      el('td', {}, r.timestamp <= -9.2e18 ? '—' : fmtTime(r.timestamp))));
    while (body.children.length > TAIL_ROWS) body.lastChild.remove();
  }

  function stopTail() {
    if (st.tail) st.tail.source.close();
    st.tail = null;
  }

  // ---------------------------------------------------------- exceptions

  async function renderExceptions(job) {
    const ex = await get(`/jobs/${job.jid}/exceptions`);
    const entries = ex.exceptionHistory.entries || [];
    if (entries.length === 0) {
      fill('#exceptions', el('p', { class: 'muted', id: 'no-exceptions' }, 'No exceptions: the job has not failed.'));
      return;
    }
    const { rows, pager } = paged('exceptions', entries, (e) => el('tr', {},
      el('td', {}, fmtTime(e.timestamp)), el('td', {}, e.taskName || '—'), el('td', {}, e.exceptionName),
      el('td', {}, el('details', {}, el('summary', {}, 'trace'), el('pre', {}, e.stacktrace)))));
    fill('#exceptions', ex.truncated ? el('p', { class: 'muted' }, 'Older exceptions were dropped.') : null,
      table({ id: 'exceptions-table' }, ['Time', 'Task', 'Exception', 'Details'], rows), pager);
  }

  // ---------------------------------------------------------- start

  function tokenState() {
    fill('#token-state', st.token ? 'set for this tab' : 'none');
  }

  document.addEventListener('DOMContentLoaded', async () => {
    const input = $('#token');
    input.value = st.token;
    tokenState();
    // The token lives in this tab's sessionStorage only: never in a URL.
    input.addEventListener('input', () => {
      st.token = input.value.trim();
      if (st.token) sessionStorage.setItem('weir.token', st.token);
      else sessionStorage.removeItem('weir.token');
      tokenState();
    });
    $('#token-form').addEventListener('submit', (e) => e.preventDefault());
    try {
      const cfg = await get('/config');
      if (cfg['refresh-interval'] > 0) st.refresh = cfg['refresh-interval'];
    } catch (e) { /* keep the default */ }
    window.addEventListener('hashchange', route);
    route();
  });
})();
