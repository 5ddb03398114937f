// Money, account holders: the third parties the tenant keeps accounts for; add one.
import { h, field, input, select, code, section, link, id_text } from '../dom.js';
import { post } from '../api.js';
import { time } from '../components.js';
import { action_form, paged_table, text_value, load_into, succeeded } from '../ui.js';
import { href } from '../router.js';
import { holder_name } from './holder.js';

export const title = 'Account holders';

const k_document_types = ['CC', 'CE', 'NIT', 'PA', 'TI', 'PEP', 'PPT', 'RC'];

function holder_list(context) {
  return paged_table({
    path: '/v1/ledger/account_holders',
    plural: 'account_holders',
    caption: 'Account holders, newest first',
    route: context.route,
    empty: 'No account holders yet.',
    columns: [
      ['Name', (holder) => link(href(`/holders/${holder.id}`), holder_name(holder))],
      ['Document', (holder) => `${holder.person?.document_type ?? ''} ${holder.person?.document_number ?? ''}`.trim()],
      ['Email', (holder) => holder.email ?? '—'],
      ['External id', (holder) => holder.external_id ?? '—'],
      ['State', (holder) => holder.state],
      ['Id', (holder) => id_text(holder.id, href(`/holders/${holder.id}`))],
      ['Created', (holder) => time(holder.inserted_at)],
    ],
  });
}

function create_form(context, list) {
  const required = { required: true };
  return action_form({
    label: 'Add an account holder',
    button: 'Add account holder',
    classes: 'wide',
    fields: [
      h('div', { class: 'grid' },
        field('First name', input('first_name', required)),
        field('Last name', input('last_name', required)),
        field('Document type', select('document_type', k_document_types)),
        field('Document number', input('document_number', required)),
        field('Person type', select('person_type', ['natural', 'legal'])),
        field('Email (optional)', input('email', { type: 'email' })),
        field('External id (optional)', input('external_id')),
        field('Address', input('line_1', required)),
        field('City', input('city', required)),
        field('State', input('state', required)),
        field('Zip code', input('zip_code', required)),
        field('Country', input('country', { value: 'CO', maxlength: '2', ...required }))),
    ],
    paths: { 'person.country_code': 'country', 'address.country': 'country' },
    submit: (form) => {
      const value = (name) => text_value(form, name) ?? '';
      const body = {
        external_id: text_value(form, 'external_id') ?? null,
        person: {
          first_name: value('first_name'), last_name: value('last_name'),
          document_type: form.elements.document_type.value, document_number: value('document_number'),
          person_type: form.elements.person_type.value, country_code: value('country'),
        },
        address: { line_1: value('line_1'), city: value('city'), state: value('state'), zip_code: value('zip_code'), country: value('country') },
      };
      if (text_value(form, 'email')) body.email = text_value(form, 'email');
      return post('/v1/ledger/account_holders', body);
    },
    done: async (holder, form) => {
      form.reset();
      await load_into(list, () => holder_list(context));
      return succeeded('Added ', link(href(`/holders/${holder.id}`), holder_name(holder)), '.');
    },
  });
}

export async function render(context) {
  const list = h('div', { id: 'holder-list' });
  await load_into(list, () => holder_list(context));
  return h('div', {},
    h('h1', {}, 'Account holders'),
    section('Account holders', list),
    section('Add an account holder', create_form(context, list)));
}
