// An account's statement, shared by the account, tenant account and card pages: its postings
// newest first with the balance each left, filtered by time (UTC, as every time here is shown),
// and the filtered statement downloaded as CSV.
import { h, field, input, section, id_text } from '../dom.js';
import { get_csv } from '../api.js';
import { time, error_box } from '../components.js';
import { formatMoney, humanize } from '../format.js';
import { paged_table, load_into } from '../ui.js';
import { go } from '../router.js';

// The API's page size limit: the download asks for the statement 500 postings at a time.
const k_download_page_size = 500;
// A download stops after this many pages (100,000 postings) and says so: a longer history is
// better read through the API, page after page.
const k_download_pages = 200;

// "2026-11-29T10:30" (a datetime-local value, read as UTC) -> "2026-11-29T10:30:00Z".
function instant_of(value) {
  return value ? `${value}:00Z` : '';
}

// "2026-11-29T10:30:00Z" -> "2026-11-29T10:30" for the input showing it.
function input_value_of(instant) {
  const match = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2})/.exec(instant ?? '');
  return match ? match[1] : '';
}

function filters_of(route) {
  const query = {};
  if (route.query.from) query['created_at[gte]'] = route.query.from;
  if (route.query.to) query['created_at[lte]'] = route.query.to;
  return query;
}

// Every page of the filtered statement as CSV, joined under one header row.
async function statement_csv(path, filters) {
  let text = '';
  let truncated = false;
  for (let page = 1; ; page += 1) {
    const part = await get_csv(path, { ...filters, page_number: page, page_size: k_download_page_size });
    const lines = part.split('\r\n').filter((line) => line !== '');
    text += (page === 1 ? lines : lines.slice(1)).map((line) => `${line}\r\n`).join('');
    if (lines.length - 1 < k_download_page_size) break;
    if (page === k_download_pages) {
      truncated = true;
      break;
    }
  }
  return { text, truncated };
}

function download_button(context, path, filters, file_name) {
  const status = h('p', { class: 'hint', role: 'status' });
  const button = h('button', { type: 'button', class: 'secondary' }, 'Download CSV');
  button.addEventListener('click', async () => {
    button.disabled = true;
    status.textContent = 'Preparing the CSV…';
    try {
      const { text, truncated } = await statement_csv(path, filters);
      const url = URL.createObjectURL(new Blob([text], { type: 'text/csv' }));
      const anchor = h('a', { href: url, download: file_name, hidden: true });
      document.body.append(anchor);
      anchor.click();
      anchor.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
      status.textContent = truncated
        ? `Downloaded the newest ${k_download_pages * k_download_page_size} postings; narrow the dates for the rest.`
        : 'Downloaded.';
      context.announce(status.textContent);
    } catch (error) {
      status.textContent = '';
      status.append(error_box(error));
    } finally {
      button.disabled = false;
    }
  });
  return h('div', { class: 'actions' }, button, status);
}

function reference_text(reference) {
  if (!reference) return '—';
  return h('span', {}, humanize(reference.type), ' ', id_text(reference.id));
}

// The statement of the account at `path` (`/v1/accounts/{id}/entries` or the tenant
// account's), as a section of the page at `route`.
export async function statement_section(context, { path, account_id }) {
  const { route } = context;
  const from = input('from', { type: 'datetime-local', value: input_value_of(route.query.from) });
  const to = input('to', { type: 'datetime-local', value: input_value_of(route.query.to) });
  const filter = h('form', { class: 'filters', 'aria-label': 'Filter the statement' },
    field('From (UTC)', from), field('To (UTC)', to),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'secondary' }, 'Filter')));
  filter.addEventListener('submit', (event) => {
    event.preventDefault();
    go(route.path, { from: instant_of(from.value), to: instant_of(to.value) });
  });
  const filters = filters_of(route);
  const list = h('div', { id: 'statement' });
  await load_into(list, () => paged_table({
    path,
    plural: 'entries',
    query: filters,
    caption: 'Postings, newest first, with the balance each left',
    route,
    empty: 'No postings in this period.',
    columns: [
      ['When', (entry) => time(entry.created_at)],
      ['Description', (entry) => entry.description],
      ['Caused by', (entry) => reference_text(entry.reference)],
      ['Debit', (entry) => (entry.direction === 'debit' ? h('span', { class: 'money' }, formatMoney(entry.amount)) : '')],
      ['Credit', (entry) => (entry.direction === 'credit' ? h('span', { class: 'money' }, formatMoney(entry.amount)) : '')],
      ['Balance after', (entry) => h('span', { class: 'money' }, formatMoney(entry.balance_after))],
    ],
  }));
  return section('Statement', filter, list,
    download_button(context, path, filters, `${account_id}-statement.csv`));
}
