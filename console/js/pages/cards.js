// Money, cards: last four, state and balance of each card; issue a virtual card.
import { h, field, input, select, section, link, badge } from '../dom.js';
import { get, post } from '../api.js';
import { time } from '../components.js';
import { formatMoney } from '../format.js';
import { action_form, amount_field, paged_table, read_amount, text_value, load_into, succeeded } from '../ui.js';
import { href } from '../router.js';
import { cardholder_name } from './cardholders.js';
import { account_choice_text } from './accounts.js';

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
  const [accounts_page, cardholders_page] = await Promise.all([
    get('/v1/accounts', { page_size: 100 }), get('/v1/cards/cardholders', { page_size: 100 })]);
  const accounts = accounts_page.accounts ?? [];
  const account_choice = select('account_id', accounts.map((account) => [account.id, account_choice_text(account)]));
  return action_form({
    label: 'Issue a virtual card',
    button: 'Issue card',
    fields: [
      field('Account', account_choice,
        'The card is issued against this account; its prepaid balance is topped up from it.'),
      field('Cardholder (optional)', select('cardholder_id', [['', 'none'],
        ...(cardholders_page.cardholders ?? []).map((cardholder) => [cardholder.id, cardholder_name(cardholder)])]),
      'The person the card is for; add people on the Cardholders page.'),
      field('Nickname (optional)', input('nickname', { maxlength: '100' })),
      amount_field('initial_balance', 'Initial balance (optional)'),
    ],
    paths: { initial_balance: 'initial_balance' },
    submit: (form) => {
      const body = { account_id: form.elements.account_id.value, type: 'virtual' };
      if (form.elements.cardholder_id.value) body.cardholder_id = form.elements.cardholder_id.value;
      const nickname = text_value(form, 'nickname');
      if (nickname) body.nickname = nickname;
      const initial = read_amount(form, 'initial_balance', { required: false });
      if (initial) body.initial_balance = initial;
      return post('/v1/cards', body);
    },
    done: async (card, form) => {
      form.reset();
      await load_into(list, () => card_list(context));
      // The account paid the initial balance: its choice shows what is left.
      const account = await get(`/v1/accounts/${encodeURIComponent(card.account_id)}`);
      const option = [...account_choice.options].find((item) => item.value === account.id);
      if (option) option.textContent = account_choice_text(account);
      account_choice.value = account.id;
      return succeeded('Issued the card ', link(href(`/cards/${card.id}`), `•••• ${card.last_four}`),
        card.initial_balance?.amount ? ` with ${formatMoney(card.initial_balance)}.` : '.');
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
