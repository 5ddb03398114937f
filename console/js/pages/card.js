// One card: its state and balances, spending limits, and its transactions with the reason of
// each decline. In the sandbox, pending authorizations can be captured or reversed here.
import { h, section, details_list, table, id_text, money, link } from '../dom.js';
import { get, post } from '../api.js';
import { time } from '../components.js';
import { formatMoney, humanize } from '../format.js';
import { action_button, paged_table, load_into } from '../ui.js';
import { href } from '../router.js';
import { card_state } from './cards.js';
import { cardholder_name } from './cardholders.js';

export const title = 'Card';

export function decline_text(transaction) {
  if (!transaction.decline_reason) return '—';
  const by = transaction.declined_by ? ` (rule ${transaction.declined_by.rule_type} of ${transaction.declined_by.spending_control_id})` : '';
  const detail = transaction.decline_reason_detail ? `: “${transaction.decline_reason_detail}”` : '';
  return `${humanize(transaction.decline_reason)}${by}${detail}`;
}

// Who decided (docs/webhooks.md, "Authorization decisioning"): Tesoro's own checks, the
// tenant's authorization endpoint, or its fallback after a timeout or an error.
export function decision_text(decision) {
  if (!decision) return '—';
  const took = decision.duration_ms === null || decision.duration_ms === undefined ? '' : ` in ${decision.duration_ms} ms`;
  if (decision.by === 'endpoint') {
    return `Your endpoint: ${decision.reason === 'webhook_approved' ? 'approved' : 'declined'}${took}`;
  }
  if (decision.by === 'fallback') {
    return `Fallback after ${decision.reason === 'webhook_timeout' ? 'a timeout' : 'an error'}${took}`;
  }
  if (decision.webhook_endpoint_id) return `Tesoro: ${humanize(decision.reason)} after your endpoint${took}`;
  return 'Tesoro';
}

function transaction_list(context, card_id, reload) {
  const step = (transaction, name, text) => action_button(text, async () => {
    await post(`/v1/sandbox/card_transactions/${encodeURIComponent(transaction.id)}/${name}`);
    context.announce(`Transaction ${text.toLowerCase()}d.`);
    reload();
  }, { label: `${text} ${transaction.id}` });
  return paged_table({
    path: `/v1/cards/${encodeURIComponent(card_id)}/transactions`,
    plural: 'transactions',
    caption: 'Card transactions, newest first',
    route: context.route,
    empty: 'No transactions yet.',
    columns: [
      ['When', (transaction) => time(transaction.inserted_at)],
      ['Merchant', (transaction) => link(href(`/cards/${card_id}/transactions/${transaction.id}`),
        `${transaction.merchant?.name ?? '—'} (MCC ${transaction.merchant?.mcc ?? '—'})`)],
      ['Channel', (transaction) => humanize(transaction.channel)],
      ['Amount', (transaction) => h('span', { class: 'money' }, formatMoney(transaction.amount))],
      ['Result', (transaction) => humanize(transaction.type)],
      ['State', (transaction) => transaction.state],
      ['Decided by', (transaction) => decision_text(transaction.decision)],
      ['Decline reason', decline_text],
      ['ISO 8583', (transaction) => transaction.iso8583_code],
      ...(context.is_sandbox ? [['', (transaction) => (transaction.state === 'pending'
        ? h('span', { class: 'row-actions' }, step(transaction, 'capture', 'Capture'), step(transaction, 'reverse', 'Reverse'))
        : '')]] : []),
    ],
  });
}

export async function render(context) {
  const id = context.params.id;
  const card = await get(`/v1/cards/${encodeURIComponent(id)}`);
  const transactions = h('div', { id: 'transaction-list' });
  const reload = () => context.reload();
  await load_into(transactions, () => transaction_list(context, id, reload));
  const limits = card.spending_limits ?? [];
  return h('div', {},
    h('p', { class: 'breadcrumb' }, h('a', { href: '#/cards' }, 'Cards'), ' / ', `•••• ${card.last_four}`),
    h('h1', {}, `Card •••• ${card.last_four}`),
    section('Card', details_list([
      ['State', card_state(card.state)],
      ['Type', card.type],
      ['Nickname', card.nickname ?? '—'],
      ['Available', h('span', { class: 'money' }, formatMoney(card.balance?.available))],
      ['Posted', h('span', { class: 'money' }, formatMoney(card.balance?.posted))],
      ['Expires', `${String(card.expiration_month).padStart(2, '0')}/${card.expiration_year}`],
      ['Account', id_text(card.account_id, href(`/accounts/${card.account_id}`))],
      ['Prepaid balance', card.prepaid_account_id ? h('a', { href: href(`/accounts/${card.prepaid_account_id}`) }, 'Statement of the prepaid balance') : '—'],
      ['Cardholder', card.cardholder_id ? link(href(`/cardholders/${card.cardholder_id}`), cardholder_name(card.cardholder ?? { id: card.cardholder_id })) : '—'],
      ['Id', id_text(card.id)],
      ['Issued', time(card.inserted_at)],
    ]), context.is_sandbox ? h('p', {}, h('a', { href: href('/sandbox', { card: card.id }) }, 'Authorize a purchase on this card')) : null),
    limits.length ? section('Spending limits', table('Spending limits that apply to this card', [
      ['Rule', (limit) => `${humanize(limit.rule_type)} (${limit.window})`],
      ['Limit', (limit) => money(formatMoney(limit.limit))],
      ['Used', (limit) => money(formatMoney(limit.used))],
      ['Remaining', (limit) => money(formatMoney(limit.remaining))],
      ['Window ends', (limit) => time(limit.window_end)],
    ], limits)) : null,
    section('Transactions', transactions));
}
