// Money, cards: last four, state and balance of each card; issue a virtual card.
import { h, field, input, select, section, link, badge } from '../dom.js';
import { get, post } from '../api.js';
import { time } from '../components.js';
import { formatMoney } from '../format.js';
import { action_form, amount_field, paged_table, read_amount, text_value, load_into } from '../ui.js';

export const title = 'Cards';

export function card_state(state) {
  return badge(state, state === 'active' ? 'good' : state === 'canceled' || state === 'blocked' ? 'bad' : '');
}

function card_list(context) {
  return paged_table({
    path: '/v1/cards',
    plural: 'cards',
    caption: 'Cards, newest first',
    route: context.route,
    empty: 'No cards yet.',
    columns: [
      ['Card', (card) => link(`#/cards/${encodeURIComponent(card.id)}`, `•••• ${card.last_four}`, { 'aria-label': `Card ending ${card.last_four}` })],
      ['Nickname', (card) => card.nickname ?? '—'],
      ['Type', (card) => card.type],
      ['State', (card) => card_state(card.state)],
      ['Available', (card) => h('span', { class: 'money' }, formatMoney(card.balance?.available))],
      ['Posted', (card) => h('span', { class: 'money' }, formatMoney(card.balance?.posted))],
      ['Issued', (card) => time(card.inserted_at)],
    ],
  });
}

async function issue_form(context, list) {
  const accounts = (await get('/v1/accounts', { page_size: 100 })).accounts ?? [];
  return action_form({
    label: 'Issue a virtual card',
    button: 'Issue card',
    fields: [
      field('Account', select('account_id', accounts.map((account) => [account.id, `${account.name} (${account.number}) · ${formatMoney(account.balance?.available)}`])),
        'The card is issued against this account; its prepaid balance is topped up from it.'),
      field('Nickname (optional)', input('nickname', { maxlength: '100' })),
      amount_field('initial_balance', 'Initial balance (optional)'),
    ],
    submit: (form) => {
      const body = { account_id: form.elements.account_id.value, type: 'virtual' };
      const nickname = text_value(form, 'nickname');
      if (nickname) body.nickname = nickname;
      const initial = read_amount(form, 'initial_balance', { required: false });
      if (initial) body.initial_balance = initial;
      return post('/v1/cards', body);
    },
    done: async (card, form) => {
      form.reset();
      context.announce(`Card ending ${card.last_four} issued.`);
      await load_into(list, () => card_list(context));
    },
  });
}

export async function render(context) {
  const list = h('div', { id: 'card-list' });
  await load_into(list, () => card_list(context));
  return h('div', {},
    h('h1', {}, 'Cards'),
    section('Cards', list),
    section('Issue a virtual card', await issue_form(context, list)));
}
