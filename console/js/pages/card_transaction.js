// One card transaction: its amounts through its life (held, captured, reversed, released,
// expired, refunded), who decided it and why, and each step it went through.
import { h, section, details_list, table, money, id_text, link } from '../dom.js';
import { get } from '../api.js';
import { time } from '../components.js';
import { formatMoney, humanize, sentence } from '../format.js';
import { href } from '../router.js';
import { decision_text, decline_text } from './card.js';

export const title = 'Card transaction';

export async function render(context) {
  const { card_id, id } = context.params;
  const [card, transaction] = await Promise.all([
    get(`/v1/cards/${encodeURIComponent(card_id)}`),
    get(`/v1/cards/${encodeURIComponent(card_id)}/transactions/${encodeURIComponent(id)}`),
  ]);
  const amount = (name) => money(formatMoney(transaction[name]));
  return h('div', {},
    h('p', { class: 'breadcrumb' }, link('#/cards', 'Cards'), ' / ',
      link(href(`/cards/${card.id}`), `•••• ${card.last_four}`), ' / ', transaction.merchant?.name ?? transaction.id),
    h('h1', {}, sentence(`${humanize(transaction.type)} at ${transaction.merchant?.name ?? 'a merchant'}`)),
    section('Transaction', details_list([
      ['State', transaction.state],
      ['Amount', amount('amount')],
      ['Held', amount('held_amount')],
      ['Captured', amount('captured_amount')],
      ['Reversed', amount('reversed_amount')],
      ['Released', amount('released_amount')],
      ['Expired', amount('expired_amount')],
      ['Refunded', amount('refunded_amount')],
      ['Channel', humanize(transaction.channel)],
      ['Merchant', `${transaction.merchant?.name ?? '—'} (MCC ${transaction.merchant?.mcc ?? '—'}, ${transaction.merchant?.country ?? '—'})`],
      ['Decided by', decision_text(transaction.decision)],
      ['Endpoint asked', transaction.decision?.webhook_endpoint_id
        ? id_text(transaction.decision.webhook_endpoint_id, href(`/webhooks/${transaction.decision.webhook_endpoint_id}`)) : '—'],
      ['Decline reason', decline_text(transaction)],
      ['ISO 8583', transaction.iso8583_code ?? '—'],
      ['Hold expires', time(transaction.expires_at)],
      ['Card', id_text(card.id, href(`/cards/${card.id}`))],
      ['Id', id_text(transaction.id)],
      ['Created', time(transaction.inserted_at)],
    ])),
    section('History', table('Each step of the transaction, oldest first', [
      ['Step', (step) => humanize(step.type)],
      ['Amount', (step) => money(formatMoney(step.amount))],
      ['When', (step) => time(step.performed_at)],
    ], transaction.history ?? [], 'No steps yet.')));
}
