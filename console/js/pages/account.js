// One ledger account (or a card's prepaid balance): its balances, its balance as of an instant,
// and its statement.
import { h, field, input, section, details_list, id_text } from '../dom.js';
import { get } from '../api.js';
import { time, error_box } from '../components.js';
import { formatMoney, humanize } from '../format.js';
import { href } from '../router.js';
import { statement_section } from './statement.js';

export const title = 'Account';

// GET /v1/accounts/{id}?as_of=...: the balance as it stood then, shown under the form.
function as_of_form(account_id) {
  const when = input('as_of', { type: 'datetime-local', required: true });
  const answer = h('div', { class: 'as-of', role: 'status' });
  const form = h('form', { class: 'filters', 'aria-label': 'Balance as of a time' },
    field('Balance as of (UTC)', when),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'secondary' }, 'Show balance')));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    answer.replaceChildren();
    if (!when.value) {
      answer.append(h('p', { class: 'error' }, 'Choose a date and time.'));
      return;
    }
    const instant = `${when.value}:00Z`;
    try {
      const then = await get(`/v1/accounts/${encodeURIComponent(account_id)}`, { as_of: instant });
      answer.append(h('p', {}, 'Balance at ', time(instant), ': ',
        h('strong', { class: 'money' }, formatMoney(then.balance?.current)),
        then.balance?.updated_at ? h('span', { class: 'hint' }, ' (last posting before it: ', time(then.balance.updated_at), ')') : null));
    } catch (error) {
      answer.append(error_box(error));
    }
  });
  return h('div', {}, form, answer);
}

export async function render(context) {
  const id = context.params.id;
  const account = await get(`/v1/accounts/${encodeURIComponent(id)}`);
  const prepaid = account.type === 'prepaid_card';
  const statement = await statement_section(context, { path: `/v1/accounts/${encodeURIComponent(id)}/entries`, account_id: id });
  return h('div', {},
    h('p', { class: 'breadcrumb' }, h('a', { href: prepaid ? '#/cards' : '#/accounts' }, prepaid ? 'Cards' : 'Accounts'), ' / ', account.name),
    h('h1', {}, account.name),
    section('Account', details_list([
      ['Number', account.number],
      ['Type', humanize(account.type)],
      ['Holder', account.account_holder_id ? id_text(account.account_holder_id, href(`/holders/${account.account_holder_id}`)) : 'the tenant'],
      ['State', account.state],
      ['Available', h('span', { class: 'money' }, formatMoney(account.balance?.available))],
      ['Held', h('span', { class: 'money' }, formatMoney(account.balance?.held))],
      ['Balance', h('span', { class: 'money' }, formatMoney(account.balance?.current))],
      ['Opened', time(account.inserted_at)],
      ['Id', id_text(account.id)],
    ]), as_of_form(id)),
    statement);
}
