// Money, accounts: the tenant's ledger accounts with their balances; open one.
import { h, field, input, select, section, link, id_text } from '../dom.js';
import { post } from '../api.js';
import { time } from '../components.js';
import { formatMoney, humanize } from '../format.js';
import { action_form, paged_table, text_value, load_into, succeeded } from '../ui.js';
import { href } from '../router.js';

export const title = 'Accounts';

// An account as a form's choice shows it: name, number and what is available.
export function account_choice_text(account) {
  return `${account.name} (${account.number}) · ${formatMoney(account.balance?.available)}`;
}

export function balance_columns() {
  return [
    ['Available', (row) => h('span', { class: 'money' }, formatMoney(row.balance?.available))],
    ['Held', (row) => h('span', { class: 'money' }, formatMoney(row.balance?.held))],
    ['Balance', (row) => h('span', { class: 'money' }, formatMoney(row.balance?.current))],
  ];
}

function account_list(context) {
  return paged_table({
    path: '/v1/accounts',
    plural: 'accounts',
    caption: 'Ledger accounts, newest first',
    route: context.route,
    empty: 'No accounts yet.',
    columns: [
      ['Name', (account) => link(href(`/accounts/${account.id}`), account.name)],
      ['Number', (account) => account.number],
      ['Type', (account) => humanize(account.type)],
      ['Holder', (account) => (account.account_holder_id ? id_text(account.account_holder_id, href(`/holders/${account.account_holder_id}`)) : 'the tenant')],
      ...balance_columns(),
      ['Opened', (account) => time(account.inserted_at)],
      ...(context.is_sandbox ? [['', (account) => link(href('/sandbox', { fund: account.id }), 'Fund', { 'aria-label': `Fund ${account.name}` })]] : []),
    ],
  });
}

export async function render(context) {
  const list = h('div', { id: 'account-list' });
  const form = action_form({
    label: 'Open an account',
    button: 'Open account',
    fields: [
      field('Name', input('name', { required: true, maxlength: '200' })),
      field('Type', select('type', [['savings_account', 'savings account'], ['checking_account', 'checking account']])),
      field('Account holder id (optional)', input('account_holder_id', { placeholder: 'acch_...' }),
        "Empty opens an account of the tenant itself."),
    ],
    submit: (form_element) => post('/v1/ledger/accounts', {
      name: text_value(form_element, 'name') ?? '',
      type: form_element.elements.type.value,
      currency: 'COP',
      ...(text_value(form_element, 'account_holder_id') ? { account_holder_id: text_value(form_element, 'account_holder_id') } : {}),
    }),
    done: async (account, form_element) => {
      form_element.reset();
      await load_into(list, () => account_list(context));
      return succeeded('Opened ', link(href(`/accounts/${account.id}`), account.name), `, number ${account.number}.`);
    },
  });
  await load_into(list, () => account_list(context));
  return h('div', {},
    h('h1', {}, 'Accounts'),
    section('Accounts', list),
    section('Open an account', form));
}
