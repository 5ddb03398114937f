// Settings, API keys: create one (environment and scopes chosen here, the secret shown once),
// list them by prefix, revoke.
import { h, field, select, table, code, section } from '../dom.js';
import { get, post } from '../api.js';
import { secret, time } from '../components.js';
import { action_form, local_error, load_into, revocation_columns, succeeded } from '../ui.js';

export const title = 'API keys';

const k_levels = [['', 'No access'], ['read', 'read'], ['write', 'write'], ['admin', 'admin']];
const k_default_groups = ['ledger', 'cards', 'spending_controls', 'payouts', 'webhooks'];

// The core API's scope groups, from the session (scopes "<group>:<level>").
function core_groups(session) {
  const groups = new Set((session.scopes?.core ?? []).map((scope) => String(scope).split(':')[0]));
  return groups.size ? [...groups] : k_default_groups;
}

function create_form(context, on_created, outcome) {
  const environment = context.session.tenant.environment;
  const groups = core_groups(context.session);
  const scope_fields = groups.map((group) => field(group.replaceAll('_', ' '),
    select(`scope-${group}`, k_levels)));
  return action_form({
    outcome,
    label: 'Create an API key',
    button: 'Create API key',
    fields: [
      field('Environment', select('environment', [
        ['sandbox', 'sandbox', { selected: environment === 'sandbox', disabled: environment !== 'sandbox' }],
        ['production', 'production', { selected: environment === 'production', disabled: environment !== 'production' }],
      ]), `This tenant lives in ${environment}: its keys work there only.`),
      h('fieldset', { class: 'scopes' }, h('legend', {}, 'Scopes (read < write < admin; choose the least the key needs)'),
        h('div', { class: 'grid' }, scope_fields)),
    ],
    submit: (form) => {
      const scopes = groups.map((group) => [group, form.elements[`scope-${group}`].value])
        .filter(([, level]) => level !== '').map(([group, level]) => `${group}:${level}`);
      if (scopes.length === 0) throw local_error('scopes', 'choose at least one scope');
      return post('/keys', { environment: form.elements.environment.value, scopes });
    },
    done: (created, form) => {
      form.reset();
      return on_created(created);
    },
  });
}

async function key_list(context, list) {
  const answer = await get('/keys');
  const keys = answer.data ?? [];
  return table('API keys of this tenant (the secret is never shown again; the prefix names a key)', [
    ['Prefix', (key) => code(key.key_prefix)],
    ['Environment', (key) => key.environment],
    ['Scopes', (key) => (key.scopes ?? []).join(', ')],
    ['Created', (key) => time(key.inserted_at)],
    ...revocation_columns({
      path_of: (key) => `/keys/${encodeURIComponent(key.id)}`,
      name_of: (key) => key.key_prefix,
      confirm_of: (key) => `Revoke the key ${key.key_prefix}? Requests with it will answer 401.`,
      after: async (key) => {
        context.announce(`API key ${key.key_prefix} revoked.`);
        await load_into(list, () => key_list(context, list));
      },
    }),
  ], keys, 'No API keys yet.');
}

export async function render(context) {
  const list = h('div', { id: 'key-list' });
  const created_slot = h('div', { class: 'created' });
  const form = create_form(context, async (created) => {
    await load_into(list, () => key_list(context, list));
    return succeeded(h('p', {}, 'Created the key ', code(created.key_prefix), ' with scopes ', (created.scopes ?? []).join(', '), '.'),
      secret('API key', created.api_key));
  }, created_slot);
  await load_into(list, () => key_list(context, list));
  return h('div', {},
    h('h1', {}, 'API keys'),
    h('p', {}, 'Keys authenticate the core API (', code('/v1/...'), ') as ', code('Authorization: Bearer sk_...'), '.'),
    section('Create an API key', form, created_slot),
    section('Keys', list));
}
