// Money, cardholders: the people cards are issued to; add one.
import { h, field, input, section, link, id_text } from '../dom.js';
import { post } from '../api.js';
import { time } from '../components.js';
import { action_form, paged_table, text_value, load_into, succeeded } from '../ui.js';
import { href } from '../router.js';

export const title = 'Cardholders';

export function cardholder_name(cardholder) {
  return [cardholder.first_name, cardholder.middle_name, cardholder.last_name, cardholder.second_last_name]
    .filter(Boolean).join(' ') || cardholder.id;
}

function cardholder_list(context) {
  return paged_table({
    path: '/v1/cards/cardholders',
    plural: 'cardholders',
    caption: 'Cardholders, newest first',
    route: context.route,
    empty: 'No cardholders yet.',
    columns: [
      ['Name', (cardholder) => link(href(`/cardholders/${cardholder.id}`), cardholder_name(cardholder))],
      ['Email', (cardholder) => cardholder.email ?? '—'],
      ['Phone', (cardholder) => cardholder.phone_number ?? '—'],
      ['Id', (cardholder) => id_text(cardholder.id, href(`/cardholders/${cardholder.id}`))],
      ['Created', (cardholder) => time(cardholder.inserted_at)],
    ],
  });
}

export async function render(context) {
  const list = h('div', { id: 'cardholder-list' });
  const form = action_form({
    label: 'Add a cardholder',
    button: 'Add cardholder',
    classes: 'wide',
    fields: [h('div', { class: 'grid' },
      field('First name', input('first_name', { required: true, maxlength: '100' })),
      field('Last name', input('last_name', { required: true, maxlength: '100' })),
      field('Email (optional)', input('email', { type: 'email' })),
      field('Phone number (optional)', input('phone_number', { type: 'tel', placeholder: '+573001234567' })))],
    submit: (form_element) => {
      const body = { first_name: text_value(form_element, 'first_name') ?? '', last_name: text_value(form_element, 'last_name') ?? '' };
      for (const name of ['email', 'phone_number']) {
        if (text_value(form_element, name)) body[name] = text_value(form_element, name);
      }
      return post('/v1/cards/cardholders', body);
    },
    done: async (cardholder, form_element) => {
      form_element.reset();
      await load_into(list, () => cardholder_list(context));
      return succeeded('Added ', link(href(`/cardholders/${cardholder.id}`), cardholder_name(cardholder)),
        '. Issue a card to them on the Cards page.');
    },
  });
  await load_into(list, () => cardholder_list(context));
  return h('div', {},
    h('h1', {}, 'Cardholders'),
    section('Cardholders', list),
    section('Add a cardholder', form));
}
