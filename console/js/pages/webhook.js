// One webhook endpoint: its settings, rotate its secret (shown once), enable or disable it,
// and its delivery log with each attempt's status and a replay of its event.
import { h, section, badge, clear, details_list, field, input, select, id_text } from '../dom.js';
import { get, post, patch, del } from '../api.js';
import { secret, time } from '../components.js';
import { action_button, action_form, paged_table, load_into } from '../ui.js';
import { humanize } from '../format.js';
import { go } from '../router.js';
import { endpoint_state } from './webhooks.js';

export const title = 'Webhook endpoint';

const k_authorization_request = 'card_authorization.request';

function delivery_status(delivery) {
  if (delivery.outcome) {  // an authorization request: its outcome
    const good = delivery.outcome === 'webhook_approved' || delivery.outcome === 'webhook_declined';
    return badge(`${delivery.status_code ?? 'no response'}: ${humanize(delivery.outcome)}`, good ? 'good' : 'bad');
  }
  if (delivery.delivered) return badge(`${delivery.status_code} delivered`, 'good');
  return badge(delivery.status_code ? `${delivery.status_code} failed` : 'no response', 'bad');
}

// The two settings of an endpoint that decides card authorizations.
function authorization_form(context, path, endpoint) {
  return action_form({
    label: 'Authorization decisioning',
    button: 'Save',
    fields: [
      field('Authorization timeout (ms)', input('authorization_timeout_ms', {
        type: 'number', min: '100', max: '10000', step: '1', required: true,
        value: String(endpoint.authorization_timeout_ms),
      }), 'How long a card authorization waits for this endpoint: 100 to 10000 ms.'),
      field('When it times out or errs', select('authorization_fallback', [
        ['decline', 'Decline the authorization', { selected: endpoint.authorization_fallback === 'decline' }],
        ['approve', 'Approve the authorization', { selected: endpoint.authorization_fallback === 'approve' }],
      ])),
    ],
    submit: (form_element) => patch(path, {
      authorization_timeout_ms: Number(form_element.elements.authorization_timeout_ms.value),
      authorization_fallback: form_element.elements.authorization_fallback.value,
    }),
    done: async (saved) => {
      context.announce(`Saved: ${saved.authorization_timeout_ms} ms, fallback ${saved.authorization_fallback}.`);
      context.reload();
    },
  });
}

// `refresh()` draws the list again (after a replay, which adds an attempt).
function delivery_list(context, endpoint_id, refresh) {
  const path = `/v1/webhook_endpoints/${encodeURIComponent(endpoint_id)}`;
  return paged_table({
    path: `${path}/deliveries`,
    plural: 'deliveries',
    caption: 'Delivery attempts, newest first',
    route: context.route,
    empty: 'No deliveries yet: events that happen from now on are sent here.',
    columns: [
      ['Event', (delivery) => h('span', {}, delivery.event_type, h('br'), id_text(delivery.event_id))],
      ['Attempt', (delivery) => `${delivery.attempt}${delivery.replay ? ' (replay)' : ''}`],
      ['Status', delivery_status],
      ['Latency', (delivery) => `${delivery.latency_ms} ms`],
      ['Error', (delivery) => (delivery.error ? h('span', { class: 'long-text' }, delivery.error) : '—')],
      ['Attempted', (delivery) => time(delivery.attempted_at)],
      ['Next try', (delivery) => time(delivery.next_attempt_at)],
      ['', (delivery) => (delivery.event_type === k_authorization_request ? '' : action_button('Replay', async () => {
        await post(`${path}/deliveries/${encodeURIComponent(delivery.event_id)}/replay`);
        context.announce(`Event ${delivery.event_id} queued again.`);
        await refresh();
      }, { label: `Replay ${delivery.event_type} ${delivery.event_id}` }))],
    ],
  });
}

export async function render(context) {
  const id = context.params.id;
  const path = `/v1/webhook_endpoints/${encodeURIComponent(id)}`;
  const endpoint = await get(path);
  const secret_slot = h('div', { class: 'created' });
  const deliveries = h('div', { id: 'delivery-list' });
  const refresh = () => load_into(deliveries, () => delivery_list(context, id, refresh));
  await refresh();
  const actions = h('div', { class: 'actions' },
    action_button('Rotate secret', async () => {
      const rotated = await post(`${path}/rotate_secret`);
      clear(secret_slot).append(h('div', { class: 'success' },
        h('p', {}, 'The old secret keeps signing for 24 hours, next to the new one.'),
        secret('new signing secret', rotated.secret)));
      context.announce('Secret rotated. Copy the new one now: it is shown only once.');
    }, { confirm_text: 'Rotate the signing secret? The old one keeps signing for 24 hours.' }),
    action_button(endpoint.enabled ? 'Disable' : 'Enable', async () => {
      await patch(path, { enabled: !endpoint.enabled });
      context.reload();
    }),
    action_button('Delete', async () => {
      await del(path);
      go('/webhooks');
    }, { confirm_text: `Delete the endpoint ${endpoint.url}? Nothing more is sent to it.`, classes: 'danger' }),
    action_button('Refresh deliveries', refresh));
  return h('div', {},
    h('p', { class: 'breadcrumb' }, h('a', { href: '#/webhooks' }, 'Webhook endpoints'), ' / ', endpoint.url),
    h('h1', {}, 'Webhook endpoint'),
    section('Endpoint', details_list([
      ['URL', endpoint.url],
      ['Id', id_text(endpoint.id)],
      ['Description', endpoint.description ?? '—'],
      ['Events', endpoint.event_types?.length ? endpoint.event_types.join(', ') : 'all'],
      ['State', endpoint_state(endpoint)],
      ['Authorization timeout', `${endpoint.authorization_timeout_ms} ms`],
      ['When it times out or errs', endpoint.authorization_fallback === 'approve' ? 'approve' : 'decline'],
      ['Created', time(endpoint.inserted_at)],
    ]), actions, secret_slot),
    section('Authorization decisioning', h('p', {},
      (endpoint.event_types ?? []).includes(k_authorization_request)
        ? 'This endpoint decides the card authorizations of this tenant (when it is the newest enabled one listing card_authorization.request).'
        : 'List card_authorization.request in its event types to let this endpoint decide card authorizations.'),
      authorization_form(context, path, endpoint)),
    section('Deliveries', deliveries));
}
