// Overview: who is signed in, the tenant, its clock in the sandbox, and its balances.
import { h, details_list, table, code, section, badge } from '../dom.js';
import { get } from '../api.js';
import { time } from '../components.js';
import { formatMoney } from '../format.js';

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
      ['Tenant id', code(session.tenant.id)],
      ['Environment', badge(session.tenant.environment, `env-${session.tenant.environment}`)],
      ['Signed in as', session.user.email],
      ['Session ends', time(session.expires_at)],
      ...(clock ? [['Tenant clock', h('span', { id: 'clock-now' }, time(clock.now))],
        ['Clock ahead of real time', `${clock.offset_seconds} s`]] : []),
    ])),
    section('Tenant accounts', table('Tenant accounts and their available balances', [
      ['Number', (row) => row.number],
      ['Role', (row) => row.role],
      ['Available', (row) => formatMoney(row.balance?.available)],
    ], tenant_accounts), h('p', {}, h('a', { href: '#/tenant-accounts' }, 'All tenant accounts'))),
    section('Accounts', table('Newest ledger accounts and their available balances', [
      ['Name', (row) => row.name],
      ['Number', (row) => row.number],
      ['Available', (row) => formatMoney(row.balance?.available)],
    ], accounts.accounts), h('p', {}, h('a', { href: '#/accounts' }, 'All accounts'))));
}
