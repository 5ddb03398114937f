// Overview: who is signed in, the tenant, its clock in the sandbox, and its balances.
import { h, details_list, table, section, badge, id_text, money, link } from '../dom.js';
import { href } from '../router.js';
import { get } from '../api.js';
import { time } from '../components.js';
import { formatMoney, formatDuration } from '../format.js';

export const title = 'Overview';

export async function render(context) {
  const { session } = context;
  const [accounts, tenant_accounts, clock] = await Promise.all([
    get('/v1/accounts', { page_size: 10 }),
    get('/api/v1/tenant/accounts'),
    context.is_sandbox ? get('/api/v1/sandbox/clock') : Promise.resolve(null),
  ]);
  return h('div', {},
    h('h1', {}, 'Overview'),
    section('Tenant', details_list([
      ['Name', session.tenant.name],
      ['Tenant id', id_text(session.tenant.id)],
      ['Environment', badge(session.tenant.environment, `env-${session.tenant.environment}`)],
      ['Signed in as', session.user.email],
      ['Session ends', time(session.expires_at)],
      ...(clock ? [['Tenant clock', h('span', { id: 'clock-now' }, time(clock.now))],
        ['Clock ahead of real time', formatDuration(clock.offset_seconds)]] : []),
    ])),
    section('Tenant accounts', table('Tenant accounts and their available balances', [
      ['Number', (row) => link(href(`/tenant-accounts/${row.id}`), row.number)],
      ['Role', (row) => row.role],
      ['Available', (row) => money(formatMoney(row.balance?.available))],
    ], tenant_accounts), h('p', {}, h('a', { href: '#/tenant-accounts' }, 'All tenant accounts'))),
    section('Accounts', table('Newest ledger accounts and their available balances', [
      ['Name', (row) => link(href(`/accounts/${row.id}`), row.name)],
      ['Number', (row) => row.number],
      ['Available', (row) => money(formatMoney(row.balance?.available))],
    ], accounts.accounts), h('p', {}, h('a', { href: '#/accounts' }, 'All accounts'))));
}
