// One account holder: who they are, and their accounts with balances.
import { h, section, details_list, link, id_text } from '../dom.js';
import { get } from '../api.js';
import { time } from '../components.js';
import { formatMoney, humanize } from '../format.js';
import { paged_table, load_into } from '../ui.js';
import { href } from '../router.js';

export const title = 'Account holder';

export function holder_name(holder) {
  return [holder.person?.first_name, holder.person?.last_name].filter(Boolean).join(' ') || holder.id;
}

export async function render(context) {
  const id = context.params.id;
  const holder = await get(`/v1/ledger/account_holders/${encodeURIComponent(id)}`);
  const accounts = h('div', { id: 'holder-accounts' });
  await load_into(accounts, () => paged_table({
    path: '/v1/accounts',
    plural: 'accounts',
    query: { account_holder_id: id },
    caption: `Accounts of ${holder_name(holder)}, newest first`,
    route: context.route,
    empty: 'No accounts yet: open one on the Accounts page with this holder id.',
    columns: [
      ['Name', (account) => link(href(`/accounts/${account.id}`), account.name)],
      ['Number', (account) => account.number],
      ['Type', (account) => humanize(account.type)],
      ['Balance', (account) => h('span', { class: 'money' }, formatMoney(account.balance?.current))],
      ['Available', (account) => h('span', { class: 'money' }, formatMoney(account.balance?.available))],
      ['Opened', (account) => time(account.inserted_at)],
    ],
  }));
  return h('div', {},
    h('p', { class: 'breadcrumb' }, h('a', { href: '#/holders' }, 'Account holders'), ' / ', holder_name(holder)),
    h('h1', {}, holder_name(holder)),
    section('Account holder', details_list([
      ['Document', `${holder.person?.document_type ?? ''} ${holder.person?.document_number ?? ''}`.trim() || '—'],
      ['Email', holder.email ?? '—'],
      ['External id', holder.external_id ?? '—'],
      ['State', holder.state],
      ['Created', time(holder.inserted_at)],
      ['Id', id_text(holder.id)],
    ])),
    section('Accounts', accounts));
}
