// One cardholder: who they are.
import { h, section, details_list, id_text, link } from '../dom.js';
import { get } from '../api.js';
import { time } from '../components.js';
import { cardholder_name } from './cardholders.js';

export const title = 'Cardholder';

export async function render(context) {
  const cardholder = await get(`/v1/cards/cardholders/${encodeURIComponent(context.params.id)}`);
  const address = cardholder.address;
  const document = cardholder.document;
  return h('div', {},
    h('p', { class: 'breadcrumb' }, link('#/cardholders', 'Cardholders'), ' / ', cardholder_name(cardholder)),
    h('h1', {}, cardholder_name(cardholder)),
    section('Cardholder', details_list([
      ['Email', cardholder.email ?? '—'],
      ['Phone number', cardholder.phone_number ?? '—'],
      ['Birthdate', cardholder.birthdate ?? '—'],
      ['Nationality', cardholder.nationality ?? '—'],
      ['Document', document ? Object.values(document).filter(Boolean).join(' ') : '—'],
      ['Address', address ? [address.line_1, address.line_2, address.city, address.state, address.zip_code, address.country].filter(Boolean).join(', ') : '—'],
      ['Id', id_text(cardholder.id)],
      ['Created', time(cardholder.inserted_at)],
    ])));
}
