// What the pages share: forms that call the API and show its errors, amount fields in pesos,
// and paginated lists driven by the API's page_number/page_size.
import { h, field, input, table, clear, badge } from './dom.js';
import { ApiError, get, del } from './api.js';
import { error_box, pager, time } from './components.js';
import { parsePesos, minorToJson } from './format.js';
import { href } from './router.js';

// The smallest page the API takes (page_size 10 to 500); the console asks for 20 at a time.
export const k_page_size = 20;

// A problem found before calling the API, shown like the API's own (a path and a message).
export function local_error(path, message, error_code = 'validation_error') {
  return new ApiError(400, {
    code: 'Check the form',
    message: 'Some fields need a change.',
    errors: [{ error_code, message, path }],
  });
}

// What an action's `done` returns to show under its form: a success (green), or a failure
// (red) that says why and what to change; a string or nodes alone are a success.
export const succeeded = (...content) => ({ ok: true, content });
export const failed = (...content) => ({ ok: false, content });

export function outcome_box(shown) {
  const { ok, content } = shown?.content !== undefined ? shown : { ok: true, content: shown };
  return ok ? h('div', { class: 'success', role: 'status' }, content)
    : h('div', { class: 'error', role: 'alert' }, content);
}

// The control of `form` an API path is about: the control named like the path or its last
// part (`address.line_1` -> line_1), or the one `paths` names for the path or a parent of it
// ({amount: 'fund_amount'} takes `amount` and `amount.amount`).
function control_of(form, path, paths) {
  if (!path) return null;
  for (const [prefix, name] of Object.entries(paths)) {
    if (path === prefix || path.startsWith(`${prefix}.`)) return form.elements[name] ?? null;
  }
  for (const name of [path, path.split('.').pop(), path.split('.')[0]]) {
    const control = form.elements[name];
    if (control instanceof HTMLElement) return control;
  }
  return null;
}

// An amount input in pesos; read_amount turns it into the API's Money.
export function amount_field(name, label, properties = {}) {
  return field(label, input(name, { inputmode: 'decimal', placeholder: '15.000,00', ...properties }),
    "In pesos: '.' groups thousands, ',' marks the cents (15.000,50).");
}

export function read_amount(form, name, { required = true } = {}) {
  const text = form.elements[name].value;
  if (!required && text.trim() === '') return undefined;
  const parsed = parsePesos(text);
  if (parsed.error) throw local_error(name, parsed.error);
  return { amount: minorToJson(parsed.minor), currency: 'COP' };
}

export function text_value(form, name) {
  const value = form.elements[name]?.value?.trim() ?? '';
  return value === '' ? undefined : value;
}

// <form> whose submit calls `submit(form)` (an async function calling the API), with the
// button disabled while it runs (one click, one request). Its outcome shows under the button
// (or in `outcome`), replacing the last one: the API's error in red, each problem named by the
// label of its field (`paths` maps API paths to field names where they differ), or what
// `done(result, form)` returns (see succeeded/failed).
export function action_form({ label, fields, button, submit, done, classes = '', outcome, paths = {} }) {
  const shown = outcome ?? h('div', { class: 'form-outcome' });
  const submit_button = h('button', { type: 'submit', class: 'primary' }, button);
  const form = h('form', { class: `action ${classes}`.trim(), 'aria-label': label, novalidate: true },
    fields, h('div', { class: 'actions' }, submit_button), outcome ? null : shown);
  const label_of = (path) => control_of(form, path, paths)?.labels?.[0]?.textContent ?? null;
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clear(shown);
    for (const marked of form.querySelectorAll('[aria-invalid]')) marked.removeAttribute('aria-invalid');
    submit_button.disabled = true;
    form.setAttribute('aria-busy', 'true');
    try {
      const result = await submit(form);
      const message = await done?.(result, form);
      if (message) shown.append(outcome_box(message));
    } catch (error) {
      shown.append(error_box(error, label_of));
      for (const problem of error?.problems ?? []) {
        control_of(form, problem.path, paths)?.setAttribute('aria-invalid', 'true');
      }
    } finally {
      submit_button.disabled = false;
      form.removeAttribute('aria-busy');
    }
  });
  return form;
}

// A button that runs one API call (revoke, rotate, replay), after a confirmation when asked;
// its error shows after it, replacing the last.
export function action_button(text, run, { confirm_text, classes = 'secondary', label } = {}) {
  const button = h('button', { type: 'button', class: classes, 'aria-label': label ?? null });
  button.textContent = text;
  let last_error = null;
  button.addEventListener('click', async () => {
    if (confirm_text && !window.confirm(confirm_text)) return;
    button.disabled = true;
    last_error?.remove();
    last_error = null;
    try {
      await run(button);
    } catch (error) {
      last_error = error_box(error);
      button.after(last_error);
    } finally {
      button.disabled = false;
    }
  });
  return button;
}

// One page of a paginated list: GET path with page_number/page_size (and filters), the items
// under `plural` in a table, and the pager linking to the same route with another page, in the
// query parameter `page_param` (two lists on one page page apart).
export async function paged_table({ path, plural, query = {}, caption, columns, route, empty, page_param = 'page' }) {
  const page_number = Math.max(1, Number.parseInt(route.query[page_param] ?? '1', 10) || 1);
  const answer = await get(path, { ...query, page_number, page_size: k_page_size });
  const items = answer[plural] ?? [];
  return h('div', { class: 'list' },
    table(caption, columns, items, empty),
    answer.pagination ? pager(answer.pagination,
      (page) => href(route.path, { ...route.query, [page_param]: page })) : null);
}

// A section whose content loads from the API; an error shows in its place.
export async function load_into(container, build) {
  try {
    const content = await build();
    clear(container).append(content);
  } catch (error) {
    clear(container).append(error_box(error));
  }
}

// The two last columns of a credential list (API keys, OAuth clients): its state, and a
// Revoke button that DELETEs `path_of(item)` after a confirmation, then calls `after(item)`.
export function revocation_columns({ path_of, name_of, confirm_of, after }) {
  return [
    ['State', (item) => (item.revoked_at ? h('span', {}, badge('revoked', 'bad'), ' ', time(item.revoked_at)) : badge('active', 'good'))],
    ['', (item) => (item.revoked_at ? '' : action_button('Revoke', async () => {
      await del(path_of(item));
      await after(item);
    }, { confirm_text: confirm_of(item), label: `Revoke ${name_of(item)}`, classes: 'danger' }))],
  ];
}
