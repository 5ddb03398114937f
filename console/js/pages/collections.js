// Money, collections: requests for money paid through network keys; create one.
import { h, field, input, select, section, link, badge, code } from '../dom.js';
import { get, post, newIdempotencyKey } from '../api.js';
import { time } from '../components.js';
import { formatMoney } from '../format.js';
import { action_form, amount_field, paged_table, read_amount, text_value, load_into, local_error } from '../ui.js';
import { go } from '../router.js';

export const title = 'Collections';

export function collection_state(state) {
  const kind = { ready: 'good', minimum_paid: 'good', paid: 'good', failed: 'bad', discarded: 'bad' }[state] ?? '';
  return badge(state, kind);
}

function collection_list(context) {
  const state = context.route.query.state ?? '';
  return paged_table({
    path: '/api/v1/collections',
    plural: 'collections',
    query: state ? { state } : {},
    caption: 'Collections, newest first',
    route: context.route,
    empty: 'No collections yet.',
    columns: [
      ['Collection', (collection) => link(`#/collections/${encodeURIComponent(collection.id)}`, collection.nickname || collection.external_id)],
      ['Key', (collection) => (collection.key ? code(collection.key.value) : '—')],
      ['State', (collection) => collection_state(collection.state)],
      ['Usage', (collection) => collection.usage_mode.replace('_', ' ')],
      ['Paid', (collection) => h('span', { class: 'money' }, formatMoney(collection.paid_amount))],
      ['Of at most', (collection) => h('span', { class: 'money' }, formatMoney(collection.total_maximum_amount))],
      ['Created', (collection) => time(collection.inserted_at)],
    ],
  });
}

async function create_form(context, list) {
  const receptors = (await get('/api/v1/tenant/accounts', { role: 'receptor' })).filter((account) => account.state === 'active');
  const external_id = `console-${newIdempotencyKey().slice(0, 8)}`;
  return action_form({
    label: 'Create a collection',
    button: 'Create collection',
    classes: 'wide',
    fields: [h('div', { class: 'grid' },
      field('External id', input('external_id', { value: external_id, required: true, maxlength: '255' }),
        'Your id for it, unique in this tenant.'),
      field('Nickname (optional)', input('nickname', { maxlength: '100' })),
      field('Receptor account', select('tenant_account_id', receptors.map((account) => [account.id, `${account.number} · ${formatMoney(account.balance?.available)}`]))),
      field('Usage', select('usage_mode', [['multiple_use', 'multiple use'], ['single_use', 'single use']])),
      amount_field('minimum_attempt_amount', 'Smallest payment', { value: '1.000,00' }),
      amount_field('maximum_attempt_amount', 'Largest payment', { value: '1.000.000,00' }),
      amount_field('total_minimum_amount', 'Minimum to collect', { value: '1.000,00' }),
      amount_field('total_maximum_amount', 'Maximum to collect', { value: '1.000.000,00' }),
      field('Key (optional)', input('key_value', { placeholder: '@MYSHOP' }),
        'An alphanumeric key (@ and 3 to 20 letters or digits); empty generates one.'))],
    submit: async (form) => {
      const item = {
        external_id: text_value(form, 'external_id') ?? '',
        tenant_account_id: form.elements.tenant_account_id.value,
        usage_mode: form.elements.usage_mode.value,
        minimum_attempt_amount: read_amount(form, 'minimum_attempt_amount'),
        maximum_attempt_amount: read_amount(form, 'maximum_attempt_amount'),
        total_minimum_amount: read_amount(form, 'total_minimum_amount'),
        total_maximum_amount: read_amount(form, 'total_maximum_amount'),
      };
      if (text_value(form, 'nickname')) item.nickname = text_value(form, 'nickname');
      if (text_value(form, 'key_value')) item.key = { type: 'alphanumeric', value: text_value(form, 'key_value') };
      const batch = await post('/api/v1/collections', { collections: [item] });
      const rejected = batch.rejected?.[0];
      if (rejected) {
        const path = (rejected.path ?? '').replace(/^collections\.0\./, '');
        throw local_error(path === 'key.value' ? 'key_value' : path, rejected.message, rejected.error_code);
      }
      return batch.created?.[0] ?? batch.duplicated?.[0];
    },
    done: (collection) => {
      context.announce(`Collection ${collection.external_id} created.`);
      go(`/collections/${collection.id}`);
    },
  });
}

export async function render(context) {
  const list = h('div', { id: 'collection-list' });
  await load_into(list, () => collection_list(context));
  return h('div', {},
    h('h1', {}, 'Collections'),
    section('Collections', list),
    section('Create a collection', await create_form(context, list)));
}
