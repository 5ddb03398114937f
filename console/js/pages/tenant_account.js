// One tenant account of the instant-payment network: its balances and its statement.
import { h, section, code, details_list, id_text } from '../dom.js';
import { get, ApiError } from '../api.js';
import { time } from '../components.js';
import { formatMoney, humanize } from '../format.js';
import { statement_section } from './statement.js';

export const title = 'Tenant account';

export async function render(context) {
  const id = context.params.id;
  // The participant API lists tenant accounts without a read of one: the list has them all.
  const accounts = await get('/api/v1/tenant/accounts');
  const account = accounts.find((item) => item.id === id);
  if (!account) {
    throw new ApiError(404, {
      code: '404 Not Found', message: 'This tenant has no such tenant account.',
      errors: [{ error_code: 'tenant_account_not_found', message: `no tenant account ${id}`, path: null }],
    });
  }
  const statement = await statement_section(context,
    { path: `/api/v1/tenant/accounts/${encodeURIComponent(id)}/entries`, account_id: id });
  return h('div', {},
    h('p', { class: 'breadcrumb' }, h('a', { href: '#/tenant-accounts' }, 'Tenant accounts'), ' / ', account.number),
    h('h1', {}, `Tenant account ${account.number}`),
    section('Account', details_list([
      ['Role', account.role ?? '—'],
      ['Type', humanize(account.type)],
      ['State', account.state],
      ['Beneficiary', account.beneficiary?.full_name ?? '—'],
      ['Available', h('span', { class: 'money' }, formatMoney(account.balance?.available))],
      ['Held', h('span', { class: 'money' }, formatMoney(account.balance?.held))],
      ['Balance', h('span', { class: 'money' }, formatMoney(account.balance?.current))],
      ['Opened', time(account.inserted_at)],
      ['Id', id_text(account.id)],
    ])),
    statement);
}
