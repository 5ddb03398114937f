// Money, tenant accounts: the tenant's accounts on the instant-payment network, with balances.
import { h, select, field, section, link, table, id_text } from '../dom.js';
import { get } from '../api.js';
import { time } from '../components.js';
import { humanize } from '../format.js';
import { href, go } from '../router.js';
import { balance_columns } from './accounts.js';

export const title = 'Tenant accounts';

export async function render(context) {
  const role = context.route.query.role ?? '';
  const accounts = await get('/api/v1/tenant/accounts', role ? { role } : {});
  const filter = select('role', [['', 'every role'], ['receptor', 'receptor'], ['originator', 'originator']]);
  filter.value = role;
  filter.addEventListener('change', () => go('/tenant-accounts', { role: filter.value }));
  return h('div', {},
    h('h1', {}, 'Tenant accounts'),
    h('p', {}, 'Receptor accounts receive the payments of collections; originator accounts send outgoing transfers.'),
    section('Accounts', h('div', { class: 'filters' }, field('Role', filter)),
      table('Tenant accounts with their balances', [
        ['Number', (account) => link(href(`/tenant-accounts/${account.id}`), account.number)],
        ['Role', (account) => account.role],
        ['Type', (account) => humanize(account.type)],
        ['State', (account) => account.state],
        ['Beneficiary', (account) => account.beneficiary?.full_name ?? '—'],
        ...balance_columns(),
        ['Id', (account) => id_text(account.id, href(`/tenant-accounts/${account.id}`))],
        ['Opened', (account) => time(account.inserted_at)],
        ...(context.is_sandbox ? [['', (account) => link(href('/sandbox', { fund: account.id }), 'Fund', { 'aria-label': `Fund ${account.number}` })]] : []),
      ], accounts, 'No tenant accounts.')));
}
