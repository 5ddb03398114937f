// Settings, OAuth clients of the participant API: create (the secret shown once), list, revoke.
import { h, table, code, section, id_text } from '../dom.js';
import { get, post } from '../api.js';
import { secret, time } from '../components.js';
import { action_form, local_error, load_into, revocation_columns, succeeded } from '../ui.js';

export const title = 'OAuth clients';

const k_default_scopes = ['collections', 'collections:readonly', 'outgoing_transfers',
  'outgoing_transfers:readonly', 'target_resolutions', 'target_resolutions:readonly',
  'tenant_accounts', 'tenant_accounts:readonly', 'webhooks'];

function create_form(context, on_created, outcome) {
  const scopes = context.session.scopes?.participant?.length ? context.session.scopes.participant : k_default_scopes;
  const boxes = scopes.map((scope, index) => {
    const id = `client-scope-${index}`;
    return h('div', { class: 'check' },
      h('input', { type: 'checkbox', id, name: 'scope', value: scope }),
      h('label', { for: id }, scope));
  });
  return action_form({
    outcome,
    label: 'Create an OAuth client',
    button: 'Create OAuth client',
    fields: [h('fieldset', { class: 'scopes' },
      h('legend', {}, 'Scopes (a full scope includes its :readonly form)'),
      h('div', { class: 'grid' }, boxes))],
    submit: (form) => {
      const chosen = [...form.querySelectorAll('input[name=scope]:checked')].map((box) => box.value);
      if (chosen.length === 0) throw local_error('scope', 'choose at least one scope');
      return post('/clients', { scopes: chosen });
    },
    done: (created, form) => {
      form.reset();
      return on_created(created);
    },
  });
}

async function client_list(context, list) {
  const answer = await get('/clients');
  return table('OAuth clients of this tenant', [
    ['Client id', (client) => id_text(client.client_id)],
    ['Scopes', (client) => (client.scopes ?? []).join(', ')],
    ['Created', (client) => time(client.inserted_at)],
    ...revocation_columns({
      path_of: (client) => `/clients/${encodeURIComponent(client.client_id)}`,
      name_of: (client) => client.client_id,
      confirm_of: (client) => `Revoke the client ${client.client_id}? Its tokens stop working.`,
      after: async (client) => {
        context.announce(`OAuth client ${client.client_id} revoked.`);
        await load_into(list, () => client_list(context, list));
      },
    }),
  ], answer.data ?? [], 'No OAuth clients yet.');
}

export async function render(context) {
  const list = h('div', { id: 'client-list' });
  const created_slot = h('div', { class: 'created' });
  const form = create_form(context, async (created) => {
    await load_into(list, () => client_list(context, list));
    return succeeded(h('p', {}, 'Created the client ', code(created.client_id), '.'),
      secret('client secret', created.client_secret));
  }, created_slot);
  await load_into(list, () => client_list(context, list));
  return h('div', {},
    h('h1', {}, 'OAuth clients'),
    h('p', {}, 'Clients get tokens for the participant API (', code('/api/v1/...'), ') from ',
      code('POST /api/v1/oauth/token'), ' with the client credentials grant.'),
    section('Create an OAuth client', form, created_slot),
    section('Clients', list));
}
