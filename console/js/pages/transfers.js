// Money, outgoing transfers: grouped by batch, each with its state and timemarks (T110
// received, T120 sent to the network, T130 ended). Filter by batch and state.
import { h, field, select, input, section, code, table, badge, id_text } from '../dom.js';
import { get } from '../api.js';
import { pager } from '../components.js';
import { formatMoney, formatTimestamp, humanize } from '../format.js';
import { k_page_size } from '../ui.js';
import { href, go } from '../router.js';

export const title = 'Outgoing transfers';

const k_states = ['created', 'processing', 'target_resolved', 'held', 'sent_to_breb_provider', 'successful', 'failed'];

export function transfer_state(transfer) {
  const kind = transfer.state === 'successful' ? 'good' : transfer.state === 'failed' ? 'bad' : '';
  return h('span', {}, badge(humanize(transfer.state), kind),
    transfer.state_reason ? ` ${humanize(transfer.state_reason)}` : '');
}

function timemarks(transfer) {
  const marks = transfer.timemarks ?? {};
  const names = Object.keys(marks).sort();
  if (names.length === 0) return '—';
  return h('ul', { class: 'marks' }, names.map((name) => h('li', {}, h('strong', {}, `${name} `), formatTimestamp(marks[name]))));
}

function batch_table(batch_id, transfers) {
  return table(`Batch ${batch_id}`, [
    ['External id', (transfer) => transfer.external_id],
    ['Amount', (transfer) => h('span', { class: 'money' }, formatMoney(transfer.amount))],
    ['To', (transfer) => h('span', {}, code(transfer.target?.key_value ?? transfer.query?.value ?? '—'),
      transfer.target?.creditor?.full_name ? ` ${transfer.target.creditor.full_name}` : '')],
    ['State', transfer_state],
    ['Timemarks', timemarks],
    ['Description', (transfer) => transfer.description ?? '—'],
  ], transfers);
}

function filters(route) {
  const state = select('state', [['', 'any state'], ...k_states.map((name) => [name, humanize(name)])]);
  state.value = route.query.state ?? '';
  const batch = input('batch_id', { placeholder: 'bbotb_...', value: route.query.batch_id ?? '' });
  const form = h('form', { class: 'filters', 'aria-label': 'Filter transfers' },
    field('State', state), field('Batch id', batch),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'secondary' }, 'Filter')));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    go('/transfers', { state: state.value, batch_id: batch.value.trim() });
  });
  return form;
}

export async function render(context) {
  const { route } = context;
  const page_number = Math.max(1, Number.parseInt(route.query.page ?? '1', 10) || 1);
  const answer = await get('/api/v1/outgoing_transfers', {
    page_number, page_size: k_page_size, state: route.query.state, batch_id: route.query.batch_id,
  });
  const transfers = answer.outgoing_transfers ?? [];
  // Group this page's transfers by batch, in the order the newest of each appears.
  const batches = new Map();
  for (const transfer of transfers) {
    if (!batches.has(transfer.batch_id)) batches.set(transfer.batch_id, []);
    batches.get(transfer.batch_id).push(transfer);
  }
  const groups = [...batches].map(([batch_id, items]) => h('div', { class: 'batch' },
    h('h3', {}, 'Batch ', id_text(batch_id, route.query.batch_id ? null : href('/transfers', { batch_id }))),
    batch_table(batch_id, items)));
  return h('div', {},
    h('h1', {}, 'Outgoing transfers'),
    section('Transfers by batch', filters(route),
      groups.length ? groups : h('p', { class: 'empty' }, 'No outgoing transfers match.'),
      pager(answer.pagination, (page) => href(route.path, { ...route.query, page }))),
    h('p', { class: 'hint' }, 'The sandbox network moves a transfer one state a second on the tenant clock; reload to follow it.'));
}
