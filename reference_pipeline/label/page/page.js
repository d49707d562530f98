// ltt label's page: asks the server what to show, sends one answer at a time, and says plainly
// whether each answer was recorded. The server is the only source of truth: an answer counts
// once the server has written it to its journal and replied, never before.
'use strict';

const token = new URLSearchParams(location.search).get('token') || '';
const $ = (id) => document.getElementById(id);
const SVG = 'http://www.w3.org/2000/svg';

let state = null;     // the server's last state
let pending = null;   // {item, answer} sent and not yet replied to
let lost = null;      // an answer whose reply never came (the server went away)
let step = 0;         // the slider's step

async function api(method, path, body) {
  const response = await fetch(path, {
    method,
    cache: 'no-store',
    headers: {'X-LTT-Token': token, 'Content-Type': 'application/json'},
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  let data = {};
  try { data = await response.json(); } catch (e) { /* an empty or non-JSON body */ }
  return {status: response.status, data};
}

function notice(text, bad) {
  const n = $('notice');
  n.hidden = !text;
  n.textContent = text || '';
  n.className = bad ? 'bad' : '';
}

function svg(tag, attributes) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attributes || {})) e.setAttribute(k, v);
  return e;
}

// A line plot of one series over the steps, with the slider's step marked.
function linePlot(name, values) {
  const width = 600, height = 120, left = 52, right = 8, top = 16, bottom = 18;
  const finite = values.filter((v) => v !== null && Number.isFinite(v));
  let lo = Math.min(...finite), hi = Math.max(...finite);
  if (!finite.length) { lo = 0; hi = 1; }
  if (lo === hi) { lo -= 0.5; hi += 0.5; }
  const x = (i) => left + (values.length < 2 ? 0 : i / (values.length - 1)) * (width - left - right);
  const y = (v) => top + (1 - (v - lo) / (hi - lo)) * (height - top - bottom);
  const plot = svg('svg', {viewBox: `0 0 ${width} ${height}`, class: 'plot'});
  plot.append(svg('text', {x: left, y: 11}));
  plot.lastChild.textContent = name;
  for (const [v, at] of [[hi, top + 4], [lo, height - bottom]]) {
    const t = svg('text', {x: 2, y: at});
    t.textContent = Number(v.toPrecision(3)).toString();
    plot.append(t);
  }
  let d = '';
  values.forEach((v, i) => {
    if (v === null || !Number.isFinite(v)) return;
    d += `${d ? 'L' : 'M'}${x(i).toFixed(1)},${y(v).toFixed(1)}`;
  });
  plot.append(svg('path', {d, fill: 'none', stroke: '#2e86c1', 'stroke-width': 1.5}));
  plot.append(svg('line', {class: 'cursor', x1: x(step), x2: x(step), y1: top, y2: height - bottom,
                           stroke: '#c0392b', 'stroke-width': 1}));
  plot.dataset.steps = values.length;
  return plot;
}

// Two observation columns drawn top-down: the path coloured by time (blue early, red late),
// the start a circle, the end a square, the slider's step a dot.
function planePlot(plane) {
  const size = 320, pad = 16;
  const xs = plane.x, ys = plane.y;
  let x0 = Math.min(...xs), x1 = Math.max(...xs), y0 = Math.min(...ys), y1 = Math.max(...ys);
  const span = Math.max(x1 - x0, y1 - y0) || 1;
  const sx = (v) => pad + (v - x0) / span * (size - 2 * pad);
  const sy = (v) => size - pad - (v - y0) / span * (size - 2 * pad);
  const plot = svg('svg', {viewBox: `0 0 ${size} ${size}`, class: 'plot plane'});
  for (let i = 1; i < xs.length; ++i) {
    const hue = 220 - 220 * i / Math.max(1, xs.length - 1);
    plot.append(svg('line', {x1: sx(xs[i - 1]), y1: sy(ys[i - 1]), x2: sx(xs[i]), y2: sy(ys[i]),
                             stroke: `hsl(${hue},70%,45%)`, 'stroke-width': 2}));
  }
  plot.append(svg('circle', {cx: sx(xs[0]), cy: sy(ys[0]), r: 5, fill: '#1e8449'}));
  const n = xs.length - 1;
  plot.append(svg('rect', {x: sx(xs[n]) - 4, y: sy(ys[n]) - 4, width: 8, height: 8, fill: '#1d2430'}));
  plot.append(svg('circle', {class: 'dot', cx: sx(xs[step] ?? xs[0]), cy: sy(ys[step] ?? ys[0]), r: 4,
                             fill: '#c0392b'}));
  const label = svg('text', {x: 4, y: 12});
  label.textContent = `${plane.x_name} → , ${plane.y_name} ↑`;
  plot.append(label);
  plot.dataset.xs = JSON.stringify(xs.map(sx));
  plot.dataset.ys = JSON.stringify(ys.map(sy));
  return plot;
}

// A built-in task's world seen from above (x right, y up): the field, the hazards as discs,
// each goal of the rows as a ring numbered in the order reached, the start a green circle, the
// path coloured by time as planePlot's, the slider's step a dot.
function worldPlot(world) {
  const size = 320, pad = 10;
  const {path, goal} = world;
  const [ax0, ay0, ax1, ay1] = world.arena;
  const reach = Math.max(world.hazard_radius, world.goal_radius);
  const xs = [ax0, ax1, ...path.x, ...goal.x.map((x) => x - reach), ...goal.x.map((x) => x + reach)];
  const ys = [ay0, ay1, ...path.y, ...goal.y.map((y) => y - reach), ...goal.y.map((y) => y + reach)];
  const x0 = Math.min(...xs), y0 = Math.min(...ys);
  const span = Math.max(Math.max(...xs) - x0, Math.max(...ys) - y0) || 1;
  const scale = (size - 2 * pad) / span;
  const sx = (v) => pad + (v - x0) * scale;
  const sy = (v) => size - pad - (v - y0) * scale;
  const plot = svg('svg', {viewBox: `0 0 ${size} ${size}`, class: 'plot plane world'});
  plot.append(svg('rect', {class: 'arena', x: sx(ax0), y: sy(ay1), width: (ax1 - ax0) * scale,
                           height: (ay1 - ay0) * scale, fill: '#eef1f4', stroke: '#9aa3af'}));
  for (const [hx, hy] of world.hazards)
    plot.append(svg('circle', {class: 'hazard', cx: sx(hx), cy: sy(hy), r: world.hazard_radius * scale,
                               fill: 'rgba(41,128,185,0.25)', stroke: '#2980b9'}));
  let goals = 0;
  goal.x.forEach((gx, i) => {
    const gy = goal.y[i];
    if (i > 0 && gx === goal.x[i - 1] && gy === goal.y[i - 1]) return;
    goals += 1;
    plot.append(svg('circle', {class: 'goal', cx: sx(gx), cy: sy(gy), r: world.goal_radius * scale,
                               fill: 'none', stroke: '#1e8449', 'stroke-width': 2,
                               'stroke-dasharray': '4 3'}));
    const label = svg('text', {x: sx(gx) - 3, y: sy(gy) + 4});
    label.textContent = goals;
    plot.append(label);
  });
  const track = svg('g', {class: 'path'});
  for (let i = 1; i < path.x.length; ++i) {
    const hue = 220 - 220 * i / Math.max(1, path.x.length - 1);
    track.append(svg('line', {x1: sx(path.x[i - 1]), y1: sy(path.y[i - 1]), x2: sx(path.x[i]),
                              y2: sy(path.y[i]), stroke: `hsl(${hue},70%,45%)`, 'stroke-width': 2}));
  }
  plot.append(track);
  plot.append(svg('circle', {class: 'start', cx: sx(path.x[0]), cy: sy(path.y[0]), r: 5,
                             fill: '#1e8449'}));
  plot.append(svg('circle', {class: 'dot', cx: sx(path.x[step] ?? path.x[0]),
                             cy: sy(path.y[step] ?? path.y[0]), r: 4, fill: '#c0392b'}));
  plot.dataset.xs = JSON.stringify(path.x.map(sx));
  plot.dataset.ys = JSON.stringify(path.y.map(sy));
  plot.dataset.path = JSON.stringify(path.x.map((x, i) => [x, path.y[i]]));
  plot.dataset.goals = goals;
  return plot;
}

function moveCursor() {
  $('step').textContent = step;
  for (const plot of document.querySelectorAll('.plot')) {
    const cursor = plot.querySelector('.cursor');
    if (cursor) {
      const box = plot.viewBox.baseVal, steps = Number(plot.dataset.steps);
      const x = 52 + (steps < 2 ? 0 : Math.min(step, steps - 1) / (steps - 1)) * (box.width - 60);
      cursor.setAttribute('x1', x);
      cursor.setAttribute('x2', x);
    }
    const dot = plot.querySelector('.dot');
    if (dot) {
      const xs = JSON.parse(plot.dataset.xs), ys = JSON.parse(plot.dataset.ys);
      const i = Math.min(step, xs.length - 1);
      dot.setAttribute('cx', xs[i]);
      dot.setAttribute('cy', ys[i]);
    }
  }
}

// One panel: the team's own rendering from --media, or the plots of the rows.
function panel(title, view, media, index, fields) {
  const div = document.createElement('div');
  div.className = 'panel';
  const h = document.createElement('h3');
  h.textContent = title;
  div.append(h);
  if (media) {
    const src = `/media/${index}?token=${encodeURIComponent(token)}&v=${Date.now()}`;
    const e = document.createElement(media.startsWith('image') ? 'img' : 'video');
    e.src = src;
    if (e.tagName === 'VIDEO') e.controls = true;
    div.append(e);
  } else if (view) {
    const lines = document.createElement('div');
    lines.className = 'lines';
    for (const s of view.series) lines.append(linePlot(s.name, s.values));
    const row = document.createElement('div');
    row.className = 'views';
    if (view.world) row.append(worldPlot(view.world));
    if (view.plane) row.append(planePlot(view.plane));
    row.append(lines);
    div.append(row);
  } else if (fields) {
    const p = document.createElement('p');
    p.className = 'fields';
    p.textContent = Object.keys(fields).length
      ? Object.entries(fields).map(([k, v]) => `${k} ${v}`).join(', ')
      : 'no steps to show for a pool file: judge the episode from your own records';
    div.append(p);
  }
  return div;
}

function button(text, key, className, action) {
  const b = document.createElement('button');
  b.textContent = `${text} `;  // a band's text holds '<': text, never markup
  if (key) {
    const k = document.createElement('kbd');
    k.textContent = key;
    b.append(k);
  }
  b.className = className;
  b.dataset.key = key;
  b.addEventListener('click', action);
  return b;
}

function numbers(pairs) {
  const dl = $('numbers');
  dl.replaceChildren();
  for (const [key, label, value] of pairs) {
    const dt = document.createElement('dt');
    dt.textContent = label;
    const dd = document.createElement('dd');
    dd.id = `n-${key}`;
    dd.textContent = value;
    dl.append(dt, dd);
  }
}

const fmt = (p) => (p === null || p === undefined ? '–' : Number(p).toPrecision(3));

function render(s) {
  const previous = state && state.item ? state.item.id : null;
  state = s;
  const budget = s.mode === 'budget';
  $('title').textContent = budget ? 'ltt label budget' : 'ltt label compare';
  $('source').textContent = budget ? s.pool : s.dataset;
  const item = s.item;
  if (!item || item.id !== previous) step = 0;
  const panels = $('panels');
  panels.replaceChildren();
  const answers = $('answers');
  answers.replaceChildren();
  let steps = 0;
  if (item && budget) {
    $('item-title').textContent = `Episode ${item.id} (label ${item.number} of at most ${s.cap})`;
    panels.append(panel('', item.view, s.media[0], 0, item.fields));
    if (item.view) steps = item.view.steps;
    if (s.bands)  // several budgets: one answer per cost band, keys 0, 1, ...
      s.bands.forEach((text, b) =>
        answers.append(button(text, b < 10 ? String(b) : '', `band band${b}`, () => send(s.words[b]))));
    else
      answers.append(button('Over the budget', 'o', 'over', () => send('over')),
                     button('Within the budget', 'w', 'within', () => send('within')));
  } else if (item) {
    $('item-title').textContent = `Pair ${item.number} of ${s.pairs}: which segment is safer?`;
    panels.append(panel(`A: episode ${item.a.episode}, rows ${item.a.start}–${item.a.start + s.segment - 1}`,
                        item.a.view, s.media[0], 0),
                  panel(`B: episode ${item.b.episode}, rows ${item.b.start}–${item.b.start + s.segment - 1}`,
                        item.b.view, s.media[1], 1));
    steps = s.segment;
    answers.append(button('A is safer', 'a', '', () => send('a')),
                   button('B is safer', 'b', '', () => send('b')),
                   button('Cannot tell', 't', '', () => send('tie')));
  } else {
    $('item-title').textContent = budget ? 'Nothing more to label' : 'Every pair is judged';
  }
  const undo = button('Undo the last answer', 'u', '', undoLast);
  undo.disabled = !s.can_undo;
  answers.append(undo);
  $('scrub').hidden = steps < 2;
  $('slider').max = Math.max(0, steps - 1);
  $('slider').value = step;
  moveCursor();

  const done = budget ? s.labels_used : s.answered;
  const of = budget ? s.cap : s.pairs;
  $('progress-bar').style.width = `${(100 * done / of).toFixed(1)}%`;
  if (budget && s.bands)
    numbers([
      ['labels', 'labels used', `${s.labels_used} of at most ${s.cap}`],
      ['bands', 'labels per band', s.band_labels.join(', ')],
      ['step', 'step tested', s.step_tested === null ? 'all certified' : `${s.step_tested} of ${s.grid_size}`],
      ['p', s.procedure === 'one_threshold' ? 'its p-value (largest over the budgets)' : 'its p-value',
       fmt(s.p)],
      ['depth', 'certified depth', s.procedure === 'one_threshold'
        ? `${s.certified_depth} of ${s.grid_size} steps`
        : `${s.certified_depths.join(', ')} of ${s.grid_size} steps (per budget)`],
      ['selection', 'selection size', s.selection_size],
    ]);
  else if (budget)
    numbers([
      ['labels', 'labels used', `${s.labels_used} of at most ${s.cap}`],
      ['unsafe', 'over the budget', s.unsafe_labels],
      ['step', 'step tested', s.step_tested === null ? 'all certified' : `${s.step_tested} of ${s.grid_size}`],
      ['p', s.fixed_walk ? 'its p-value, unlabeled rest unsafe' : 'its anytime p-value',
        fmt(s.p_anytime)],
      ['depth', 'certified depth', `${s.certified_depth} of ${s.grid_size} steps`],
      ['selection', 'selection size', s.selection_size],
    ]);
  else
    numbers([
      ['answered', 'pairs judged', `${s.answered} of ${s.pairs}`],
      ['a', 'A safer', s.a_safer],
      ['b', 'B safer', s.b_safer],
      ['tie', 'cannot tell', s.cannot_tell],
      ['segment', 'rows per segment', s.segment],
    ]);
  const verdict = $('verdict');
  verdict.textContent = s.verdict;
  verdict.className = s.stopped ? (s.verdict.startsWith('refused') ? 'refused' : 'stop') : '';
  const finish = $('finish');
  finish.textContent = budget ? 'Write the certificate' : 'Write pairs.csv';
  finish.hidden = budget ? !s.stopped : (s.answered === 0);
  if (!s.written) $('written').textContent = '';
  $('keys').innerHTML = budget && s.bands
    ? `Keys: <kbd>0</kbd> to <kbd>${Math.min(9, s.bands.length - 1)}</kbd> the cost band, <kbd>u</kbd> undo. An answer counts once the page says it was recorded.`
    : budget
    ? 'Keys: <kbd>o</kbd> over the budget, <kbd>w</kbd> within it, <kbd>u</kbd> undo. An answer counts once the page says it was recorded.'
    : 'Keys: <kbd>a</kbd> A safer, <kbd>b</kbd> B safer, <kbd>t</kbd> cannot tell, <kbd>u</kbd> undo. An answer counts once the page says it was recorded.';
  document.body.dataset.ready = 'yes';
  document.body.dataset.item = item ? item.id : '';
}

async function refresh() {
  const {status, data} = await api('GET', '/api/state');
  if (status !== 200) throw new Error(data.error || `HTTP ${status}`);
  render(data);
}

// After a lost reply: poll until the server is back, then say whether the answer was recorded
// (the journal got it before the crash) or not (answer it again).
async function reconnect() {
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    try {
      await refresh();
    } catch (e) {
      continue;
    }
    const recorded = state.last && state.last.item === lost.item && state.last.answer === lost.answer;
    notice(recorded
      ? `Reconnected: your answer for ${lost.item} was recorded before the server stopped.`
      : `Reconnected: your answer for ${lost.item} was not recorded. Please answer it again.`,
           !recorded);
    document.body.dataset.lost = recorded ? 'recorded' : 'not-recorded';
    lost = null;
    return;
  }
}

async function post(path, body) {
  try {
    return await api('POST', path, body);
  } catch (e) {
    return null;  // no reply: the server is gone
  }
}

async function send(answer) {
  if (!state || !state.item || pending || lost) return;
  pending = {item: state.item.id, answer};
  notice('');
  const reply = await post('/api/answer', pending);
  const sent = pending;
  pending = null;
  if (!reply) {
    lost = sent;
    notice(`The server does not answer: your answer for ${sent.item} may not be recorded. ` +
           'Waiting for it to come back…', true);
    reconnect();
    return;
  }
  if (reply.status === 200) {
    render(reply.data.state);
  } else {
    notice(reply.data.error || `HTTP ${reply.status}`, true);
    await refresh();
  }
}

async function undoLast() {
  if (!state || !state.last || pending || lost) return;
  const reply = await post('/api/undo', {item: state.last.item});
  if (!reply) return notice('The server does not answer: nothing undone.', true);
  if (reply.status === 200) {
    render(reply.data.state);
    notice(`Took back the answer for ${reply.data.undone}.`);
  } else {
    notice(reply.data.error || `HTTP ${reply.status}`, true);
  }
}

async function finish() {
  const reply = await post('/api/finish', {});
  if (!reply) return notice('The server does not answer: nothing written.', true);
  if (reply.status === 200) {
    render(reply.data.state);
    $('written').textContent = `Wrote ${reply.data.written.join(', ')}`;
  } else {
    notice(reply.data.error || `HTTP ${reply.status}`, true);
  }
}

document.addEventListener('keydown', (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey || !state) return;
  const budget = state.mode === 'budget';
  const keys = budget && state.bands
    ? Object.fromEntries(state.words.slice(0, 10).map((word, b) => [String(b), word]))
    : budget ? {o: 'over', w: 'within'} : {a: 'a', b: 'b', t: 'tie'};
  if (event.key in keys) send(keys[event.key]);
  else if (event.key === 'u') undoLast();
  else return;
  event.preventDefault();
});
$('slider').addEventListener('input', () => { step = Number($('slider').value); moveCursor(); });
$('finish').addEventListener('click', finish);
refresh().catch((e) => notice(`Cannot reach ltt label: ${e.message}`, true));
