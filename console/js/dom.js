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
  const head = h('tr', {}, columns.map(([header]) => h('th', { scope: 'col' }, header)));
  // data-label names each cell's column (tests and assistive tools find a cell by it).
  const body = rows.map((row) => h('tr', {},
    columns.map(([header, cell]) => h('td', { 'data-label': header || null }, cell(row)))));
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

export function section(title, ...children) {
  const heading_id = field_id('section');
  return h('section', { class: 'card', 'aria-labelledby': heading_id },
    h('h2', { id: heading_id }, title), children);
}
