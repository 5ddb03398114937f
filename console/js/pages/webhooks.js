// Settings, webhook endpoints: register one (its signing secret shown once) and list them;
// each links to its page (rotate, deliveries, replay).
import { h, field, input, code, section, badge, link } from '../dom.js';
import { post } from '../api.js';
import { secret, time } from '../components.js';
import { action_form, paged_table, text_value, load_into, succeeded } from '../ui.js';

export const title = 'Webhook endpoints';

// "collection.paid, card_transaction.*" -> ['collection.paid', 'card_transaction.*']
export function event_types_of(text) {
  return (text ?? '').split(/[\s,]+/).map((type) => type.trim()).filter(Boolean);
}

export function endpoint_state(endpoint) {
  return endpoint.enabled ? badge('enabled', 'good') : badge(`disabled${endpoint.disabled_reason ? ` (${endpoint.disabled_reason})` : ''}`, 'bad');
}

function endpoint_list(context) {
  return paged_table({
    path: '/v1/webhook_endpoints',
    plural: 'webhook_endpoints',
    caption: 'Webhook endpoints of this tenant',
    route: context.route,
    empty: 'No webhook endpoints yet.',
    columns: [
      ['URL', (endpoint) => link(`#/webhooks/${encodeURIComponent(endpoint.id)}`, endpoint.url)],
      ['Events', (endpoint) => (endpoint.event_types?.length ? endpoint.event_types.join(', ') : 'all')],
      ['State', endpoint_state],
      ['Created', (endpoint) => time(endpoint.inserted_at)],
    ],
  });
}

export async function render(context) {
  const list = h('div', { id: 'webhook-list' });
  const created_slot = h('div', { class: 'created' });
  const form = action_form({
    outcome: created_slot,
    label: 'Register a webhook endpoint',
    button: 'Register endpoint',
    fields: [
      field('URL', input('url', { type: 'url', required: true, placeholder: 'https://hooks.example.com/tesoro' }),
        context.is_sandbox ? 'http or https; in the sandbox a loopback host (127.0.0.1, localhost) is allowed too. Private networks need the operator\'s allow-list.'
          : 'An https URL on a public host (private networks need the operator\'s allow-list).'),
      field('Description (optional)', input('description', { maxlength: '500' })),
      field('Event types (optional)', input('event_types', { placeholder: 'collection.paid, card_transaction.*' }),
        'Separated by commas; empty receives every event. docs/webhooks.md lists the types.'),
    ],
    submit: (form_element) => {
      const body = { url: text_value(form_element, 'url') ?? '' };
      const description = text_value(form_element, 'description');
      if (description) body.description = description;
      const types = event_types_of(form_element.elements.event_types.value);
      if (types.length) body.event_types = types;
      return post('/v1/webhook_endpoints', body);
    },
    done: async (endpoint, form_element) => {
      form_element.reset();
      await load_into(list, () => endpoint_list(context));
      return succeeded(
        h('p', {}, 'Registered ', link(`#/webhooks/${encodeURIComponent(endpoint.id)}`, endpoint.url), ' (', code(endpoint.id), ').'),
        secret('signing secret', endpoint.secret));
    },
  });
  await load_into(list, () => endpoint_list(context));
  return h('div', {},
    h('h1', {}, 'Webhook endpoints'),
    h('p', {}, 'Events are POSTed to these URLs, signed as the Standard Webhooks specification says.'),
    section('Register an endpoint', form, created_slot),
    section('Endpoints', list));
}
