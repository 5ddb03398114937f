// Building the DOM without HTML strings: every value the API sends becomes text, never markup,
// so nothing a tenant stores (a nickname, a merchant name) can run as script.

// h('button', {type: 'submit', class: 'primary', onclick: fn}, 'Save', ...)
// Properties: `class`, `for`, `on<event>` (a listener), `hidden`/`disabled`/`checked`/`required`
// (booleans), `dataset` (object), anything else an attribute (skipped when null or false).
export function h(tag, properties = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(properties ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') {
      element.addEventListener(name.slice(2), value);
    } else if (name === 'dataset') {
      Object.assign(element.dataset, value);
    } else if (name === 'value' && 'value' in element) {
      element.value = value;
    } else if (value === true) {
      element.setAttribute(name, '');
    } else {
      element.setAttribute(name, String(value));
    }
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export function clear(element) {
  element.replaceChildren();
  return element;
}

let next_field_id = 0;
export function field_id(name) {
  next_field_id += 1;
  return `field-${name}-${next_field_id}`;
}

// A labelled input: label text, then the control; `hint` is tied with aria-describedby.
export function field(label, control, hint) {
  if (!control.id) control.id = field_id(control.name || 'input');
  const parts = [h('label', { for: control.id }, label), control];
  if (hint) {
    const hint_id = `${control.id}-hint`;
    control.setAttribute('aria-describedby', hint_id);
    parts.push(h('p', { class: 'hint', id: hint_id }, hint));
  }
  return h('div', { class: 'field' }, parts);
}

export function input(name, properties = {}) {
  return h('input', { name, type: 'text', autocomplete: 'off', ...properties });
}

// options: [[value, text], ...] or [value, ...]
export function select(name, options, properties = {}) {
  const control = h('select', { name, ...properties });
  for (const option of options) {
    const [value, text, extra] = Array.isArray(option) ? option : [option, option];
    control.append(h('option', { value, ...(extra ?? {}) }, text));
  }
  return control;
}

// A table with a caption (read by screen readers) inside a scrolling box for narrow screens.
// columns: [[header, (row) => cell], ...]
export function table(caption, columns, rows, empty_text = 'Nothing yet.') {
  if (rows.length === 0) return h('p', { class: 'empty' }, empty_text);
  // A column of amounts (cells made by money()) is right-aligned, header included, so that
  // digits line up.
  const cells = rows.map((row) => columns.map(([, cell]) => cell(row)));
  const numeric = columns.map((column, index) =>
    cells.some((row) => row[index] instanceof Element && row[index].classList.contains('money')));
  const head = h('tr', {}, columns.map(([header], index) =>
    h('th', { scope: 'col', class: numeric[index] ? 'num' : null }, header)));
  // data-label names each cell's column (tests and assistive tools find a cell by it).
  const body = cells.map((row) => h('tr', {},
    row.map((content, index) => h('td', { 'data-label': columns[index][0] || null,
      class: numeric[index] ? 'num' : null }, content))));
  return h('div', { class: 'table-scroll', tabindex: '0', role: 'region', 'aria-label': caption },
    h('table', {}, h('caption', {}, caption), h('thead', {}, head), h('tbody', {}, body)));
}

// A list of term / value pairs: [[term, value], ...]
export function details_list(pairs) {
  return h('dl', { class: 'pairs' },
    pairs.map(([term, value]) => [h('dt', {}, term), h('dd', {}, value)]));
}

export function badge(text, kind = '') {
  return h('span', { class: `badge ${kind}`.trim() }, text ?? '—');
}

export function link(href, text, properties = {}) {
  return h('a', { href, ...properties }, text);
}

export function code(text) {
  return h('code', {}, text ?? '—');
}

// An amount as text ("COP 15.000,00"), in tabular figures; a table right-aligns its column.
export function money(text) {
  return h('span', { class: 'money' }, text);
}

// How much of an id shows: its prefix, '…', its last characters. An id is a prefix and 22
// characters whose first ones follow the time it was made (bbtacc_5V1Z7sRbo8AMlfKABGDr8H), so
// its end tells ids of one page apart; the whole id is one hover, one copy or one link away.
const k_id_shown_at_end = 8;

// An id without a prefix (a QR code's payment id) shows its first characters in its place.
const k_id_shown_without_prefix = 4;

export function shortened_id(id) {
  const text = String(id ?? '');
  const underscore = text.indexOf('_');
  const head = text.slice(0, underscore > 0 ? underscore + 1 : k_id_shown_without_prefix);
  if (text.length <= head.length + k_id_shown_at_end + 2) return text;
  return `${head}…${text.slice(-k_id_shown_at_end)}`;
}

// Puts `text` on the clipboard (an id, a secret shown once).
export async function copy_text(text) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    // No clipboard API outside secure contexts: the old way, through a selected field.
    const field = h('textarea', { class: 'visually-hidden', 'aria-hidden': 'true' }, text);
    document.body.append(field);
    field.select();
    document.execCommand('copy');
    field.remove();
  }
}

// An id where a table or a list shows one: shortened in the middle (the whole id in its
// tooltip and read by screen readers), a link to its page when `target` is given, and a button
// that copies the whole id.
export function id_text(id, target) {
  if (id === null || id === undefined || id === '') return '—';
  const shown = [h('span', { 'aria-hidden': 'true' }, shortened_id(id)),
    h('span', { class: 'visually-hidden' }, id)];
  const text = target ? h('a', { href: target, class: 'id', title: id }, shown)
    : h('code', { class: 'id', title: id }, shown);
  const copy = h('button', { type: 'button', class: 'copy', 'aria-label': `Copy ${id}`, title: 'Copy the whole id' }, 'Copy');
  copy.addEventListener('click', async () => {
    await copy_text(id);
    copy.textContent = 'Copied';
    setTimeout(() => { copy.textContent = 'Copy'; }, 1500);
  });
  return h('span', { class: 'id-text' }, text, copy);
}

export function section(title, ...children) {
  const heading_id = field_id('section');
  return h('section', { class: 'card', 'aria-labelledby': heading_id },
    h('h2', { id: heading_id }, title), children);
}
