// The console's custom elements: the few widgets every page shares. Light DOM (no shadow
// root), so the one stylesheet styles them and forms and labels work as usual.
import { h, clear, field_id, copy_text } from './dom.js';
import { formatTimestamp } from './format.js';

// <tesoro-secret>: a secret shown once (an API key, a client secret, a webhook signing
// secret), in a read-only field with a copy button.
class TesoroSecret extends HTMLElement {
  show(label, value) {
    this.label = label;
    this.value = value;
    const id = field_id('secret');
    const status = h('span', { class: 'copy-status', role: 'status', 'aria-live': 'polite' });
    const box = h('input', { id, type: 'text', readonly: true, value, class: 'secret-value',
      spellcheck: 'false', 'aria-describedby': `${id}-warning` });
    const copy = h('button', { type: 'button', class: 'secondary', onclick: () => this.copy(status) },
      `Copy ${label}`);
    clear(this).append(
      h('p', { class: 'warning', id: `${id}-warning` },
        `Copy the ${label} now: it is shown only once and cannot be read again.`),
      h('div', { class: 'secret-row' }, h('label', { for: id, class: 'visually-hidden' }, label), box, copy),
      status,
    );
    this.setAttribute('data-secret-shown', '');
    this.pending_focus = box;
    if (this.isConnected) this.connectedCallback();
    return this;
  }

  // Focus moves to the secret once it is on the page, so a keyboard user lands on it.
  connectedCallback() {
    if (!this.pending_focus) return;
    this.pending_focus.focus();
    this.pending_focus.select();
    this.pending_focus = null;
  }

  async copy(status) {
    await copy_text(this.value);
    status.textContent = 'Copied.';
  }
}

// <tesoro-pager>: "Page 2 of 5 (43 items)" with previous and next links, from the API's
// `pagination` object; `href_of(page_number)` builds each link (hash routes).
class TesoroPager extends HTMLElement {
  show(pagination, href_of) {
    const { page_number: page, total_pages: pages, total_items: items } = pagination;
    const nav = h('nav', { class: 'pager', 'aria-label': 'Pages' });
    if (page > 1) nav.append(h('a', { href: href_of(page - 1), rel: 'prev' }, '← Previous'));
    nav.append(h('span', {}, `Page ${page} of ${Math.max(pages, 1)} (${items} ${items === 1 ? 'item' : 'items'})`));
    if (page < pages) nav.append(h('a', { href: href_of(page + 1), rel: 'next' }, 'Next →'));
    clear(this).append(nav);
    return this;
  }
}

// <tesoro-error>: an error of the API as its envelope says it: the summary, each problem with
// the field it is about, and the log id an operator can look up.
// `label_of(path)` names a field as the form labels it; the API's path shows otherwise.
class TesoroError extends HTMLElement {
  show(error, label_of) {
    const envelope = error?.envelope ?? null;
    const problems = error?.problems ?? [];
    const items = problems.map((problem) => h('li', {},
      problem.path ? h('strong', {}, `${label_of?.(problem.path) ?? problem.path}: `) : null,
      problem.message ?? '',
      problem.error_code ? h('span', { class: 'error-code' }, ` (${problem.error_code})`) : null));
    let summary = envelope?.message ?? error?.message ?? 'Something went wrong.';
    if (error?.status === 429 && error.retry_after) summary += ` Try again in ${error.retry_after} s.`;
    clear(this).append(h('div', { class: 'error', role: 'alert' },
      h('p', {}, h('strong', {}, envelope?.code ?? 'Error'), ': ', summary),
      items.length ? h('ul', {}, items) : null,
      envelope?.id ? h('p', { class: 'hint' }, `Log id ${envelope.id}`) : null));
    return this;
  }
}

// <tesoro-time>: a timestamp of the API, machine-readable in `datetime`.
class TesoroTime extends HTMLElement {
  show(text) {
    clear(this).append(text ? h('time', { datetime: text }, formatTimestamp(text)) : '—');
    return this;
  }
}

customElements.define('tesoro-secret', TesoroSecret);
customElements.define('tesoro-pager', TesoroPager);
customElements.define('tesoro-error', TesoroError);
customElements.define('tesoro-time', TesoroTime);

export const secret = (label, value) => document.createElement('tesoro-secret').show(label, value);
export const pager = (pagination, href_of) => document.createElement('tesoro-pager').show(pagination, href_of);
export const error_box = (error, label_of) => document.createElement('tesoro-error').show(error, label_of);
export const time = (text) => document.createElement('tesoro-time').show(text);
